#pragma once
// The memory section of a run's report, and its JSON: printers of analysis::MemoryAnalysis.

#include <ostream>

#include <nlohmann/json.hpp>

#include "harness/analysis/memory.h"

namespace kvbench::report {

using analysis::MemoryAnalysis;

// The "## Memory" section; nothing when no block measured memory.
void write_memory_markdown(std::ostream& out, const MemoryAnalysis& analysis);
nlohmann::json memory_json(const MemoryAnalysis& analysis);

}  // namespace kvbench::report
