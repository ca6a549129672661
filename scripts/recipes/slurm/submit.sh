#!/usr/bin/env bash
# Submits kvbench to Slurm: a job array whose task K of N runs scripts/host-run.sh (its shard of
# a trace scenario, or its share of a list of scenarios), and a merge job that waits for the whole
# array (afterok) and is cancelled when a task fails (--kill-on-invalid-dep=yes).
#
# Usage: submit.sh --history URL --shared DIR [--tasks N] [--node NODE] [--share-nodes]
#                  [--sbatch-arg ARG]... SCENARIO...
#   --history URL     the history every task stores its run in: postgresql://USER@HOST:PORT/DB
#                     (the password from PGPASSWORD or ~/.pgpass on the nodes, never in the URL),
#                     or a SQLite file, which needs --node: SQLite on a network file system is
#                     not safe, so every task and the merge then run on that one node
#   --shared DIR      a folder every node sees; the array writes into DIR/<array job id>/, and
#                     each job's output into DIR/kvbench-<array>_<task>.out and
#                     DIR/kvbench-merge-<job>.out
#   --tasks N         the array's tasks: a trace scenario's shards (required for a trace), or
#                     how many tasks share a list (default: one task per scenario)
#   --node NODE       run every task and the merge on this node (--nodelist)
#   --share-nodes     let tasks share a node (to try the recipe on one machine); by default each
#                     task has its node to itself (--exclusive): two benchmarks on one node would
#                     measure each other
#   --sbatch-arg ARG  passed to both sbatch calls (repeatable), e.g. --sbatch-arg=--partition=gpu
#   SCENARIO          one trace scenario, or a list of scenarios without a trace (files, or the
#                     names of bundled ones); one array per trace or per list
# Scenario files and a SQLite history are passed on as absolute paths: the tasks start in the
# folder sbatch ran in, which must be one every node sees too where relative paths are used.
# A task asks for a GPU (--gres=gpu:1) where a scenario file sets gpu_layers above 0.
# Prints the two job ids and where the results go. Exit 0 when both were submitted, 2 for a usage
# error (nothing submitted), otherwise 1: sbatch refused the array (nothing submitted), or the
# merge job, in which case the array is cancelled again (scancel).
# Environment: KVBENCH (the kvbench binary, default kvbench from PATH; the tasks use the same),
# KVBENCH_SCRIPTS (the folder holding host-run.sh on the nodes; default: this repository's
# scripts/ when it is there, else /usr/share/kvbench/scripts), SBATCH and SCANCEL (default sbatch
# and scancel).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}
usage_error() {
  printf 'submit: error: %s (--help for the usage)\n' "$*" >&2
  exit 2
}

history=
shared=
tasks=
node=
exclusive=1
extra=()
scenarios=()
while (($# > 0)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --history | --shared | --tasks | --node | --sbatch-arg)
      (($# >= 2)) || usage_error "$1 needs a value"
      case "$1" in
        --history) history=$2 ;;
        --shared) shared=$2 ;;
        --tasks) tasks=$2 ;;
        --node) node=$2 ;;
        --sbatch-arg) extra+=("$2") ;;
      esac
      shift 2
      ;;
    --history=* | --shared=* | --tasks=* | --node=* | --sbatch-arg=*)
      value=${1#*=}
      case "$1" in
        --history=*) history=$value ;;
        --shared=*) shared=$value ;;
        --tasks=*) tasks=$value ;;
        --node=*) node=$value ;;
        --sbatch-arg=*) extra+=("$value") ;;
      esac
      shift
      ;;
    --share-nodes) exclusive=0; shift ;;
    --) shift; scenarios+=("$@"); break ;;
    -*) usage_error "unknown option '$1'" ;;
    *) scenarios+=("$1"); shift ;;
  esac
done

[[ -n $history ]] || usage_error "--history URL is required"
[[ -n $shared ]] || usage_error "--shared DIR is required (a folder every node sees)"
((${#scenarios[@]} > 0)) || usage_error "no SCENARIO given"
if [[ $history != postgresql://* && $history != postgres://* && -z $node ]]; then
  usage_error "a SQLite history ($history) is safe on one node only: give --node NODE, or a" \
    "postgresql:// history"
fi
if [[ -n $tasks && ! $tasks =~ ^[1-9][0-9]*$ ]]; then
  usage_error "--tasks: expected a whole number of 1 or more, got '$tasks'"
fi

kvbench=${KVBENCH:-kvbench}
command -v "$kvbench" >/dev/null || usage_error "kvbench not found ('$kvbench'; set KVBENCH)"
sbatch=${SBATCH:-sbatch}
command -v "$sbatch" >/dev/null || usage_error "sbatch not found (is this a Slurm login node?)"

# A trace scenario's plan names trace requests (read whole, as host-run.sh reads it).
is_trace() {
  local plan
  plan=$("$kvbench" plan "$1" --format json 2>/dev/null) || return 2
  [[ $plan == *'"request":'* ]]
}
traces=0
gpu=0
for s in "${scenarios[@]}"; do
  rc=0
  is_trace "$s" || rc=$?
  case "$rc" in
    0) traces=$((traces + 1)) ;;
    1) ;;
    *) usage_error "kvbench plan $s failed: $("$kvbench" plan "$s" 2>&1 | tail -n 1)" ;;
  esac
  if [[ -f $s ]] && grep -Eq '"gpu_layers"[[:space:]]*:[[:space:]]*[1-9]' "$s"; then
    gpu=1
  fi
done
# Files by their absolute paths (a bundled scenario's name stays a name).
for i in "${!scenarios[@]}"; do
  if [[ -f ${scenarios[$i]} ]]; then
    scenarios[i]=$(cd "$(dirname "${scenarios[$i]}")" && pwd)/$(basename "${scenarios[$i]}")
  fi
done
if [[ $history != postgresql://* && $history != postgres://* && $history != /* ]]; then
  history=$PWD/$history
fi
if ((traces > 0)); then
  ((${#scenarios[@]} == 1)) ||
    usage_error "one array per trace or per list: a trace scenario goes alone"
  [[ -n $tasks ]] || usage_error "a trace scenario needs --tasks N (its shards)"
  merge=trace
else
  tasks=${tasks:-${#scenarios[@]}}
  ((tasks <= ${#scenarios[@]})) ||
    usage_error "--tasks $tasks: more tasks than the ${#scenarios[@]} scenarios"
  merge=list
fi

mkdir -p "$shared"
shared=$(cd "$shared" && pwd)
if [[ -z ${KVBENCH_SCRIPTS:-} ]]; then
  if [[ -x $here/../../host-run.sh ]]; then
    KVBENCH_SCRIPTS=$(cd "$here/../.." && pwd)
  else
    KVBENCH_SCRIPTS=/usr/share/kvbench/scripts
  fi
fi
# The tasks read these from the environment sbatch hands on (its default --export=ALL).
export KVBENCH_HISTORY=$history KVBENCH_SHARED=$shared KVBENCH_SCRIPTS KVBENCH_MERGE=$merge
[[ -n ${KVBENCH:-} ]] && export KVBENCH

common=()
[[ -n $node ]] && common+=(--nodelist="$node")
common+=("${extra[@]}")
array_args=(--parsable --array="0-$((tasks - 1))" --output="$shared/kvbench-%A_%a.out"
  "${common[@]}")
((exclusive)) && array_args+=(--exclusive)
((gpu)) && array_args+=(--gres=gpu:1)

array=$("$sbatch" "${array_args[@]}" "$here/kvbench-array.sbatch" "${scenarios[@]}") || {
  echo "submit: sbatch refused the array; nothing submitted" >&2
  exit 1
}
array=${array%%;*}
[[ $array =~ ^[0-9]+$ ]] || { echo "submit: sbatch gave no job id: $array" >&2; exit 1; }
echo "submit: array job $array: $tasks tasks ($merge: ${scenarios[*]})"
if ! merge_job=$(KVBENCH_ARRAY_JOB=$array "$sbatch" --parsable --dependency="afterok:$array" \
  --kill-on-invalid-dep=yes --output="$shared/kvbench-merge-%j.out" "${common[@]}" \
  "$here/kvbench-merge.sbatch") || [[ ! ${merge_job%%;*} =~ ^[0-9]+$ ]]; then
  echo "submit: sbatch refused the merge job; array job $array cancelled again" >&2
  "${SCANCEL:-scancel}" "$array" || true
  exit 1
fi
merge_job=${merge_job%%;*}
echo "submit: merge job $merge_job, after every task of $array succeeded"
echo "submit: results in $shared/$array/"
