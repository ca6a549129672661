#!/usr/bin/env python3
"""Fails when two source files of one target define a function of the same name outside a class.

Each library module (harness/<module>/) and test executable (tests/<module>/) is compiled as a
unity build, a module with the files of the workloads' folders that harness/workloads/files.cmake
gives it (a workload's part in its layer): its files are concatenated in batches. Two files' file-local helpers of one name then
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
# A workload's part in each layer: public overloads, one per workload (workloads/layers.h), and
# its planned call's part (plan/call_part.h).
workload_layers = {"parse", "check", "add_to_json", "slot_levels", "fill_block", "make_source",
                   "part_of_record", "report_section", "write_part", "describe_part",
                   "record_part"}
workloads = os.path.join("harness", "workloads")


def workload_modules():
    """Each workload file's module, from the lists of harness/workloads/files.cmake."""
    with open(os.path.join(root, workloads, "files.cmake"), encoding="utf-8") as f:
        text = f.read()
    out = {}
    for module, files in re.findall(r"set\(KVBENCH_WORKLOAD_FILES_(\w+)\s+([^)]*)\)", text):
        for name in files.split():
            out[os.path.join(workloads, *name.split("/"))] = os.path.join("harness", module)
    return out


module_of = workload_modules()


def target_of(rel, name):
    """The target a file is compiled into: its folder's, or for a workload's file its module's."""
    return module_of.get(os.path.join(rel, name), rel)


by_target = collections.defaultdict(list)
raw_string = re.compile(r'R"([^(\s]*)\(.*?\)\1"', re.S)
definition = re.compile(
    r"^(?:template\s*<[^>]*>\s*)?(?:static\s+|inline\s+|constexpr\s+)*"
    r"[A-Za-z_][\w:<>,\s*&]*?[\s*&]([A-Za-z_]\w*)\s*\(", re.M)
keywords = {"if", "for", "while", "switch", "return", "TEST", "TEST_F", "TEST_P",
            "INSTANTIATE_TEST_SUITE_P", "TYPED_TEST"}

for top in ("harness", "tests"):
    for folder, _, files in os.walk(os.path.join(root, top)):
        rel = os.path.relpath(folder, root)
        if any(rel == s or rel.startswith(s + os.sep) for s in separate):
            continue
        for f in sorted(files):
            if f.endswith(".cpp"):
                by_target[target_of(rel, f)].append(os.path.join(rel, f))

clashes = 0
for target, paths in sorted(by_target.items()):
    names = collections.defaultdict(set)
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8") as src:
            text = raw_string.sub('""', src.read())
        in_workload = path.startswith(os.path.join("harness", "workloads"))
        for m in definition.finditer(text):
            name = m.group(1)
            if name in keywords or name in exempt or (in_workload and name in workload_layers):
                continue
            names[name].add(os.path.relpath(path, target) if path.startswith(target) else path)
    for name, where in sorted(names.items()):
        if len(where) > 1:
            print(f"check-unity-names: {target}: '{name}' is defined in {', '.join(sorted(where))}")
            clashes += 1
if clashes:
    print(f"check-unity-names: {clashes} name(s) defined in more than one file of a target; "
          "rename the file-local helpers", file=sys.stderr)
    sys.exit(1)
print("check-unity-names: no function name is defined twice in one target")
