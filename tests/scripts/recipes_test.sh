#!/usr/bin/env bash
# The scheduler recipes and the one command each host runs: the GitHub Actions workflow and the
# Kubernetes Indexed Job (scripts/recipes/) parse and have the structure they rely on (a matrix over
# self-hosted runner labels with a step running scripts/host-run.sh; completionMode Indexed with
# completions == parallelism == the --shard COUNT, one pod per node, the URL and the password
# from a Secret), pass yamllint and kubectl's offline parse when those are installed, and the
# commands they run work as written. scripts/host-run.sh, driven by a stub kvbench, selects its
# shard, stores a run only when its gate did not fail, stores the first run of a scenario
# against an empty or missing history, refuses a URL with a password without printing it, exits
# 2 on usage errors and passes a SIGTERM on to the kvbench command that runs.
# With a kvbench binary as its argument, host-run.sh also runs against that binary's own gate,
# ingest and history list, with recorded runs (tests/data/runs) standing in for kvbench run
# (nothing is measured, no llama-server starts): on a SQLite history and, where Debian's
# postgresql is installed and the binary has PostgreSQL, on a brand-new database of a private
# PostgreSQL server.
# Usage: tests/scripts/recipes_test.sh [KVBENCH_BINARY]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
test_name=recipes_test
# shellcheck source=tests/scripts/test_lib.sh
source "$root/tests/scripts/test_lib.sh"
real_kvbench=
if (($# > 0)); then
  real_kvbench=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fi
host_run=$root/scripts/host-run.sh
workflow=$root/scripts/recipes/github-actions/kvbench-hosts.yml
job=$root/scripts/recipes/kubernetes/kvbench-indexed-job.yaml
dockerfile=$root/scripts/recipes/kubernetes/Dockerfile
tmp=$(mktemp -d)
cleanup() {
  if ((${#pg_stop[@]} > 0)); then
    "${pg_stop[@]}" >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"  # a host-run.sh that gets past a check it should fail writes only here

# --- the stub kvbench ------------------------------------------------------------------------
# Logs every call to $STUB_CONF/log. run makes RESULTS/run-NAME/run.json (scenario_hash
# fnv1a64:NAME); gate, ingest, run and history list exit with the code in $STUB_CONF/gate.NAME,
# ingest.NAME, run.NAME or list (0 when absent); gate.NAME "empty" exits 2 while the stub's
# history ($STUB_CONF/db, one hash a line, written by ingest) is empty; sleep.NAME makes run
# sleep that long first, logging "run NAME got TERM" when it is stopped.
stub=$tmp/bin/kvbench
mkdir -p "$tmp/bin"
cat >"$stub" <<'STUB'
#!/usr/bin/env bash
set -euo pipefail
conf=${STUB_CONF:?}
printf '%s\n' "$*" >>"$conf/log"
code() { if [[ -f $conf/$1 ]]; then cat "$conf/$1"; else echo 0; fi; }
case "$1" in
  run)
    scenario=$2
    shift 2
    results=
    while (($# > 0)); do
      if [[ $1 == --results ]]; then results=$2; shift 2; else shift; fi
    done
    name=${scenario##*/}
    name=${name%.json}
    if [[ -f $conf/sleep.$name ]]; then
      sleep "$(cat "$conf/sleep.$name")" &
      sleeper=$!
      trap 'echo "run $name got TERM" >>"$conf/log"; kill "$sleeper" 2>/dev/null; exit 143' TERM
      echo "$$" >"$conf/pid.$name"
      echo "run $name started" >>"$conf/log"
      wait "$sleeper"
    fi
    dir=$results/run-$name
    mkdir -p "$dir"
    printf '{\n  "run_id": "id-%s",\n  "scenario": {"name": "%s"},\n' "$name" "$name" \
      >"$dir/run.json"
    printf '  "scenario_hash": "fnv1a64:%s"\n}\n' "$name" >>"$dir/run.json"
    : >"$dir/calls.jsonl"
    exit "$(code "run.$name")"
    ;;
  gate)
    dir=$3
    name=${dir##*/run-}
    c=$(code "gate.$name")
    if [[ $c == empty ]]; then
      if [[ -s $conf/db ]]; then exit 0; fi
      echo "error: $5: the history is empty" >&2
      exit 2
    fi
    echo "gate $name: exit $c"
    exit "$c"
    ;;
  ingest)
    dir=$2
    name=${dir##*/run-}
    c=$(code "ingest.$name")
    if [[ $c == 0 ]]; then echo "fnv1a64:$name" >>"$conf/db"; fi
    exit "$c"
    ;;
  plan)
    # A scenario whose name holds "trace" replays a trace: its plan's calls name trace requests.
    name=${2##*/}
    # A trace's plan is long (more than a pipe holds): the request comes first.
    if [[ $name == *trace* ]]; then
      echo '{"blocks": [{"calls": [{"request": 0}'
      for ((k = 1; k < 4000; k++)); do echo ", {\"request\": $k, \"kind\": \"timed\"}"; done
      echo ']}]}'
    else
      echo '{}'
    fi
    ;;
  history)
    c=$(code list)
    if [[ $c != 0 ]]; then echo "error: cannot reach the history" >&2; exit "$c"; fi
    printf 'session\tscenario\tscenario_hash\n'
    n=0
    if [[ -f $conf/db ]]; then
      while read -r h; do n=$((n + 1)); printf '%s\t%s\t%s\n' "$n" "${h#*:}" "$h"; done <"$conf/db"
    fi
    ;;
  *) echo "stub kvbench: unexpected $1" >&2; exit 99 ;;
esac
STUB
chmod +x "$stub"

case_n=0
# A fresh stub state and results folder for the next case.
new_case() {
  case_n=$((case_n + 1))
  conf=$tmp/case$case_n
  mkdir -p "$conf"
  : >"$conf/log"
  results=$conf/results
}
# Runs host-run.sh with the stub; its exit code goes to $rc, stdout and stderr to $conf/out.
hr() {
  rc=0
  STUB_CONF=$conf KVBENCH=$stub "$host_run" "$@" >"$conf/out" 2>&1 || rc=$?
}
# The scenarios the stub ran, gated and stored, one a line.
ran() { sed -n 's/^run \([^ ]*\) --results.*/\1/p' "$conf/log" | tr '\n' ' '; }
gated() { grep -c '^gate ' "$conf/log" || true; }
stored() { sed -n 's/^ingest .*\/run-\([^ ]*\) --history.*/\1/p' "$conf/log" | tr '\n' ' '; }
rc_is() { [[ $rc == "$1" ]]; }
log_empty() { [[ ! -s $conf/log ]]; }
ran_is() { [[ "$(ran)" == "$1" ]]; }
stored_is() { [[ "$(stored)" == "$1" ]]; }
out_has() { grep -qF -- "$1" "$conf/out"; }
out_lacks() { ! grep -qF -- "$1" "$conf/out"; }

# --- host-run.sh -----------------------------------------------------------------------------

check "bash -n scripts/host-run.sh" bash -n "$host_run"
if command -v shellcheck >/dev/null; then
  check "shellcheck scripts/host-run.sh" shellcheck "$host_run"
fi

new_case
hr --help
check "--help exits 0" rc_is 0
check "--help prints the usage" out_has "Usage: host-run.sh --history URL"

# Usage errors: exit 2, nothing run.
for args in "" "quickstart" "--history" "--history h.sqlite" "--history h.sqlite --bogus x" \
  "--history h.sqlite --shard 2/2 x" "--history h.sqlite --shard 1/0 x" \
  "--history h.sqlite --shard one/2 x" "--history h.sqlite --shard 1 x" \
  "--history h.sqlite --label novalue x" "--history h.sqlite --label =v x"; do
  new_case
  read -r -a argv <<<"$args"
  hr "${argv[@]}"
  if rc_is 2 && log_empty && out_has "error:"; then
    ok "usage error exits 2 and runs nothing: host-run.sh $args"
  else
    fail "usage error: host-run.sh $args exited $rc, kvbench calls: $(wc -l <"$conf/log")"
  fi
done
new_case
rc=0
env -u JOB_COMPLETION_INDEX STUB_CONF="$conf" KVBENCH="$stub" "$host_run" --history h.sqlite \
  --shard auto/2 x >"$conf/out" 2>&1 || rc=$?
check "--shard auto/COUNT without JOB_COMPLETION_INDEX exits 2" rc_is 2
new_case
rc=0
STUB_CONF=$conf KVBENCH=$tmp/no-such-kvbench "$host_run" --history h.sqlite x >"$conf/out" 2>&1 ||
  rc=$?
check "a kvbench that is not there exits 2" rc_is 2

# A URL with a password: refused with exit 2, the password never printed.
for form in user:password@ 'user:password@ with @ in the password' '?password=' '?PASSWORD='; do
  case "$form" in
    user:password@) url='postgresql://alice:Sup3rS3cret@db.example:5432/kv' ;;
    *@*) url='postgres://alice:Sup3r@S3cret@db.example/kv' ;;
    '?password=') url='postgresql://alice@db.example/kv?sslmode=require&password=Sup3rS3cret' ;;
    *) url='postgresql://alice@db.example:5432/kv?PASSWORD=Sup3rS3cret&sslmode=require' ;;
  esac
  new_case
  hr --history "$url" quickstart
  if rc_is 2 && log_empty && out_lacks Sup3r && out_lacks S3cret && out_has PGPASSWORD &&
    out_has alice@db.example; then
    ok "a URL with a password ($form) is refused with exit 2, the password not printed"
  else
    fail "a URL with a password ($form): exit $rc, runs: $(wc -l <"$conf/log"), the password" \
      "printed: $(grep -c S3cret "$conf/out")"
  fi
done

# Shards: scenario j belongs to shard j % COUNT.
new_case
hr --history "$conf/h.sqlite" --results "$results" --shard 1/2 s0 s1 s2 s3 s4
check "--shard 1/2 of 5 exits 0" rc_is 0
check "--shard 1/2 of 5 runs s1 and s3 only (ran: $(ran))" ran_is "s1 s3 "
check "--shard 1/2 of 5 stores s1 and s3 (stored: $(stored))" stored_is "s1 s3 "

check "one summary line per scenario on stderr" \
  test "$(grep -c '^host-run: s[0-9] \[#' "$conf/out")" = 2
runs_made=$(find "$results" -name run.json | wc -l)
folders=$(find "$results" -mindepth 1 -maxdepth 1 -type d | wc -l)
check "each scenario runs into a new folder of --results ($folders folders, $runs_made runs)" \
  test "$folders" = 2 -a "$runs_made" = 2


new_case
hr --history "$conf/h.sqlite" --results "$results" --shard 0/2 s0 trace-a s2
check "--shard 0/2 runs a trace scenario on every host (ran: $(ran))" ran_is "s0 trace-a s2 "
check "--shard 0/2 passes its shard to the trace scenario" grep -q -- '^run trace-a .*--trace-shard 0/2' "$conf/log"
new_case
hr --history "$conf/h.sqlite" --results "$results" s0 trace-a
check "one host replays a trace whole (no --trace-shard)" bash -c "! grep -q -- '--trace-shard' '$conf/log'"
new_case
rc=0
JOB_COMPLETION_INDEX=2 STUB_CONF=$conf KVBENCH=$stub "$host_run" --history "$conf/h.sqlite" \
  --results "$results" --shard auto/3 s0 s1 s2 s3 s4 s5 s6 >"$conf/out" 2>&1 || rc=$?
check "--shard auto/3 with JOB_COMPLETION_INDEX=2 runs s2 and s5 (ran: $(ran))" ran_is "s2 s5 "

# A Slurm array task: its index counted from the array's first in the array's steps, the count
# from SLURM_ARRAY_TASK_COUNT where --shard gives none.
slurm_hr() {  # slurm_hr ID MIN MAX STEP COUNT HOST-RUN-ARGS...
  new_case
  rc=0
  env -u JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID="$1" SLURM_ARRAY_TASK_MIN="$2" \
    SLURM_ARRAY_TASK_MAX="$3" SLURM_ARRAY_TASK_STEP="$4" SLURM_ARRAY_TASK_COUNT="$5" \
    STUB_CONF="$conf" KVBENCH="$stub" "$host_run" --history "$conf/h.sqlite" \
    --results "$results" "${@:6}" >"$conf/out" 2>&1 || rc=$?
}
slurm_hr 1 0 2 1 3 --shard auto s0 s1 s2 s3 s4 s5 s6
check "--shard auto in task 1 of a Slurm array 0-2 runs s1 and s4 (ran: $(ran))" ran_is "s1 s4 "
slurm_hr 3 1 3 1 3 --shard auto/3 s0 s1 s2 s3 s4 s5 s6
check "--shard auto/3 in task 3 of a Slurm array 1-3 runs s2 and s5 (ran: $(ran))" \
  ran_is "s2 s5 "
slurm_hr 4 0 4 2 3 --shard auto s0 s1 s2 s3 s4 s5 s6
check "--shard auto in task 4 of a Slurm array 0-4:2 runs s2 and s5 (ran: $(ran))" \
  ran_is "s2 s5 "
slurm_hr 1 0 2 1 3 --shard auto/2 s0 s1 s2
check "--shard auto/2 in an array of 3 tasks exits 2, runs nothing" \
  bash -c "[[ $rc == 2 ]] && [[ ! -s '$conf/log' ]] && grep -q 'has 3 tasks' '$conf/out'"
slurm_hr 5 0 9 1 3 --shard auto s0 s1 s2
check "--shard auto in an array that is not evenly spaced exits 2, runs nothing" \
  bash -c "[[ $rc == 2 ]] && [[ ! -s '$conf/log' ]] && grep -q 'not evenly spaced' '$conf/out'"
new_case
rc=0
env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID STUB_CONF="$conf" KVBENCH="$stub" \
  "$host_run" --history h.sqlite --shard auto x >"$conf/out" 2>&1 || rc=$?
check "--shard auto outside a Slurm array exits 2" \
  bash -c "[[ $rc == 2 ]] && grep -q 'SLURM_ARRAY_TASK_ID is not set' '$conf/out'"
new_case
rc=0
JOB_COMPLETION_INDEX=0 SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1 \
  SLURM_ARRAY_TASK_COUNT=2 STUB_CONF=$conf KVBENCH=$stub "$host_run" --history "$conf/h.sqlite" \
  --results "$results" --shard auto/2 s0 s1 s2 >"$conf/out" 2>&1 || rc=$?
check "JOB_COMPLETION_INDEX comes before a Slurm task's index (ran: $(ran))" ran_is "s0 s2 "

new_case
hr --history "$conf/h.sqlite" --results "$results" --label host=box-1 --label commit=abc s0 s1 s2
check "the default shard 0/1 runs every scenario (ran: $(ran))" ran_is "s0 s1 s2 "
check "--label NAME=VALUE goes to kvbench run" \
  grep -q -- '^run s0 --results .* --label host=box-1 --label commit=abc -q$' "$conf/log"
check "the gate runs with --on-inconclusive warn against the history" \
  grep -q -- "^gate --run .*/run-s0 --history $conf/h.sqlite --on-inconclusive warn$" "$conf/log"

new_case
hr --history "$conf/h.sqlite" --results "$results" --shard 3/4 s0 s1
check "a shard with no scenario exits 0 and runs nothing" test "$rc" = 0 -a "$(ran)" = ""

# A failing gate: that run is not stored and is kept; exit 1.
new_case
echo 1 >"$conf/gate.b"
hr --history "$conf/h.sqlite" --results "$results" a b c
check "a failed gate exits 1" rc_is 1
check "a failed gate's run is not stored, the others are (stored: $(stored))" stored_is "a c "
check "a failed gate's run folder is kept" test -n "$(find "$results" -path '*/run-b/run.json')"
check "a failed gate is named in the summary" out_has "b [#1]: gate FAILED"

# An inconclusive gate (exit 3 despite warn) is not a failure: stored.
new_case
echo 3 >"$conf/gate.a"
hr --history "$conf/h.sqlite" --results "$results" a
check "an inconclusive gate stores the run and exits 0" test "$rc" = 0 -a "$(stored)" = "a "

# The first runs: a SQLite history not made yet, then an empty PostgreSQL history.
new_case
echo empty >"$conf/gate.a"
echo empty >"$conf/gate.b"
hr --history "$conf/new.sqlite" --results "$results" a b
check "a missing history: the first run is stored and the script exits 0 (exit $rc)" rc_is 0
check "a missing history: both runs stored (stored: $(stored))" stored_is "a b "
check "a missing history: the summary says there was nothing to compare with" \
  out_has "nothing to compare with yet"
new_case
echo empty >"$conf/gate.a"
hr --history "postgresql://kvbench@db.example:5432/kv" --results "$results" a
check "an empty PostgreSQL history: the first run is stored (exit $rc, stored: $(stored))" \
  test "$rc" = 0 -a "$(stored)" = "a "
check "the history list is asked when the gate exits 2" \
  grep -q '^history list postgresql://kvbench@db.example:5432/kv --format tsv$' "$conf/log"

# A gate's exit 2 when the history has sessions of the scenario, or cannot be listed: an error.
new_case
echo "fnv1a64:a" >"$conf/db"
echo 2 >"$conf/gate.a"
hr --history "postgresql://kvbench@db.example:5432/kv" --results "$results" a
check "gate exit 2 with sessions of the scenario in the history: exit 2, not stored" \
  test "$rc" = 2 -a "$(stored)" = ""
check "gate exit 2 with sessions of the scenario: the summary says so" \
  out_has "has sessions of this scenario"
new_case
echo "fnv1a64:other" >"$conf/db"
echo 2 >"$conf/gate.a"
echo 1 >"$conf/list"
hr --history "postgresql://kvbench@db.example:5432/kv" --results "$results" a
check "gate exit 2 and the history cannot be listed: exit 2, not stored" \
  test "$rc" = 2 -a "$(stored)" = ""

# Failures of kvbench itself: the worst code, at least 2; a failed gate wins.
new_case
echo 3 >"$conf/run.a"
hr --history "$conf/h.sqlite" --results "$results" a b
check "a run short of its plan (exit 3): neither gated nor stored, the others go on; exit 3" \
  test "$rc" = 3 -a "$(stored)" = "b " -a "$(gated)" = 1
new_case
echo 1 >"$conf/ingest.a"
hr --history "$conf/h.sqlite" --results "$results" a
check "a database error while storing (ingest exit 1) exits 2, not 1" rc_is 2
new_case
echo 1 >"$conf/gate.a"
echo 1 >"$conf/run.b"
hr --history "$conf/h.sqlite" --results "$results" a b
check "a failed gate and a failed run: exit 1 (the regression is the news)" rc_is 1

# A SIGTERM reaches the running kvbench command; no further scenario starts.
new_case
echo 20 >"$conf/sleep.slow"
STUB_CONF=$conf KVBENCH=$stub "$host_run" --history "$conf/h.sqlite" --results "$results" \
  slow after >"$conf/out" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q '^run slow started' "$conf/log" && break
  sleep 0.1
done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
check "SIGTERM: host-run.sh exits 143 (exit $rc)" rc_is 143
check "SIGTERM: passed on to the kvbench command that runs" grep -q '^run slow got TERM' "$conf/log"
check "SIGTERM: no further scenario starts, nothing stored" \
  test "$(ran)" = "slow " -a "$(stored)" = ""
# A stub kvbench that did not get the signal must not outlive the test.
if [[ -f $conf/pid.slow ]] && kill -0 "$(cat "$conf/pid.slow")" 2>/dev/null; then
  kill -TERM "$(cat "$conf/pid.slow")" 2>/dev/null || true
fi

# --- host-run.sh with kvbench's own gate, ingest and history list ------------------------------

if [[ -n $real_kvbench ]]; then
  # kvbench run replaced by a copy of a recorded run (tests/data/runs/NAME; "broken" makes a run
  # folder whose run.json is no run's); every other command is the real kvbench.
  wrapper=$tmp/bin/kvbench-recorded
  cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
set -euo pipefail
if [[ \$1 == run ]]; then
  scenario=\$2
  shift 2
  while ((\$# > 0)); do
    if [[ \$1 == --results ]]; then results=\$2; shift 2; else shift; fi
  done
  mkdir -p "\$results/\$scenario"
  if [[ \$scenario == broken ]]; then
    echo '{}' >"\$results/\$scenario/run.json"
    : >"\$results/\$scenario/calls.jsonl"
  else
    cp "$root/tests/data/runs/\$scenario/run.json" "$root/tests/data/runs/\$scenario/calls.jsonl" \\
      "\$results/\$scenario/"
  fi
  exit 0
fi
exec "$real_kvbench" "\$@"
WRAP
  chmod +x "$wrapper"
  sessions() { "$real_kvbench" history list "$conf/h.sqlite" --format tsv | tail -n +2 | wc -l; }
  new_case
  rc=0
  KVBENCH=$wrapper "$host_run" --history "$conf/h.sqlite" --results "$results" \
    quickstart prefix-reuse-tiny >"$conf/out" 2>&1 || rc=$?
  check "kvbench: a history not made yet: both runs stored, exit 0 (exit $rc)" \
    test "$rc" = 0 -a "$(sessions 2>/dev/null)" = 2
  check "kvbench: the first run had nothing to compare with" \
    out_has "quickstart [#0]: nothing to compare with yet"
  check "kvbench: the second scenario's gate was inconclusive (no session of it yet), stored" \
    out_has "prefix-reuse-tiny [#1]: gate inconclusive (a warning), stored"
  rc=0
  KVBENCH=$wrapper "$host_run" --history "$conf/h.sqlite" --results "$results" \
    quickstart >"$conf/out" 2>&1 || rc=$?
  check "kvbench: the same run again: exit 0, still one session of it (exit $rc)" \
    test "$rc" = 0 -a "$(sessions 2>/dev/null)" = 2
  rc=0
  KVBENCH=$wrapper "$host_run" --history "$conf/h.sqlite" --results "$results" \
    broken >"$conf/out" 2>&1 || rc=$?
  check "kvbench: a gate's exit 2 for a broken run is an error, not a first run (exit $rc)" \
    test "$rc" = 2 -a "$(sessions 2>/dev/null)" = 2

  # kvbench history report: the sessions of given run labels, host by host. Three recorded runs
  # given the labels a Slurm array's tasks carry (two of job 7 on hosts a and b, one of job 8).
  new_case
  labelled() {  # labelled RUN HOST JOB: a copy of the recorded RUN with those run labels
    mkdir -p "$conf/runs/$1"
    cp "$root/tests/data/runs/$1/calls.jsonl" "$conf/runs/$1/"
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
j["labels"] = {"host": sys.argv[3], "slurm_job": sys.argv[4]}
json.dump(j, open(sys.argv[2], "w"))' "$root/tests/data/runs/$1/run.json" \
      "$conf/runs/$1/run.json" "$2" "$3"
  }
  labelled quickstart a 7
  labelled prefix-reuse-tiny b 7
  labelled ctx-sweep-small a 8
  "$real_kvbench" ingest "$conf"/runs/* --history "$conf/r.sqlite" >/dev/null
  "$real_kvbench" history report "$conf/r.sqlite" --label slurm_job=7 >"$conf/out" 2>&1 ||
    rc=$?
  check "history report --label slurm_job=7: the two runs of job 7 under hosts a and b" \
    bash -c "grep -q '^## host a ' '$conf/out' && grep -q '^## host b ' '$conf/out' &&
      grep -q 'slurm_job=7' '$conf/out' && ! grep -q 'slurm_job=8' '$conf/out' &&
      grep -q 'never pooled' '$conf/out'"
  groups=$("$real_kvbench" history report "$conf/r.sqlite" --label slurm_job=7 --label host=a \
    --format json | python3 -c 'import json, sys
print(sorted({(r["group"], r["scenario"]) for r in json.load(sys.stdin)}))')
  check "history report with two labels keeps the sessions that carry both ($groups)" \
    test "$groups" = "[('a', 'quickstart')]"
  rc=0
  "$real_kvbench" history report "$conf/r.sqlite" --label slurm_job=9 >"$conf/out" 2>&1 || rc=$?
  check "history report: no session with the labels exits 1 and says so (exit $rc)" \
    bash -c "[[ $rc == 1 ]] && grep -q 'no stored session for sessions labelled slurm_job=9' \
      '$conf/out'"
  rc=0
  "$real_kvbench" history report "$conf/r.sqlite" --label slurm_job >"$conf/out" 2>&1 || rc=$?
  check "history report: a label without =VALUE exits 2 (exit $rc)" test "$rc" = 2

  # A brand-new PostgreSQL database (a private server, trust authentication), where the binary
  # has PostgreSQL and Debian's postgresql is installed.
  if [[ -z $(postgres_bin) ]]; then
    echo "recipes_test: note: no PostgreSQL server (Debian package postgresql); its case not run"
  elif "$real_kvbench" history list postgresql://kvbench@127.0.0.1:1/kvbench 2>&1 |
    grep -q "without PostgreSQL"; then
    echo "recipes_test: note: this kvbench has no PostgreSQL; its case not run"
  else
    pg=$tmp/pg
    if start_postgres "$pg"; then
      url=$pg_url
      pg_sessions() { "$real_kvbench" history list "$url" --format tsv | tail -n +2 | wc -l; }
      new_case
      rc=0
      KVBENCH=$wrapper PGPASSWORD=unused "$host_run" --history "$url" --results "$results" \
        quickstart prefix-reuse-tiny >"$conf/out" 2>&1 || rc=$?
      check "kvbench, PostgreSQL: a brand-new database: both runs stored, exit 0 (exit $rc)" \
        test "$rc" = 0 -a "$(pg_sessions 2>/dev/null)" = 2
      check "kvbench, PostgreSQL: the first run had nothing to compare with" \
        out_has "quickstart [#0]: nothing to compare with yet"
      rc=0
      KVBENCH=$wrapper "$host_run" --history "$url" --results "$results" quickstart \
        >"$conf/out" 2>&1 || rc=$?
      check "kvbench, PostgreSQL: the same run again: exit 0, still one session (exit $rc)" \
        test "$rc" = 0 -a "$(pg_sessions 2>/dev/null)" = 2
    else
      fail "could not start a PostgreSQL server: $(tail -n 3 "$pg/initdb.log" "$pg/log" 2>&1)"
    fi
  fi
fi

# --- the Slurm recipe's commands, as the READMEs give them -----------------------------------
# Each submit.sh command of scripts/README.md runs as written (the shared folder moved into this
# test's folder) with a stub sbatch: exit 0, an array of the right size, and the merge job after
# it with afterok and --kill-on-invalid-dep=yes. Slurm itself runs in tests/scripts/slurm_test.sh.
sbatch_stub=$tmp/bin/sbatch
cat >"$sbatch_stub" <<'STUB'
#!/usr/bin/env bash
n=$(($(wc -l <"$SBATCH_LOG" 2>/dev/null || echo 0) + 100))
printf '%s\n' "$*" >>"$SBATCH_LOG"
echo "$n"
STUB
chmod +x "$sbatch_stub"
submit_commands=$(python3 - "$root/scripts/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for block in re.findall(r"```sh\n(.*?)```", text, re.S):
    joined = re.sub(r"\\\n\s*", " ", block)
    for line in joined.splitlines():
        if line.startswith("scripts/recipes/slurm/submit.sh"):
            print(line)
PY
)
check "scripts/README.md gives the Slurm recipe's commands" test -n "$submit_commands"
while read -r command; do
  [[ -n $command ]] || continue
  new_case
  command=${command//\/shared\/kvbench/$conf/shared}
  rc=0
  (cd "$root" && SBATCH=$sbatch_stub SBATCH_LOG=$conf/sbatch.log KVBENCH=$stub STUB_CONF=$conf \
    KVBENCH_SCRIPTS=$root/scripts bash -c "$command") >"$conf/out" 2>&1 || rc=$?
  tasks=$(sed -n 's/^submit: array job [0-9]*: \([0-9]*\) tasks.*/\1/p' "$conf/out")
  first=$(sed -n 1p "$conf/sbatch.log" 2>/dev/null)
  second=$(sed -n 2p "$conf/sbatch.log" 2>/dev/null)
  if [[ $rc == 0 && -n $tasks && $first == *"--array=0-$((tasks - 1)) "*"--exclusive "* &&
    $first == *kvbench-array.sbatch* && $second == *"--dependency=afterok:100 "* &&
    $second == *"--kill-on-invalid-dep=yes "*kvbench-merge.sbatch ]]; then
    ok "the README's Slurm command submits an array of $tasks and its merge: ${command:0:60}..."
  else
    fail "the README's Slurm command: exit $rc: $(cat "$conf/out") sbatch: $first / $second"
  fi
done <<<"$submit_commands"

# --- the recipes -----------------------------------------------------------------------------

if python3 -c 'import yaml' 2>/dev/null; then
  # Checks both files' structure; writes the commands they run, with their environment, to
  # $tmp/recipes for the checks below.
  mkdir -p "$tmp/recipes"
  set +e
  python3 - "$workflow" "$job" "$tmp/recipes" <<'PY'
import json, re, shlex, sys
import yaml

workflow_path, job_path, out = sys.argv[1:4]
failures = 0
passes = 0


def check(cond, what):
    global failures, passes
    if cond:
        print(f"recipes_test: ok: {what}")
        passes += 1
    else:
        print(f"recipes_test: FAIL: {what}", file=sys.stderr)
        failures += 1
    return cond


# The GitHub Actions workflow.
wf = yaml.safe_load(open(workflow_path))
on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
check(isinstance(on, dict) and {"workflow_dispatch", "schedule", "push"} <= set(on),
      "workflow: runs on workflow_dispatch, schedule and push")
jobs = wf.get("jobs") or {}
job = next(iter(jobs.values()), {})
strategy = job.get("strategy") or {}
include = (strategy.get("matrix") or {}).get("include") or []
runners = [e.get("runner") for e in include]
check(len(include) >= 2 and all(isinstance(r, list) and "self-hosted" in r and len(r) >= 2
                                for r in runners),
      f"workflow: a matrix over self-hosted runner labels ({len(include)} hosts)")
names = [e.get("name") for e in include]
check(all(names) and len(set(names)) == len(names), "workflow: each host has a name of its own")
check(job.get("runs-on") == "${{ matrix.runner }}", "workflow: runs-on: ${{ matrix.runner }}")
check(strategy.get("fail-fast") is False, "workflow: fail-fast false")
conc = job.get("concurrency")
group = conc.get("group") if isinstance(conc, dict) else conc
check(isinstance(group, str) and "matrix." in group, "workflow: one concurrency group per host")
steps = job.get("steps") or []


def index(pred):
    return next((i for i, s in enumerate(steps) if pred(s)), None)


def runs(text):
    return lambda s: text in (s.get("run") or "")


def uses(prefix):
    return lambda s: str(s.get("uses", "")).startswith(prefix)


order = [index(uses("actions/checkout@")), index(runs("scripts/setup-deps.sh --for run")),
         index(runs("scripts/get-llama-server.sh")), index(runs("scripts/build.sh")),
         index(runs("scripts/host-run.sh")), index(uses("actions/upload-artifact@v4"))]
check(None not in order and order == sorted(order),
      "workflow: checkout, setup-deps --for run, get-llama-server, build, host-run.sh, upload")
if None not in order:
    step = steps[order[4]]
    env = step.get("env") or {}
    check("secrets.KVBENCH_HISTORY_URL" in str(env.get("KVBENCH_HISTORY", "")) and
          '--history "$KVBENCH_HISTORY"' in step["run"],
          "workflow: host-run.sh --history \"$KVBENCH_HISTORY\" from secrets.KVBENCH_HISTORY_URL")
    check("secrets.KVBENCH_PGPASSWORD" in str(env.get("PGPASSWORD", "")),
          "workflow: PGPASSWORD from secrets.KVBENCH_PGPASSWORD")
    others = json.dumps([wf.get("env"), job.get("env")] +
                        [s.get("env") for i, s in enumerate(steps) if i != order[4]])
    check("secrets." not in others and
          all("secrets." not in (s.get("run") or "") for s in steps),
          "workflow: the secrets only in the environment of the step that needs them")
    upload = steps[order[5]]
    check(upload.get("if") == "always()" and "results" in str((upload.get("with") or {})
                                                             .get("path", "")),
          "workflow: the run folders uploaded with if: always()")

    # The step's script and environment as one scheduled run on the first host sees them.
    def expression(m):
        expr = m.group(1).strip()
        default = re.fullmatch(r"inputs\.\w+ \|\| '([^']*)'", expr)
        values = {"secrets.KVBENCH_HISTORY_URL": "HISTORY", "secrets.KVBENCH_PGPASSWORD": "pw",
                  "github.sha": "abc123", "matrix.name": names[0]}
        if default:
            return default.group(1)
        if expr in values:
            return values[expr]
        check(False, f"workflow: an expression the test knows: {expr}")
        return ""

    subst = lambda text: re.sub(r"\$\{\{(.*?)\}\}", expression, str(text))
    with open(f"{out}/workflow-step.sh", "w") as f:
        f.write(subst(step["run"]))
    with open(f"{out}/workflow-step.env", "w") as f:
        for k, v in env.items():
            f.write(f"{k}={subst(v)}\n")
    with open(f"{out}/workflow-host", "w") as f:
        f.write(names[0])

# The Kubernetes Indexed Job.
docs = [d for d in yaml.safe_load_all(open(job_path)) if d]
job = next((d for d in docs if d.get("kind") == "Job"), {})
check(job.get("apiVersion") == "batch/v1", "job: a batch/v1 Job")
spec = job.get("spec") or {}
n = spec.get("completions")
check(spec.get("completionMode") == "Indexed", "job: completionMode Indexed")
check(isinstance(n, int) and n >= 1 and spec.get("parallelism") == n,
      f"job: completions == parallelism ({n})")
check(isinstance(spec.get("backoffLimit"), int), "job: a backoffLimit")
template = spec.get("template") or {}
labels = (template.get("metadata") or {}).get("labels") or {}
pod = template.get("spec") or {}
check(pod.get("restartPolicy") == "Never", "job: restartPolicy Never")
terms = ((pod.get("affinity") or {}).get("podAntiAffinity") or {}).get(
    "requiredDuringSchedulingIgnoredDuringExecution") or []
check(any(t.get("topologyKey") == "kubernetes.io/hostname" and
          ((t.get("labelSelector") or {}).get("matchLabels") or {}) and
          ((t.get("labelSelector") or {}).get("matchLabels") or {}).items() <= labels.items()
          for t in terms),
      "job: required pod anti-affinity on kubernetes.io/hostname, matching the job's pods")
containers = pod.get("containers") or [{}]
c = containers[0]
argv = (c.get("command") or []) + (c.get("args") or [])
script = argv[2] if len(argv) == 3 and argv[1] == "-c" else None
check(script is not None, "job: the container runs a shell script (bash -c)")
script = script or " ".join(argv)
check("host-run.sh" in script, "job: the container runs host-run.sh")
m = re.search(r'--shard "\$JOB_COMPLETION_INDEX/(\d+)"', script)
check(m is not None and int(m.group(1)) == n,
      f"job: --shard \"$JOB_COMPLETION_INDEX/N\" with N == completions")
check('--history "$KVBENCH_HISTORY"' in script, "job: --history \"$KVBENCH_HISTORY\"")
check("node=$NODE_NAME" in script, "job: --label node=$NODE_NAME")
env = {e.get("name"): e.get("valueFrom") or {} for e in c.get("env") or []}
check((env.get("NODE_NAME", {}).get("fieldRef") or {}).get("fieldPath") == "spec.nodeName",
      "job: NODE_NAME from the downward API (spec.nodeName)")
check("secretKeyRef" in env.get("KVBENCH_HISTORY", {}) and
      "secretKeyRef" in env.get("PGPASSWORD", {}),
      "job: KVBENCH_HISTORY and PGPASSWORD from a Secret")
check(bool(c.get("image")) and bool((c.get("resources") or {}).get("requests")),
      "job: an image and resource requests")
tokens = shlex.split(script.replace("\\\n", " "))
tokens = tokens[tokens.index("exec") + 1:] if "exec" in tokens else tokens
results = tokens[tokens.index("--results") + 1] if "--results" in tokens else None
volumes = {v.get("name"): v for v in pod.get("volumes") or []}
mounts = {m.get("mountPath"): m.get("name") for m in c.get("volumeMounts") or []}
check(results is not None and "emptyDir" in volumes.get(mounts.get(results), {}),
      f"job: --results {results} is an emptyDir")
# The scenarios, and those the pod of index 1 runs.
positional, i = [], 1
while i < len(tokens):
    if tokens[i] in ("--history", "--shard", "--results", "--label"):
        i += 2
        continue
    positional.append(tokens[i])
    i += 1
check(len(positional) >= 1, f"job: a scenario list ({len(positional)} scenarios)")
with open(f"{out}/job-command.sh", "w") as f:
    f.write(script)
with open(f"{out}/job-results", "w") as f:
    f.write(results or "")
with open(f"{out}/job-expected-1", "w") as f:
    f.write("".join(s + " " for j, s in enumerate(positional) if isinstance(n, int) and j % n == 1))
with open(f"{out}/counts", "w") as f:
    f.write(f"{passes} {failures}\n")
sys.exit(1 if failures else 0)
PY
  py_rc=$?
  set -e
  if [[ -f $tmp/recipes/counts ]]; then
    read -r py_passed py_failed <"$tmp/recipes/counts"
    passed=$((passed + py_passed))
    failed=$((failed + py_failed))
  fi
  if [[ $py_rc != 0 && ! -f $tmp/recipes/counts ]]; then
    fail "the recipes could not be read (see above)"
  fi

  # The workflow's host-run step as the runner runs it (bash -e), from a checkout holding the
  # script, with build/kvbench the stub.
  if [[ -f $tmp/recipes/workflow-step.sh ]]; then
    new_case
    mkdir -p "$conf/checkout/scripts" "$conf/checkout/build"
    cp "$host_run" "$conf/checkout/scripts/"
    ln -s "$stub" "$conf/checkout/build/kvbench"
    mapfile -t step_env <"$tmp/recipes/workflow-step.env"
    step_env=("${step_env[@]/#KVBENCH_HISTORY=HISTORY/KVBENCH_HISTORY=$conf/h.sqlite}")
    rc=0
    (cd "$conf/checkout" && env "${step_env[@]}" STUB_CONF="$conf" \
      bash --noprofile --norc -eo pipefail "$tmp/recipes/workflow-step.sh") >"$conf/out" 2>&1 ||
      rc=$?
    host=$(cat "$tmp/recipes/workflow-host")
    check "workflow: the host-run step exits 0 (exit $rc)" rc_is 0
    check "workflow: the step runs its scenarios (ran: $(ran))" test -n "$(ran)"
    check "workflow: every run labelled with the commit and the host" \
      test "$(grep -c "^run .* --label commit=abc123 --label host=$host -q$" "$conf/log")" = \
      "$(grep -c '^run ' "$conf/log")"
    check "workflow: every run stored (stored: $(stored))" test "$(stored)" = "$(ran)"
    check "workflow: the run folders land in results/, which the upload keeps" \
      test -n "$(find "$conf/checkout/results" -name run.json)"
  fi

  # The Job's command as the pod of index 1 runs it, with host-run.sh from the source tree.
  if [[ -f $tmp/recipes/job-command.sh ]]; then
    check "job: bash -n on the container's script" bash -n "$tmp/recipes/job-command.sh"
    new_case
    job_results=$(cat "$tmp/recipes/job-results")
    sed -e "s|/usr/share/kvbench/scripts/host-run.sh|$host_run|" \
      -e "s|--results $job_results|--results $results|" \
      "$tmp/recipes/job-command.sh" >"$conf/job-command.sh"
    rc=0
    env JOB_COMPLETION_INDEX=1 NODE_NAME=node-b KVBENCH_HISTORY="$conf/h.sqlite" PGPASSWORD=pw \
      STUB_CONF="$conf" KVBENCH="$stub" bash "$conf/job-command.sh" >"$conf/out" 2>&1 || rc=$?
    check "job: the pod of index 1 exits 0 (exit $rc)" rc_is 0
    check "job: the pod of index 1 runs its shard (ran: $(ran))" \
      test "$(ran)" = "$(cat "$tmp/recipes/job-expected-1")" -a -n "$(ran)"
    check "job: its runs are labelled with the node" \
      grep -q -- '--label node=node-b -q$' "$conf/log"
    check "job: the script the pod runs is where the package installs it" \
      grep -q 'exec /usr/share/kvbench/scripts/host-run.sh' "$tmp/recipes/job-command.sh"
  fi
else
  fail "python3 with yaml (Debian package python3-yaml) is needed to check the recipes"
fi

# shellcheck disable=SC2016 # the scripts' own arguments, expanded by the inner bash
check "Dockerfile: Debian 12, setup-deps --for run, llama-server, build, cpack, the package" \
  bash -c 'grep -q "^FROM debian:bookworm" "$1" && grep -q "setup-deps.sh --for run" "$1" &&
    grep -q "get-llama-server.sh" "$1" && grep -q "cpack" "$1" &&
    grep -q "apt-get install .*kvbench_\*.deb\|/tmp/kvbench_\*.deb" "$1" &&
    grep -q "test -x /usr/share/kvbench/scripts/host-run.sh" "$1"' _ "$dockerfile"

if command -v yamllint >/dev/null; then
  check "yamllint (relaxed, lines up to 100) on both recipes" \
    yamllint -s -d '{extends: relaxed, rules: {line-length: {max: 100}}}' "$workflow" "$job"
else
  echo "recipes_test: note: yamllint not installed (Debian package yamllint); not run"
fi
if command -v kubectl >/dev/null; then
  # --local: parsed and printed by kubectl without a cluster (create --dry-run=client still asks
  # a server which kinds it has).
  # shellcheck disable=SC2016 # the script's own arguments, expanded by the inner bash
  check "kubectl reads the Job offline (annotate --local)" bash -c \
    'HOME=$2 kubectl annotate --local -f "$1" kvbench/checked=yes -o yaml 2>&1 |
       grep -q "completionMode: Indexed"' _ "$job" "$tmp"
else
  echo "recipes_test: note: kubectl not installed (Debian package kubernetes-client); not run"
fi
if ! grep -q 'scripts/host-run.sh' "$root/CMakeLists.txt"; then
  echo "recipes_test: note: scripts/host-run.sh is not in CMakeLists.txt's install(PROGRAMS ...)" \
    "yet, so the package and the image lack it"
fi

echo "recipes_test: $passed passed, $failed failed"
((failed == 0))
