#!/usr/bin/env python3
"""Fails when two source files of one target define a function of the same name outside a class.

Each library module (harness/<module>/) and test executable (tests/<module>/) is compiled as a
unity build: its files are concatenated in batches. Two files' file-local helpers of one name then
become overloads of each other, and a call may silently pick the other file's helper (a template
loses to a non-template, a default argument fills the gap). Give such helpers distinct names.
to_json/from_json overloads are public and exempt. Prints every clash; exit 1 if any.
"""
import collections
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Folders whose files are separate executables, not one target.
separate = {"tests/fuzz", "tests/fixtures", "tests/bench"}
exempt = {"to_json", "from_json", "main"}
raw_string = re.compile(r'R"([^(\s]*)\(.*?\)\1"', re.S)
definition = re.compile(
    r"^(?:template\s*<[^>]*>\s*)?(?:static\s+|inline\s+|constexpr\s+)*"
    r"[A-Za-z_][\w:<>,\s*&]*?[\s*&]([A-Za-z_]\w*)\s*\(", re.M)
keywords = {"if", "for", "while", "switch", "return", "TEST", "TEST_F", "TEST_P",
            "INSTANTIATE_TEST_SUITE_P", "TYPED_TEST"}

clashes = 0
for top in ("harness", "tests"):
    for folder, _, files in os.walk(os.path.join(root, top)):
        rel = os.path.relpath(folder, root)
        if any(rel == s or rel.startswith(s + os.sep) for s in separate):
            continue
        names = collections.defaultdict(set)
        for f in sorted(files):
            if not f.endswith(".cpp"):
                continue
            with open(os.path.join(folder, f), encoding="utf-8") as src:
                text = raw_string.sub('""', src.read())
            for m in definition.finditer(text):
                if m.group(1) not in keywords and m.group(1) not in exempt:
                    names[m.group(1)].add(f)
        for name, where in sorted(names.items()):
            if len(where) > 1:
                print(f"check-unity-names: {rel}: '{name}' is defined in {', '.join(sorted(where))}")
                clashes += 1
if clashes:
    print(f"check-unity-names: {clashes} name(s) defined in more than one file of a target; "
          "rename the file-local helpers", file=sys.stderr)
    sys.exit(1)
print("check-unity-names: no function name is defined twice in one target")
