#!/usr/bin/env bash
# The one command each benchmark host runs: runs its share of the scenarios, gates each run
# against the team's history and stores every run whose gate did not fail.
#
# Usage: host-run.sh --history URL [--shard INDEX/COUNT] [--results DIR] [--label NAME=VALUE]...
#                    SCENARIO...
#   --history URL        the history: a SQLite file, or postgresql://USER@HOST:PORT/DB; the
#                        password comes from PGPASSWORD or ~/.pgpass, never from the URL (a URL
#                        that carries one is refused)
#   --shard INDEX/COUNT  run only the scenarios j (0-based, in the order given) with
#                        j % COUNT == INDEX (default 0/1: all of them); auto/COUNT takes INDEX
#                        from $JOB_COMPLETION_INDEX, as a pod of a Kubernetes Indexed Job has it,
#                        or else from a Slurm array task's $SLURM_ARRAY_TASK_ID (counted from
#                        the array's first index, in its steps); auto alone takes COUNT from
#                        $SLURM_ARRAY_TASK_COUNT too.
#                        A trace scenario runs on every host, each replaying its own shard of the
#                        trace (kvbench run --trace-shard INDEX/COUNT)
#   --results DIR        where the run folders go (default: results); each scenario gets a new
#                        folder DIR/<UTC time>-<scenario>-<random>/ that holds the one run folder
#                        kvbench run makes
#   --label NAME=VALUE   passed on to kvbench run (repeatable): kept in run.json and so in the
#                        history, e.g. --label host=gpu-box --label commit=abc123
#   SCENARIO             a scenario file, or the name of a bundled scenario (quickstart)
#
# For each scenario of the shard, in order:
#   kvbench run SCENARIO --results FOLDER [--label ...] -q
#   kvbench gate --run RUN --history URL --on-inconclusive warn
#   kvbench ingest RUN --history URL            (unless the gate failed)
# A run whose gate failed is kept in its folder but not stored, so that a regression does not
# become part of the baseline it is judged against. A run that did not complete is neither gated
# nor stored.
#
# Nothing to compare with yet: the gate exits 2 for bad input and also when the history holds
# nothing (a brand-new database, a SQLite file not made yet). When the gate exits 2 the script
# looks at the history itself: a SQLite file that does not exist, or a history whose
# `kvbench history list` shows no session with the run's scenario_hash (from run.json), has
# nothing to compare the run with, so the run is the first of its kind and is stored. Otherwise
# (the history lists sessions of that scenario, or cannot be listed) the gate's exit 2 is an
# error and the run is not stored.
#
# One line per scenario on stderr says what happened, and a last line sums the shard up.
# Exit status:
#   0  every scenario of the shard passed its gate and was stored (an inconclusive gate passes
#      with a warning; the first run of a scenario passes: there is nothing to compare it with)
#   1  a gate failed (this wins over any other failure: a regression is the news)
#   2  a usage error (or no kvbench binary): nothing was run
#   otherwise the highest exit code of the kvbench commands that failed, at least 2 (2: bad
#   input or a database error; 3: a run short of its plan)
# A SIGTERM or SIGINT is passed on to the kvbench command that is running (as SIGTERM: kvbench
# stops its server and marks the run incomplete); no further scenario starts, and the script
# exits 128 + the signal's number.
#
# Environment:
#   KVBENCH                the kvbench binary (default: kvbench, from PATH)
#   JOB_COMPLETION_INDEX   the shard index for --shard auto/COUNT (a Kubernetes Indexed Job)
#   SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP,
#   SLURM_ARRAY_TASK_COUNT the shard index (and count) for --shard auto[/COUNT] in a Slurm array
#   PGPASSWORD, PGPASSFILE read by kvbench's PostgreSQL client (libpq), not by this script
set -euo pipefail

readonly kProg=host-run

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

usage_error() {
  printf '%s: error: %s\n' "$kProg" "$*" >&2
  printf '%s: usage: host-run.sh --history URL [--shard INDEX/COUNT] [--results DIR]' "$kProg" >&2
  printf ' [--label NAME=VALUE]... SCENARIO... (--help for more)\n' >&2
  exit 2
}

note() {
  printf '%s: %s\n' "$kProg" "$*" >&2
}

# A URL that carries a password, as user:password@ or as libpq's password= parameter. A password
# may hold '@', so the user information runs up to the last '@' (a ':' before it counts, even
# where the '@' is in the query: refusing too much beats printing a password).
url_has_password() {
  local url=$1 after_scheme userinfo
  [[ $url == *://* ]] || return 1
  after_scheme=${url#*://}
  if [[ $after_scheme == *@* ]]; then
    userinfo=${after_scheme%@*}
    [[ $userinfo == *:* ]] && return 0
  fi
  local re='[?&]password='
  [[ ${url,,} =~ $re ]]
}

# A URL as it may be printed: without the password of user:password@ and without a password=
# parameter.
redact_url() {
  local url=$1 scheme after_scheme userinfo re='[?&]password='
  if [[ $url == *://* ]]; then
    scheme=${url%%://*}
    after_scheme=${url#*://}
    if [[ $after_scheme == *@* ]]; then
      userinfo=${after_scheme%@*}
      url="$scheme://${userinfo%%:*}@${after_scheme##*@}"
    fi
    if [[ ${url,,} =~ $re ]]; then
      url=$(printf '%s' "$url" | sed -E 's/([?&])password=[^&#]*/\1password=(removed)/gI')
    fi
  fi
  printf '%s' "$url"
}

is_postgres_url() {
  [[ $1 == postgresql://* || $1 == postgres://* ]]
}

# --- arguments -------------------------------------------------------------------------------

history=
shard=0/1
results=results
labels=()
scenarios=()
while (($# > 0)); do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --history | --shard | --results | --label)
      (($# >= 2)) || usage_error "$1 needs a value"
      case "$1" in
        --history) history=$2 ;;
        --shard) shard=$2 ;;
        --results) results=$2 ;;
        --label) labels+=("$2") ;;
      esac
      shift 2
      ;;
    --history=*) history=${1#*=}; shift ;;
    --shard=*) shard=${1#*=}; shift ;;
    --results=*) results=${1#*=}; shift ;;
    --label=*) labels+=("${1#*=}"); shift ;;
    --)
      shift
      scenarios+=("$@")
      break
      ;;
    -*) usage_error "unknown option '$1'" ;;
    *)
      scenarios+=("$1")
      shift
      ;;
  esac
done

[[ -n $history ]] ||
  usage_error "--history URL is required (a SQLite file or postgresql://USER@HOST:PORT/DB)"
if url_has_password "$history"; then
  note "error: the history URL carries a password: $(redact_url "$history")"
  note "keep the password out of the URL: set PGPASSWORD, or put it in ~/.pgpass" \
    "(HOST:PORT:DB:USER:PASSWORD, mode 0600)"
  exit 2
fi
shown_history=$(redact_url "$history")
((${#scenarios[@]} > 0)) || usage_error "no SCENARIO given"
[[ -n $results ]] || usage_error "--results needs a folder"

# A Slurm array task's place in its array, counted from 0 in the array's steps, to
# slurm_index; the array's size to slurm_count. Fails (with the reason in slurm_why) outside an
# array or for an array that is not evenly spaced.
slurm_index=
slurm_count=
slurm_why=
slurm_task() {
  local v name
  for name in SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX \
    SLURM_ARRAY_TASK_COUNT; do
    v=${!name:-}
    if [[ ! $v =~ ^[0-9]+$ ]]; then
      slurm_why="$name is not set to a number (not a task of a Slurm job array)"
      return 1
    fi
  done
  local id=$((10#$SLURM_ARRAY_TASK_ID)) min=$((10#$SLURM_ARRAY_TASK_MIN))
  local max=$((10#$SLURM_ARRAY_TASK_MAX)) count=$((10#$SLURM_ARRAY_TASK_COUNT))
  local step=${SLURM_ARRAY_TASK_STEP:-1}
  [[ $step =~ ^[0-9]+$ ]] && ((10#$step >= 1)) || step=1
  step=$((10#$step))
  if ((count < 1 || (max - min) != (count - 1) * step || (id - min) % step != 0)); then
    slurm_why="the array is not evenly spaced (indexes $min-$max, step $step, $count tasks):"
    slurm_why+=" give it as --array=0-$((count - 1))"
    return 1
  fi
  slurm_index=$(((id - min) / step))
  slurm_count=$count
}

if [[ $shard == auto ]]; then
  slurm_task || usage_error "--shard auto: $slurm_why"
  shard=auto/$slurm_count
fi
if [[ ! $shard =~ ^([0-9]+|auto)/([0-9]+)$ ]]; then
  usage_error "--shard: expected INDEX/COUNT, auto/COUNT or auto (e.g. 1/3), got '$shard'"
fi
shard_index=${BASH_REMATCH[1]}
shard_count=$((10#${BASH_REMATCH[2]}))
if [[ $shard_index == auto ]]; then
  if [[ -n ${JOB_COMPLETION_INDEX:-} ]]; then
    [[ $JOB_COMPLETION_INDEX =~ ^[0-9]+$ ]] ||
      usage_error "--shard auto/$shard_count: JOB_COMPLETION_INDEX is not set to a number"
    shard_index=$JOB_COMPLETION_INDEX
  elif slurm_task; then
    ((slurm_count == shard_count)) ||
      usage_error "--shard auto/$shard_count: the Slurm array has $slurm_count tasks"
    shard_index=$slurm_index
  else
    usage_error "--shard auto/$shard_count: neither JOB_COMPLETION_INDEX (a Kubernetes" \
      "Indexed Job) nor a Slurm array task's index is set ($slurm_why)"
  fi
fi
shard_index=$((10#$shard_index))
((shard_count >= 1)) || usage_error "--shard: COUNT must be at least 1"
((shard_index < shard_count)) ||
  usage_error "--shard: INDEX must be below COUNT, got $shard_index/$shard_count"

label_args=()
for label in "${labels[@]}"; do
  [[ $label == [!=]*=* ]] || usage_error "--label: expected NAME=VALUE, got '$label'"
  label_args+=(--label "$label")
done

kvbench=${KVBENCH:-kvbench}
command -v "$kvbench" >/dev/null ||
  usage_error "kvbench not found ('$kvbench'; set KVBENCH to the binary)"
mkdir -p "$results" || usage_error "cannot create the results folder '$results'"

# --- running kvbench, passing signals on ------------------------------------------------------

signals=0
last_signal=
child=
# shellcheck disable=SC2317 # called from the traps below
on_signal() {
  signals=$((signals + 1))
  last_signal=$1
  if [[ -n $child ]]; then
    kill -TERM "$child" 2>/dev/null || true
  fi
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

# Runs a command in the background and waits for it, so that a signal reaches this script (and
# is passed on) while the command runs: as a container's first process the script would ignore
# one it has no handler for. The command's exit status goes to $rc.
rc=0
call() {
  "$@" &
  child=$!
  if ((signals > 0)); then
    kill -TERM "$child" 2>/dev/null || true
  fi
  local seen
  while :; do
    seen=$signals
    rc=0
    wait "$child" || rc=$?
    # A trapped signal cuts wait short; the command was told to stop: wait for its own status.
    ((signals == seen)) && break
  done
  child=
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Whether the history has nothing to compare the run in $1 with: a SQLite file not made yet, or
# no session listed with the run's scenario_hash. 0: nothing to compare with; 1: it has sessions
# of the scenario; 2: it cannot tell (the message says why).
nothing_to_compare() {
  local run_dir=$1 hash
  if ! is_postgres_url "$history" && [[ ! -e $history ]]; then
    return 0
  fi
  hash=$(grep -o -m 1 '"scenario_hash"[[:space:]]*:[[:space:]]*"[^"]*"' "$run_dir/run.json" || true)
  hash=${hash%%$'\n'*}
  hash=${hash%\"}
  hash=${hash##*\"}
  if [[ -z $hash ]]; then
    note "no scenario_hash in $run_dir/run.json"
    return 2
  fi
  call "$kvbench" history list "$history" --format tsv >"$tmp/list.tsv" 2>"$tmp/list.err"
  if ((rc != 0)); then
    note "kvbench history list $shown_history exited $rc: $(tail -n 1 "$tmp/list.err")"
    return 2
  fi
  if grep -Fqw -- "$hash" "$tmp/list.tsv"; then
    return 1
  fi
  return 0
}

# The folder kvbench run made inside $1 (the one holding run.json), on stdout.
find_run_dir() {
  local found=()
  local f
  for f in "$1"/*/run.json; do
    [[ -f $f ]] && found+=("${f%/run.json}")
  done
  ((${#found[@]} == 1)) || return 1
  printf '%s' "${found[0]}"
}

# --- the shard's scenarios -------------------------------------------------------------------

gate_failed=0
worst=0
ran=0
passed=0
failed_gate=0
errors=0

# Records a failure of a kvbench command with exit code $1: at least 2, the highest kept.
record_error() {
  local code=$1
  if ((code < 2)); then
    code=2
  fi
  if ((code > worst)); then
    worst=$code
  fi
  errors=$((errors + 1))
}

run_one() {
  local j=$1 scenario=$2 name stamp sub run_dir verdict
  name=${scenario##*/}
  name=${name%.json}
  name=${name//[^A-Za-z0-9._-]/_}
  [[ -n $name ]] || name=scenario
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  local tag="$scenario [#$j]"
  sub=$(mktemp -d "$results/$stamp-$name-XXXXXX") || {
    note "$tag: cannot make a folder in '$results'"
    record_error 2
    return
  }

  call "$kvbench" run "$scenario" --results "$sub" "${label_args[@]}" "${shard_args[@]}" -q
  local run_rc=$rc
  run_dir=$(find_run_dir "$sub") || run_dir=
  if ((run_rc != 0)); then
    note "$tag: run failed (kvbench run exited $run_rc), not gated, not stored: ${run_dir:-$sub}"
    record_error "$run_rc"
    return
  fi
  if [[ -z $run_dir ]]; then
    note "$tag: kvbench run left no single run folder with run.json in $sub, not stored"
    record_error 2
    return
  fi
  if ((signals > 0)); then
    note "$tag: stopped by SIG$last_signal before the gate, not stored: $run_dir"
    return
  fi

  call "$kvbench" gate --run "$run_dir" --history "$history" --on-inconclusive warn
  local gate_rc=$rc
  case "$gate_rc" in
    0)
      # With --on-inconclusive warn an inconclusive gate exits 0 too; gate.json tells which.
      if grep -q '^  "overall": "INCONCLUSIVE"' "$run_dir/gate.json" 2>/dev/null; then
        verdict="gate inconclusive (a warning)"
      else
        verdict="gate passed"
      fi
      ;;
    3) verdict="gate inconclusive" ;;
    1)
      note "$tag: gate FAILED against $shown_history, not stored (kept: $run_dir)"
      gate_failed=1
      failed_gate=$((failed_gate + 1))
      return
      ;;
    2)
      local nothing=0
      nothing_to_compare "$run_dir" || nothing=$?
      case "$nothing" in
        0) verdict="nothing to compare with yet (first run of this scenario)" ;;
        1)
          note "$tag: gate error (exit 2) although $shown_history has sessions of this" \
            "scenario, not stored: $run_dir"
          record_error 2
          return
          ;;
        *)
          note "$tag: gate error (exit 2), and the history could not be checked for earlier" \
            "sessions, not stored: $run_dir"
          record_error 2
          return
          ;;
      esac
      ;;
    *)
      note "$tag: gate error (kvbench gate exited $gate_rc), not stored: $run_dir"
      record_error "$gate_rc"
      return
      ;;
  esac
  if ((signals > 0)); then
    note "$tag: $verdict; stopped by SIG$last_signal before storing, not stored: $run_dir"
    return
  fi

  call "$kvbench" ingest "$run_dir" --history "$history"
  if ((rc != 0)); then
    note "$tag: $verdict, but storing it failed (kvbench ingest exited $rc): $run_dir"
    record_error "$rc"
    return
  fi
  passed=$((passed + 1))
  note "$tag: $verdict, stored in $shown_history: $run_dir"
}

note "shard $shard_index/$shard_count of ${#scenarios[@]} scenarios, history $shown_history," \
  "results in $results"
# Whether the scenario in $1 replays a trace (its plan's calls name trace requests).
is_trace() {
  local plan
  # Read whole: grep -q would stop at its first match and a large plan end on SIGPIPE.
  plan=$("$kvbench" plan "$1" --format json 2>/dev/null) || return 1
  [[ $plan == *'"request":'* ]]
}

shard_args=()
for j in "${!scenarios[@]}"; do
  shard_args=()
  if ((shard_count > 1)) && is_trace "${scenarios[$j]}"; then
    # Every host replays its shard of a trace: the prefix families by first arrival, those
    # with number mod COUNT == INDEX (kvbench trace merge joins the shards' runs).
    shard_args=(--trace-shard "$shard_index/$shard_count")
  else
    ((j % shard_count == shard_index)) || continue
  fi
  if ((signals > 0)); then
    break
  fi
  ran=$((ran + 1))
  run_one "$j" "${scenarios[$j]}"
done

note "shard $shard_index/$shard_count: $ran scenarios: $passed stored, $failed_gate failed the" \
  "gate, $errors errors"
if ((signals > 0)); then
  case "$last_signal" in
    INT) exit 130 ;;
    *) exit 143 ;;
  esac
fi
if ((gate_failed)); then
  exit 1
fi
exit "$worst"
