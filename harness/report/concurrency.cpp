#include "harness/report/concurrency.h"

#include <fmt/format.h>

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string percentiles(const json& stats, const char* metric) {
  if (!stats.contains(metric) || !stats[metric].is_object()) {
    return "-";
  }
  const json& m = stats[metric];
  return fmt::format("{:.1f} / {:.1f} / {:.1f}", m.value("p50", 0.0), m.value("p90", 0.0),
                     m.value("p99", 0.0));
}

std::string deferred(const json& block) {
  return block.contains("deferred") ? std::to_string(block["deferred"].get<int>()) : "-";
}

}  // namespace

void write_concurrency_markdown(std::ostream& out, const json& run) {
  if (!run.contains("blocks") || !run["blocks"].is_array()) {
    return;
  }
  bool any = false;
  bool variants = false;
  for (const auto& b : run["blocks"]) {
    any = any || b.contains("concurrency");
    variants = variants || b.contains("variant");
  }
  if (!any) {
    return;
  }
  out << "\n## Concurrency\n\nPer block, over its timed calls: throughput over the block's busy "
         "span, latency percentiles p50 / p90 / p99 in ms (inter-token: gaps between token "
         "events of a call).\n\n"
      << "| block " << (variants ? "| variant " : "")
      << "| num_ctx | cache | slots | ok | refused | failed | deferred | max in flight | prompt "
         "tok/s | decode tok/s | TTFT ms | inter-token ms |\n"
      << "|---:" << (variants ? "|---" : "")
      << "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& b : run["blocks"]) {
    if (!b.contains("concurrency")) {
      continue;
    }
    const json& s = b["concurrency"];
    out << fmt::format("| {} ", b.value("index", 0))
        << (variants ? fmt::format("| {} ", b.value("variant", std::string("-"))) : "")
        << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {} | {} |\n",
                       b.value("num_ctx", 0), b.value("cache_type", std::string("-")),
                       b.value("slots", 0), s.value("ok", 0), s.value("refused", 0),
                       s.value("failed", 0), deferred(b), s.value("max_in_flight", 0),
                       s.value("prompt_tok_per_s", 0.0), s.value("decode_tok_per_s", 0.0),
                       percentiles(s, "ttft_ms"), percentiles(s, "itl_ms"));
  }
}

}  // namespace kvbench::report
