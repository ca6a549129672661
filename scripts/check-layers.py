#!/usr/bin/env python3
"""Fails when a layer below the workloads reaches into them.

A workload owns its parts (harness/workloads/<name>/) and reaches the layers through the table of
workloads (harness/workloads/workload.h and each layer's side of it beside it). So no file of
scenario/, plan/, run/, report/ or core/ includes anything of harness/workloads/, and none of
run/, report/, plan/ or core/ writes a workload's name as a string literal (the names are read
from each workload's spec.h, kName). OWNED_ELSEWHERE lists the files that still hold a workload's
per-call part (a call record's), each a known exception until those parts
move into their workloads; a file that no longer needs its exception fails too, so the list only
shrinks. Prints every finding; exit 1 if any.
"""
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
harness = os.path.join(root, "harness")
no_include = ["scenario", "plan", "run", "report", "core"]
no_name = ["run", "report", "plan", "core"]
OWNED_ELSEWHERE = {
    "harness/core/record.cpp",       # CallRecord::Turn and ::Replay to and from JSON
    "harness/core/call_fields.cpp",  # the conversation and turn columns
}

names = []
for folder in sorted(os.listdir(os.path.join(harness, "workloads"))):
    spec = os.path.join(harness, "workloads", folder, "spec.h")
    if os.path.isfile(spec):
        with open(spec, encoding="utf-8") as f:
            names += re.findall(r'kName\s*=\s*"([^"]+)"', f.read())
if not names:
    sys.exit("check-layers: no workload's kName found under harness/workloads/*/spec.h")

include = re.compile(r'^\s*#\s*include\s+"harness/workloads/', re.M)
literal = re.compile(r'"(%s)"' % "|".join(map(re.escape, names)))
comment = re.compile(r"//[^\n]*")
problems = []
used = set()
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
                found = literal.search(comment.sub("", text))
                if found and rel in OWNED_ELSEWHERE:
                    used.add(rel)
                elif found:
                    problems.append(f"{rel}: names the workload {found.group(0)}")
for rel in sorted(OWNED_ELSEWHERE - used):
    problems.append(f"{rel}: names no workload any more: take it off OWNED_ELSEWHERE")
for p in problems:
    print(f"check-layers: {p}")
if problems:
    sys.exit(1)
print(f"check-layers: {', '.join(no_include)} include nothing of harness/workloads/; "
      f"{', '.join(no_name)} name no workload ({', '.join(names)}) but in "
      f"{len(OWNED_ELSEWHERE)} known file(s)")
