#!/usr/bin/env bash
# The Slurm recipe (scripts/recipes/slurm/) under a real Slurm: a one-node cluster started from
# Debian's packages (munged, slurmctld, slurmd; no slurmdbd) with a slurm.conf generated in a
# temporary folder on private ports, and a private PostgreSQL history. submit.sh submits
#   - a trace scenario's 2 shards as a 2-task array, with the merge job after it: every shard's run
#     is in the history once, labelled host, slurm_job and slurm_task, and the merge equals the
#     one-host replay's per-request predictions less what crossed shards;
#   - a list of 2 small sweeps as a 2-task array, with its merge (history report by host);
#   - a list whose second task is made to fail (a model file that is not there): the task is
#     FAILED with kvbench's exit code 2 and host-run.sh's line in its output, and the merge job
#     is cancelled (DependencyNeverSatisfied), which is what the recipe's README tells a user to
#     look at.
# Everything it started is stopped at the end, and the test checks that nothing is left running.
# Needs root (slurmd starts jobs as their user) and the Debian packages slurmctld, slurmd,
# slurm-client, munge and postgresql (scripts/setup-deps.sh --for test); without them it says so
# and exits 77 (skipped), except under CI (CI set), where that is a failure.
# Usage: tests/scripts/slurm_test.sh KVBENCH_BINARY
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
(($# == 1)) || { echo "usage: slurm_test.sh KVBENCH_BINARY" >&2; exit 2; }
kvbench=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
recipe=$root/scripts/recipes/slurm
test_name=slurm_test
# shellcheck source=tests/scripts/test_lib.sh
source "$root/tests/scripts/test_lib.sh"

missing() {
  echo "slurm_test: $*" >&2
  if [[ -n ${CI:-} ]]; then
    echo "slurm_test: FAIL: CI must run this test (scripts/setup-deps.sh --for test)" >&2
    exit 1
  fi
  exit 77
}
((EUID == 0)) || missing "needs root to start slurmd; not run"
for cmd in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
  command -v "$cmd" >/dev/null || missing "no $cmd (Debian packages slurmctld slurmd" \
    "slurm-client munge); not run"
done
[[ -n $(postgres_bin) ]] || missing "no PostgreSQL server (postgresql); not run"

tmp=$(mktemp -d /tmp/kvbench-slurm.XXXXXX)
chmod 755 "$tmp"
export SLURM_CONF=$tmp/slurm/slurm.conf
stops=()
cleanup() {
  local rc=$?
  if [[ -f $SLURM_CONF ]]; then
    # Cancelled jobs stop their kvbench and llama-server before the daemons go.
    scancel --user=root >/dev/null 2>&1 || true
    wait_for 'out=$(squeue -h -o %i) && [[ -z $out ]]' 30 || true
  fi
  local i
  for ((i = ${#stops[@]} - 1; i >= 0; i--)); do
    eval "${stops[$i]}" >/dev/null 2>&1 || true
  done
  if ((rc != 0)) && [[ -d $tmp/slurm ]]; then
    echo "slurm_test: the daemons' logs:" >&2
    tail -n 20 "$tmp"/slurm/*.log "$tmp"/munge/*.log 2>/dev/null >&2 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Stops the daemon whose pid file is $1 and waits (10 s at most) until it is gone.
stop_pid() {
  local pid
  pid=$(cat "$1") || return 0
  kill "$pid" 2>/dev/null || return 0
  wait_for "! kill -0 $pid" 10
}
# Waits up to $2 seconds for the command in $1 to succeed.
wait_for() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    if eval "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  return 1
}

# --- PostgreSQL ------------------------------------------------------------------------------
if ! start_postgres "$tmp/pg"; then
  [[ ${#pg_stop[@]} == 0 ]] || stops+=("$(printf '%q ' "${pg_stop[@]}")")
  echo "slurm_test: could not start PostgreSQL: $(tail -n 3 "$tmp/pg/initdb.log" "$tmp/pg/log")" >&2
  exit 1
fi
stops+=("$(printf '%q ' "${pg_stop[@]}")")
url=$pg_url

# --- munge and Slurm -------------------------------------------------------------------------
mkdir -p "$tmp/munge" "$tmp/slurm/state" "$tmp/slurm/spool"
chmod 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null
munge_socket=$tmp/munge/munge.socket
munged --force --socket="$munge_socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" 2>"$tmp/munge/start.err"
stops+=("munged --stop --socket='$munge_socket'")

node=$(hostname -s)
cpus=$(nproc)
cat >"$SLURM_CONF" <<EOF
ClusterName=kvbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$tmp/slurm/state
SlurmdSpoolDir=$tmp/slurm/spool
SlurmctldPidFile=$tmp/slurm/slurmctld.pid
SlurmdPidFile=$tmp/slurm/slurmd.pid
SlurmctldLogFile=$tmp/slurm/slurmctld.log
SlurmdLogFile=$tmp/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=kvbtest Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -c -f "$SLURM_CONF"
stops+=("stop_pid '$tmp/slurm/slurmctld.pid'")
slurmd -f "$SLURM_CONF"
stops+=("stop_pid '$tmp/slurm/slurmd.pid'")
if ! wait_for "sinfo -h -o %T | grep -qx idle" 30; then
  echo "slurm_test: the node did not become idle: $(sinfo -h -o '%T %E' 2>&1)" >&2
  exit 1
fi
ok "a one-node Slurm runs (node $node, $cpus CPUs)"

# --- the scenarios ---------------------------------------------------------------------------
work=$tmp/work
mkdir -p "$work" "$tmp/shared"
cd "$work"
export KVBENCH=$kvbench KVBENCH_MODELS_DIR=$tmp/models
cp "$root/tests/data/traces/mooncake-conversation.jsonl.xz" "$work/conversation.jsonl.xz"
cat >trace.json <<'EOF'
{"name": "trace-shards", "server": {"kind": "llama-server", "model": "synthetic:tiny",
  "args": ["--cache-ram", "0"]}, "factors": {"num_ctx": [4096]}, "seed": 3, "warmup": 1,
 "workload": {"trace": {"file": "conversation.jsonl.xz", "sample": {"families": 10, "seed": 2},
  "scale": {"tokens": 0.0625, "time": 2000}, "slots": 1}}}
EOF
sweep() {  # sweep NAME SEED MODEL
  cat >"$1.json" <<EOF
{"name": "$1", "server": {"kind": "llama-server", "model": "$3"},
 "factors": {"prompt_tokens": [64, 128], "num_ctx": [1024]}, "repeats": 3, "max_tokens": 16,
 "warmup": 0, "seed": $2}
EOF
}
sweep sweep-a 1 synthetic:tiny
sweep sweep-b 2 synthetic:tiny
sweep sweep-broken 3 "$work/no-such-model.gguf"

# The one-host replay the merged shards are held against (it also writes the model once).
"$kvbench" run trace.json --results "$work/one-host" -q >/dev/null

# --- the arrays ------------------------------------------------------------------------------
submit() {  # submit NAME SUBMIT-ARGS...: sets array_NAME and merge_NAME
  local out
  out=$("$recipe/submit.sh" --history "$url" --shared "$tmp/shared" --share-nodes \
    --sbatch-arg=--cpus-per-task=1 "${@:2}")
  echo "$out"
  printf -v "array_$1" '%s' "$(sed -n 's/^submit: array job \([0-9]*\):.*/\1/p' <<<"$out")"
  printf -v "merge_$1" '%s' "$(sed -n 's/^submit: merge job \([0-9]*\),.*/\1/p' <<<"$out")"
}
submit trace --tasks 2 trace.json
submit list sweep-a.json sweep-b.json
submit broken sweep-a.json sweep-broken.json
# shellcheck disable=SC2154 # set by submit through printf -v
jobs_ok=$([[ -n $array_trace && -n $merge_trace && -n $array_list && -n $merge_list &&
  -n $array_broken && -n $merge_broken ]] && echo 1 || echo 0)
check "submit.sh submitted three arrays and their merge jobs" test "$jobs_ok" = 1

# shellcheck disable=SC2016 # evaluated by wait_for
if ! wait_for 'out=$(squeue -h -o %i) && [[ -z $out ]]' 150; then
  fail "jobs still queued or running after 150 s: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
fi

job_field() {  # job_field JOB FIELD: FIELD=value of scontrol show job JOB (each task's line)
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# The trace: both shards stored once each, labelled; the merge equals one host less crossed.
sessions_json=$("$kvbench" history list "$url" --format json)
labels_of() {  # labels_of JOB: the run_labels of the job's stored sessions, one a line, sorted
  python3 -c '
import json, sys
rows = json.loads(sys.argv[1])
rows = rows.get("rows", rows) if isinstance(rows, dict) else rows
for r in sorted(r["run_labels"] for r in rows if ("slurm_job=" + sys.argv[2]) in r["run_labels"].split(", ")):
    print(r)' "$sessions_json" "$1"
}
expect_labels() {  # expect_labels JOB TASK...
  local want="" t
  for t in "${@:2}"; do
    want+="host=$node, slurm_cluster=kvbtest, slurm_job=$1, slurm_task=$t"$'\n'
  done
  [[ "$(labels_of "$1")"$'\n' == "$want" ]]
}
check "the trace array: tasks COMPLETED: $(job_field "$array_trace" JobState | tr '\n' ' ')" \
  test "$(job_field "$array_trace" JobState | sort -u)" = COMPLETED
check "the trace array: each shard's run in the history once, labelled host, slurm_* (job, task)" \
  expect_labels "$array_trace" 0 1
check "the trace merge job COMPLETED ($(job_field "$merge_trace" JobState))" \
  test "$(job_field "$merge_trace" JobState)" = COMPLETED
merged=$tmp/shared/$array_trace/merged.json
one_host=$(find "$work/one-host" -name summary.json | head -n 1)
check "the merged shards are the one-host replay's requests, less what crossed shards" \
  python3 - "$merged" "$one_host" <<'PY'
import json, sys
merged = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))["trace"]["requests"]
rows = merged["rows"]
assert len(rows) == len(one) and rows, (len(rows), len(one))
crossed = 0
for row, o in zip(rows, one):
    assert row["index"] == o["index"], (row["index"], o["index"])
    assert row["input_tokens"] == o["input_tokens"]
    assert row["one_host_infinite_tokens"] == o["predicted_infinite_tokens"]
    assert row["predicted_infinite_tokens"] + row["crossed_tokens"] == \
        o["predicted_infinite_tokens"], row
    crossed += row["crossed_tokens"]
assert merged["crossed"]["tokens"] == crossed
PY

# The list: both sweeps stored, and the merge's report groups them by host.
check "the list array: tasks COMPLETED" \
  test "$(job_field "$array_list" JobState | sort -u)" = COMPLETED
check "the list array: each sweep's run in the history once, labelled" \
  expect_labels "$array_list" 0 1
report=$tmp/shared/$array_list/report.md
check "the list's merge job COMPLETED ($(job_field "$merge_list" JobState))" \
  test "$(job_field "$merge_list" JobState)" = COMPLETED
if grep -q "^## host $node " "$report" && grep -q 'sweep-a' "$report" &&
  grep -q 'sweep-b' "$report"; then
  ok "the list's merge wrote the history report of both sweeps under their host"
  sed -n '5,$p' "$report"
else
  fail "the list's merge report: $(head -n 8 "$report" "$tmp/shared/kvbench-merge-$merge_list.out" 2>&1)"
fi

# A task made to fail: FAILED with kvbench's exit code, its merge cancelled.
state_of_task() { scontrol show job "${1}_$2" | tr ' ' '\n' | sed -n "s/^$3=//p"; }
check "the failed task is FAILED with exit code 2:0" \
  test "$(state_of_task "$array_broken" 1 JobState) $(state_of_task "$array_broken" 1 ExitCode)" \
  = "FAILED 2:0"
check "the other task of that array COMPLETED and its run was stored" \
  test "$(state_of_task "$array_broken" 0 JobState)" = COMPLETED
check "the failed task's run is not in the history" expect_labels "$array_broken" 0
check "the failed task's output names kvbench's exit code" \
  grep -q "run failed (kvbench run exited 2)" "$tmp/shared/kvbench-${array_broken}_1.out"
merge_state="$(job_field "$merge_broken" JobState) $(job_field "$merge_broken" Reason)"
check "the merge after a failed task is cancelled ($merge_state)" \
  test "$merge_state" = "CANCELLED DependencyNeverSatisfied"

# Stop everything, then check that nothing is left.
trap - EXIT
cleanup
left=$(pgrep -f "$tmp" || true)
check "nothing left running (slurmctld, slurmd, munged, PostgreSQL, llama-server)" test -z "$left"
echo "slurm_test: $passed passed, $failed failed"
((failed == 0))
