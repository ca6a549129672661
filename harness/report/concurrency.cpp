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

std::string deferred(const results::BlockInfo& block) {
  return block.has("deferred") ? std::to_string(block.get("deferred", 0)) : "-";
}

std::string parallel_clause(const json& block, const json& q) {
  const int served = q.value("served_at_once", 0);
  const int in_flight = q.value("max_in_flight", 0);
  const auto it = block.find("num_parallel");
  if (it != block.end() && it->is_number_integer()) {
    return fmt::format("OLLAMA_NUM_PARALLEL was {} (set by kvbench)", it->get<int>());
  }
  if (it == block.end()) {
    return "";
  }
  // Attached: the server's setting is unknown; what was served at once bounds it.
  if (q.value("waited", 0) > 0 && served < in_flight) {
    return fmt::format(
        "kvbench attached and could not set OLLAMA_NUM_PARALLEL: the server's looks like {}",
        served);
  }
  return fmt::format(
      "kvbench attached and could not set OLLAMA_NUM_PARALLEL: the server's is at least {}",
      served);
}

}  // namespace

std::string queue_sentence(const results::BlockInfo& info) {
  const json& q = info.object("server_queue");
  if (!info.has("server_queue") || !info.detail["server_queue"].is_object()) {
    return "";
  }
  const int index = info.index;
  if (!q.contains("waited")) {
    return fmt::format(
        "block {}: the server reported no durations, so where calls waited is not known.", index);
  }
  const int waited = q.value("waited", 0);
  const int served = q.value("served_at_once", 0);
  const int in_flight = q.value("max_in_flight", 0);
  std::string text;
  if (waited == 0) {
    text = fmt::format("block {}: no call waited inside the server; it served up to {} at once",
                       index, served);
  } else {
    const json& w = q.value("waited_ms", json::object());
    text = fmt::format(
        "block {}: {} of {} calls waited inside the server before it read them (wait p50 {:.1f} "
        "ms, p90 {:.1f} ms, in their TTFT); it served at most {} at once while up to {} were in "
        "flight",
        index, waited, q.value("calls", 0), w.value("p50", 0.0), w.value("p90", 0.0), served,
        in_flight);
  }
  if (const std::string p = parallel_clause(info.detail, q); !p.empty()) {
    text += "; " + p;
  }
  text += ".";
  const int load = q.value("load_duration_reported", 0);
  if (load > 0) {
    text += fmt::format(
        " The server reported load_duration on {} call{} (p50 {:.1f} ms): Ollama counts waiting "
        "in its queue as loading.",
        load, load == 1 ? "" : "s", q.value("/load_duration_ms/p50"_json_pointer, 0.0));
  }
  return text;
}

void write_concurrency_markdown(std::ostream& out, const results::RunManifest& run) {
  bool any = false;
  bool variants = false;
  for (const auto& b : run.blocks) {
    any = any || b.has("concurrency");
    variants = variants || !b.variant.empty();
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
  for (const auto& b : run.blocks) {
    if (!b.has("concurrency")) {
      continue;
    }
    const json& s = b.object("concurrency");
    out << fmt::format("| {} ", b.index)
        << (variants ? fmt::format("| {} ", b.variant.empty() ? std::string("-") : b.variant) : "")
        << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {} | {} |\n",
                       b.num_ctx, b.cache_type.empty() ? std::string("-") : b.cache_type,
                       b.slots.value_or(0), s.value("ok", 0), s.value("refused", 0),
                       s.value("failed", 0), deferred(b), s.value("max_in_flight", 0),
                       s.value("prompt_tok_per_s", 0.0), s.value("decode_tok_per_s", 0.0),
                       percentiles(s, "ttft_ms"), percentiles(s, "itl_ms"));
  }
  bool first = true;
  for (const auto& b : run.blocks) {
    const std::string q = queue_sentence(b);
    if (q.empty()) {
      continue;
    }
    if (first) {
      out << "\nWhere the calls waited (Ollama picks each call's slot itself; calls beyond "
             "OLLAMA_NUM_PARALLEL queue in the server; wait = end-to-end time - the server's "
             "prompt and decode time):\n\n";
      first = false;
    }
    out << "- " << q << "\n";
  }
}

}  // namespace kvbench::report
