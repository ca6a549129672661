#!/usr/bin/env python3
"""The JSON Schemas in results/schemas/ against what kvbench writes: each schema is a valid JSON
Schema (2020-12) named by its file; the recorded runs' run.json and every line of their calls.jsonl
and answers.jsonl validate; so do the outputs kvbench makes from them (`report --format json` and `jsonl`,
`compare --format json`), the plan of every bundled scenario, `kv --format json`,
`model info --format json` and `trace analyze --format json`, and `history export` of the
recorded runs; and a record that breaks its schema is caught.

Usage: tests/scripts/schema_test.py KVBENCH SOURCE_DIR
"""

import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

kvbench, source = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("schema_test: FAIL:", what, file=sys.stderr)


store = {}
for path in sorted(glob.glob(os.path.join(source, "results", "schemas", "*.schema.json"))):
    with open(path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    name = os.path.basename(path)[: -len(".schema.json")]
    check(schema.get("$id") == name, f"{path}: $id is not {name}")
    store[name] = schema
check(len(store) >= 12, "results/schemas/ holds the schemas")


def errors(name, doc):
    v = jsonschema.Draft202012Validator(store[name])
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def valid(name, doc, what):
    errs = errors(name, doc)
    check(not errs, f"{what} against {name}: {errs[:3]}")


def output(*args, exits=(0,)):
    p = subprocess.run([kvbench, *args], capture_output=True, text=True, timeout=120)
    check(p.returncode in exits,
          f"kvbench {' '.join(args)} exited {p.returncode}: {p.stderr[:300]}")
    return p.stdout


runs = sorted(glob.glob(os.path.join(source, "tests", "data", "runs", "*")))
check(len(runs) >= 4, "the recorded runs are there")
answers = 0
for run in runs:
    with open(os.path.join(run, "run.json")) as f:
        valid("kvbench.run.v2", json.load(f), f"{run}/run.json")
    with open(os.path.join(run, "calls.jsonl")) as f:
        for i, line in enumerate(f):
            valid("kvbench.call.v1", json.loads(line), f"{run}/calls.jsonl line {i + 1}")
    if os.path.exists(os.path.join(run, "answers.jsonl")):
        answers += 1
        with open(os.path.join(run, "answers.jsonl")) as f:
            for i, line in enumerate(f):
                valid("kvbench.answer.v1", json.loads(line), f"{run}/answers.jsonl line {i + 1}")
    summary = json.loads(output("report", run, "--format", "json"))
    valid("kvbench.report.v1", summary, f"report {run}")
    valid("kvbench.run.v2", summary["run"], f"report {run}: its run")
    for i, line in enumerate(output("report", run, "--format", "jsonl").splitlines()):
        valid("kvbench.call.v1", json.loads(line), f"report {run} --format jsonl line {i + 1}")
    # A run of conversations or of a trace has no single prompts to compare (exit 1), and says so
    # in valid JSON.
    conversation = any(w in os.path.basename(run) for w in ("conversation", "trace"))
    valid("kvbench.compare.v1",
          json.loads(output("compare", run, run, "--format", "json",
                            exits=(1,) if conversation else (0,))),
          f"compare {run}")

# The same run twice: no spread between them, every effect still given over the runs.
quick = [r for r in runs if os.path.basename(r) == "quickstart"][0]
valid("kvbench.repeat.v1", json.loads(output("repeat", "--runs", quick, quick, "--format", "json")),
      "repeat --runs quickstart quickstart")

for scenario in sorted(glob.glob(os.path.join(source, "scenarios", "*.json"))):
    valid("kvbench.plan.v1", json.loads(output("plan", scenario, "--format", "json")),
          f"plan {scenario}")
valid("kvbench.kv.v1", json.loads(output("kv", "--preset", "small", "--format", "json")),
      "kv --preset small")
conversation_trace = os.path.join(source, "tests", "data", "traces", "mooncake-conversation.jsonl.xz")
trace_analysis = json.loads(output("trace", "analyze", conversation_trace, "--capacity-blocks",
                                   "4000,1000", "--format", "json"))
valid("kvbench.trace-analysis.v1", trace_analysis, "trace analyze")
check(errors("kvbench.trace-analysis.v1", dict(trace_analysis, hit_rate={"infinite": {}})),
      "a trace analysis without its rates fails")
with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "tiny.gguf")
    output("model", "synth", "--preset", "tiny", "-o", model)
    valid("kvbench.model.v1", json.loads(output("model", "info", model, "--format", "json")),
          "model info")

# A history of the recorded runs, exported: each line a session, each of its calls a record.
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "history.sqlite")
    output("ingest", *runs, "--history", db)
    lines = output("history", "export", db).splitlines()
    check(len(lines) == len(runs), f"history export: {len(lines)} lines for {len(runs)} runs")
    for i, line in enumerate(lines):
        session = json.loads(line)
        valid("kvbench.history-session.v1", session, f"history export line {i + 1}")
        for k, call in enumerate(session["calls"]):
            valid("kvbench.call.v1", call, f"history export line {i + 1} call {k}")
    broken = json.loads(lines[0])
    del broken["session"]["run_id"]
    check(errors("kvbench.history-session.v1", broken), "a session line without run_id fails")

with open(os.path.join(source, "tests", "data", "lesson", "quick", "lesson-report.json")) as f:
    valid("kvbench.lesson.v1", json.load(f), "the recorded quick reproduction")

# The schemas catch what breaks them.
with open(os.path.join(runs[0], "calls.jsonl")) as f:
    record = json.loads(f.readline())
broken = copy.deepcopy(record)
del broken["seq"]
broken["outcome"] = "fine"
check(len(errors("kvbench.call.v1", broken)) == 2, "a record without seq and a bad outcome fails")
check(answers >= 1, "a recorded run has answers")
answer = {"block": 0, "replica": 0, "start": 1, "cache_type": "f16", "num_ctx": 512,
          "variant": "", "prompt": 0, "ids": [1, 2], "top": [[[1, -0.1]], [[2, -0.2]]]}
valid("kvbench.answer.v1", answer, "an answer with ids")
check(errors("kvbench.answer.v1", dict(answer, start=3)), "an answer from a third start fails")
check(errors("kvbench.answer.v1", dict(answer, error="timeout")),
      "an answer with both ids and an error fails")
summary = json.loads(output("report", runs[0], "--format", "json"))
summary["schema_version"] = 2
check(errors("kvbench.report.v1", summary), "a summary of another version fails")

if failures:
    sys.exit(1)
print(f"schema_test: ok ({len(store)} schemas)")
