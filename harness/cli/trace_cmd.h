#pragma once
// `kvbench trace analyze`: what a request trace could reuse, without a server. Its requests,
// blocks and unique blocks; the infinite-cache hit rates under their three named definitions; the
// hit rates of a block LRU at each capacity asked for; and the working set over time (the distinct
// blocks the requests that arrived so far referenced, at ten evenly spaced times of the trace's
// span, against each capacity). One JSON document (kvbench.trace-analysis v1) carries it all; the
// Markdown report is rendered from it.

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kvbench::cli {

struct TraceAnalyzeOptions {
  std::string file;
  std::string trace_format = "mooncake";     // mooncake, bailian or weka
  int block_tokens = 0;                      // 0: the format's block size
  std::vector<std::size_t> capacity_blocks;  // block-LRU capacities, in the order given
};

// The analysis as its JSON document. Throws kvbench::InputError (exit 2) for an unknown trace
// format, a capacity of 0 blocks, or a trace that cannot be read (naming the file, the line and
// the field).
nlohmann::json analyze_trace(const TraceAnalyzeOptions& options);

// The analysis (as analyze_trace returns it) in Markdown.
void write_trace_analysis_markdown(std::ostream& out, const nlohmann::json& analysis);

// Registers `trace` and its `analyze` under `app`.
void setup_trace_command(CLI::App& app);

}  // namespace kvbench::cli
