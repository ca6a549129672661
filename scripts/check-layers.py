#!/usr/bin/env python3
"""Fails when a layer below the workloads reaches into them.

A workload owns its parts (harness/workloads/<name>/) and reaches the layers through the table of
workloads (harness/workloads/workload.h and each layer's side of it beside it). So no file of
core/, scenario/, plan/, results/, run/, report/ or history/ includes anything of
harness/workloads/, and none of them names a workload in its code: not its name as a string
literal (read from each workload's spec.h, kName), nor a type a workload's headers declare (its
spec, its planned call's part, its record's part). Prints every finding; exit 1 if any.
"""
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
harness = os.path.join(root, "harness")
no_include = ["core", "scenario", "plan", "results", "run", "report", "history"]
no_name = ["core", "scenario", "plan", "results", "run", "report", "history"]

names = []
for folder in sorted(os.listdir(os.path.join(harness, "workloads"))):
    spec = os.path.join(harness, "workloads", folder, "spec.h")
    if os.path.isfile(spec):
        with open(spec, encoding="utf-8") as f:
            names += re.findall(r'kName\s*=\s*"([^"]+)"', f.read())
if not names:
    sys.exit("check-layers: no workload's kName found under harness/workloads/*/spec.h")

# The types the workloads' headers declare at namespace level (struct Turn, class TraceSource).
types = set()
for folder, _, files in os.walk(os.path.join(harness, "workloads")):
    for name in files:
        if name.endswith(".h"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
                types.update(re.findall(r"^(?:struct|class)\s+(\w+)\s*(?:[:{]|final)", text, re.M))
include = re.compile(r'^\s*#\s*include\s+"harness/workloads/', re.M)
literal = re.compile(r'"(%s)"' % "|".join(map(re.escape, names)))
identifier = re.compile(r"\b(%s)\b" % "|".join(map(re.escape, sorted(types))))
strings = re.compile(r'"(?:[^"\\\n]|\\.)*"')
comment = re.compile(r"//[^\n]*")
problems = []
for layer in sorted(set(no_include) | set(no_name)):
    for folder, _, files in os.walk(os.path.join(harness, layer)):
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if layer in no_include and include.search(text):
                problems.append(f"{rel}: includes a file of harness/workloads/")
            if layer in no_name:
                code = comment.sub("", text)
                found = literal.search(code)
                if found:
                    problems.append(f"{rel}: names the workload {found.group(0)}")
                typed = identifier.search(strings.sub('""', code))
                if typed:
                    problems.append(f"{rel}: names {typed.group(0)}, a workload's type")
for p in problems:
    print(f"check-layers: {p}")
if problems:
    sys.exit(1)
print(f"check-layers: {', '.join(no_include)} include nothing of harness/workloads/; "
      f"{', '.join(no_name)} name no workload ({', '.join(names)}) and none of its "
      f"{len(types)} types")
