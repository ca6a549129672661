#!/usr/bin/env python3
"""The one output scheme, on the recorded runs and on commands that need no server: every format
of every command that prints results (md, csv, tsv, json, jsonl as each has them) parses as what
it claims to be and carries the same rows; -o takes its format from --format or the file's
extension and leaves stdout empty; `-` is stdout; the older flags still work and say what
replaces them; and what cannot be honoured exits 2 with the flag named, writing nothing.

Usage: tests/scripts/output_scheme_test.py KVBENCH SOURCE_DIR
"""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile

kvbench, source = sys.argv[1], sys.argv[2]
runs = os.path.join(source, "tests", "data", "runs")
quick = os.path.join(runs, "quickstart")
failures = []


def run(*args):
    p = subprocess.run([kvbench, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("output_scheme_test: FAIL:", what, file=sys.stderr)


def rows_of(text, delimiter):
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


# report: one table, every format.
code, md, _ = run("report", quick)
check(code == 0 and md.startswith("# kvbench run: quickstart"), "report: md by default")
code, csv_out, _ = run("report", quick, "--format", "csv")
code2, tsv_out, _ = run("report", quick, "--format", "tsv")
check(code == 0 and code2 == 0, "report --format csv/tsv exit 0")
c, t = rows_of(csv_out, ","), rows_of(tsv_out, "\t")
check(len(c) > 1 and c == t, "report: csv and tsv carry the same rows")
code, js, _ = run("report", quick, "--format", "json")
summary = json.loads(js)
check(summary.get("schema") == "kvbench.report" and "conditions" in summary,
      "report --format json is the summary")
code, jl, _ = run("report", quick, "--format", "jsonl")
lines = [json.loads(line) for line in jl.splitlines()]
with open(os.path.join(quick, "calls.jsonl")) as f:
    recorded = sum(1 for _ in f)
check(len(lines) == recorded and all("seq" in r for r in lines), "report jsonl: one line per call")

with tempfile.TemporaryDirectory() as tmp:
    targets = [os.path.join(tmp, n) for n in ("r.md", "r.json", "r.csv", "r.tsv", "r.jsonl")]
    args = ["report", quick]
    for path in targets:
        args += ["-o", path]
    code, out, _ = run(*args)
    check(code == 0 and out == "", "report -o ...: files only, stdout empty")
    with open(targets[0]) as f:
        check(f.read() == md, "-o r.md is the Markdown report")
    with open(targets[1]) as f:
        check(json.load(f) == summary, "-o r.json is the JSON summary")
    with open(targets[2]) as f:
        check(rows_of(f.read(), ",") == c, "-o r.csv is the CSV table")
    code, out, _ = run("report", quick, "-o", os.path.join(tmp, "x.txt"), "--format", "tsv")
    with open(os.path.join(tmp, "x.txt")) as f:
        check(code == 0 and rows_of(f.read(), "\t") == t, "--format overrides the extension")
    code, out, _ = run("report", quick, "-o", "-", "-o", os.path.join(tmp, "y.csv"))
    check(code == 0 and out == md, "-o - is stdout, in md without --format")

    # Refusals: exit 2, the flag named, nothing written.
    bad = os.path.join(tmp, "bad.what")
    code, out, err = run("report", quick, "-o", bad)
    check(code == 2 and "-o " + bad in err and not os.path.exists(bad),
          "report -o FILE.what: exit 2, named, nothing written")
    code, out, err = run("report", quick, "--format", "xml")
    check(code == 2 and "--format" in err, "report --format xml: exit 2")
    code, out, err = run("report", quick, "-o", "-", "--json", "-")
    check(code == 2 and "stdout" in err, "two outputs on stdout: exit 2")
    code, out, err = run("plan", os.path.join(source, "scenarios", "quickstart.json"),
                         "--format", "csv")
    check(code == 2 and "csv" in err, "plan has no csv: exit 2")

    # The older flags.
    code, out, err = run("report", quick, "--json", "-")
    check(code == 0 and json.loads(out) == summary and "kept for one release" in err,
          "report --json - still works and says what replaces it")
    code, out, err = run("report", quick, "--csv", os.path.join(tmp, "old.csv"))
    with open(os.path.join(tmp, "old.csv")) as f:
        check(code == 0 and out == md and rows_of(f.read(), ",") == c,
              "report --csv FILE writes the table and keeps the report on stdout")

    # compare: md, json, csv, tsv.
    a, b = quick, quick
    code, out, _ = run("compare", a, b, "--format", "csv")
    crows = rows_of(out, ",")
    code2, out2, _ = run("compare", a, b, "--format", "json")
    cj = json.loads(out2)
    check(code == 0 and len(crows) - 1 == len(cj["rows"]) and crows[0][:2] == ["variant", "num_ctx"],
          "compare csv has a row per JSON row")
    check(all(abs(float(r[crows[0].index("ratio")]) - 1.0) < 1e-9 for r in crows[1:]),
          "compare of a run with itself: every ratio 1")
    code, out, _ = run("compare", a, b, "--format", "tsv")
    check(rows_of(out, "\t") == crows, "compare tsv = csv")

    # repeat: md, json, csv, tsv.
    code, out, _ = run("repeat", "--runs", quick, quick, "--format", "csv")
    rrows = rows_of(out, ",")
    code2, out2, _ = run("repeat", "--runs", quick, quick, "--format", "json")
    rj = json.loads(out2)
    check(code == 0 and code2 == 0 and len(rrows) - 1 == len(rj["effects"]) > 0
          and rrows[0][:3] == ["metric", "term", "unit"], "repeat csv has a row per JSON effect")
    code, out, _ = run("repeat", "--runs", quick, quick, "--format", "tsv")
    check(rows_of(out, "\t") == rrows, "repeat tsv = csv")

    # kv: md, json, csv, tsv.
    code, out, _ = run("kv", "--preset", "small", "--format", "csv", "-c", "2048,4096")
    krows = rows_of(out, ",")
    code2, out2, _ = run("kv", "--preset", "small", "--json")
    kj = json.loads(out2)
    check(code == 0 and krows[0] == ["cache", "bytes_per_number", "bytes_per_token",
                                     "bytes_ctx_2048", "bytes_ctx_4096"], "kv csv header")
    check(len(krows) - 1 == len(kj["cache_types"]), "kv csv: a row per cache type")
    f16 = next(r for r in krows if r[0] == "f16")
    check(int(f16[4]) == 2 * int(f16[3]), "kv csv: twice the context, twice the bytes")

    # plan and model info: md and json.
    code, out, _ = run("plan", "quickstart", "--format", "json")
    check(code == 0 and "blocks" in json.loads(out), "plan quickstart --format json")
    model = os.path.join(tmp, "tiny.gguf")
    run("model", "synth", "--preset", "tiny", "-o", model)
    code, out, _ = run("model", "info", model, "--format", "json")
    check(code == 0 and json.loads(out).get("path") == model, "model info --format json")
    code, out, err = run("model", "info", model, "--format", "tsv")
    check(code == 2, "model info has no tsv: exit 2")

    # trace analyze: md and json, each to the file its extension names.
    trace = os.path.join(source, "tests", "data", "traces", "bailian-fixture.jsonl")
    md_file, json_file = os.path.join(tmp, "t.md"), os.path.join(tmp, "t.json")
    code, out, _ = run("trace", "analyze", trace, "--trace-format", "bailian",
                       "-o", md_file, "-o", json_file)
    check(code == 0 and out == "", "trace analyze -o t.md -o t.json: stdout empty")
    with open(md_file) as f, open(json_file) as g:
        check(f.read().startswith("# Trace: ") and json.load(g).get("format") == "bailian",
              "trace analyze: md and json files")
    code, out, _ = run("trace", "analyze", trace, "--trace-format", "bailian", "--format", "csv")
    check(code == 2 and out == "", "trace analyze has no csv: exit 2")

if failures:
    sys.exit(1)
print("output_scheme_test: ok")
