#pragma once
// A server and everything it started: a launcher script may fork the real server, so memory is
// summed over the process and its descendants, found by scanning /proc/<pid>/stat for parent ids
// (the per-thread children files of /proc are missing on kernels built without
// CONFIG_PROC_CHILDREN).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/results/block_facts.h"

namespace kvbench::measure {

// The fields of one /proc/<pid>/stat line that kvbench uses.
struct ProcStat {
  pid_t pid = 0;
  char state = '?';  // R, S, D, Z (zombie), T, ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  friend bool operator==(const ProcStat&, const ProcStat&) = default;
};

// Parses "pid (comm) state ppid pgrp ...". comm may hold spaces and parentheses: it ends at the
// last ')'. Returns nullopt for text that does not have that shape.
std::optional<ProcStat> parse_proc_stat(std::string_view line);

// Every process descended from `root` in `table` (children, their children, ...), breadth first,
// excluding root itself; siblings in table order. Pure; empty when root has no children.
std::vector<pid_t> descendants_of(pid_t root, const std::vector<ProcStat>& table);

// Reads /proc/*/stat of every visible process (processes exiting meanwhile are skipped).
std::vector<ProcStat> read_process_table();

// Memory summed over a process and its live descendants (its fields and run.json's layout are
// results::TreeMemory's).
using TreeMemory = results::TreeMemory;

// Reads the memory of `root` and its descendants; nullopt when root is gone or a zombie.
// Descendants that vanish or are zombies are left out.
std::optional<TreeMemory> read_tree_memory(pid_t root);

}  // namespace kvbench::measure
