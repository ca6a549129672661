#include "harness/measure/proc_tree.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "harness/measure/memory.h"

namespace kvbench::measure {
namespace {

// Parses a decimal field at the front of `text` and drops it and the following space.
std::optional<pid_t> take_number(std::string_view& text) {
  pid_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{}) {
    return std::nullopt;
  }
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  if (!text.empty() && text.front() == ' ') {
    text.remove_prefix(1);
  }
  return value;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const size_t open = line.find(" (");
  const size_t close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  std::string_view head = line.substr(0, open);
  const auto pid = take_number(head);
  std::string_view rest = line.substr(close + 1);
  if (!pid || !head.empty() || rest.size() < 3 || rest[0] != ' ' || rest[2] != ' ') {
    return std::nullopt;
  }
  ProcStat stat;
  stat.pid = *pid;
  stat.state = rest[1];
  rest.remove_prefix(3);
  const auto ppid = take_number(rest);
  const auto pgrp = take_number(rest);
  if (!ppid || !pgrp) {
    return std::nullopt;
  }
  stat.ppid = *ppid;
  stat.pgrp = *pgrp;
  return stat;
}

std::vector<pid_t> descendants_of(pid_t root, const std::vector<ProcStat>& table) {
  std::unordered_map<pid_t, std::vector<pid_t>> children;  // in table order
  for (const ProcStat& stat : table) {
    if (stat.pid != stat.ppid) {
      children[stat.ppid].push_back(stat.pid);
    }
  }
  std::vector<pid_t> found;
  std::unordered_set<pid_t> seen{root};  // a malformed table must not loop forever
  std::vector<pid_t> frontier{root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (pid_t parent : frontier) {
      const auto found_children = children.find(parent);
      if (found_children == children.end()) {
        continue;
      }
      for (pid_t child : found_children->second) {
        if (seen.insert(child).second) {
          next.push_back(child);
        }
      }
    }
    found.insert(found.end(), next.begin(), next.end());
    frontier = std::move(next);
  }
  return found;
}

std::vector<ProcStat> read_process_table() {
  std::vector<ProcStat> table;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (in && std::getline(in, line)) {
      if (auto stat = parse_proc_stat(line)) {
        table.push_back(*stat);
      }
    }
  }
  return table;
}

std::optional<TreeMemory> read_tree_memory(pid_t root) {
  const auto root_memory = read_process_memory(root);
  if (!root_memory) {
    return std::nullopt;
  }
  TreeMemory tree;
  auto add = [&tree](pid_t pid, const ProcessMemory& memory) {
    tree.pids.push_back(pid);
    tree.rss_bytes += memory.rss_bytes;
    tree.peak_rss_bytes += memory.peak_rss_bytes;
    tree.virtual_bytes += memory.virtual_bytes;
    tree.swap_bytes += memory.swap_bytes;
  };
  add(root, *root_memory);
  for (pid_t pid : descendants_of(root, read_process_table())) {
    if (const auto memory = read_process_memory(pid)) {
      add(pid, *memory);
    }
  }
  return tree;
}

}  // namespace kvbench::measure
