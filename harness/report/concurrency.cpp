#include "harness/report/concurrency.h"

#include <fmt/format.h>

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string percentiles(const std::optional<results::Percentiles>& p) {
  if (!p) {
    return "-";
  }
  return fmt::format("{:.1f} / {:.1f} / {:.1f}", p->p50, p->p90, p->p99);
}

std::string deferred(const results::BlockInfo& block) {
  return block.deferred ? std::to_string(*block.deferred) : "-";
}

std::string parallel_clause(const results::BlockInfo& block, const results::ServerQueue::Waits& q) {
  const int served = q.served_at_once;
  const int in_flight = q.max_in_flight;
  if (block.num_parallel) {
    return fmt::format("OLLAMA_NUM_PARALLEL was {} (set by kvbench)", *block.num_parallel);
  }
  if (!block.num_parallel_unknown) {
    return "";
  }
  // Attached: the server's setting is unknown; what was served at once bounds it.
  if (q.waited > 0 && served < in_flight) {
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
  if (!info.server_queue) {
    return "";
  }
  const int index = info.index;
  if (!info.server_queue->waits) {
    return fmt::format(
        "block {}: the server reported no durations, so where calls waited is not known.", index);
  }
  const results::ServerQueue::Waits& q = *info.server_queue->waits;
  const auto waited = q.waited;
  const int served = q.served_at_once;
  const int in_flight = q.max_in_flight;
  std::string text;
  if (waited == 0) {
    text = fmt::format("block {}: no call waited inside the server; it served up to {} at once",
                       index, served);
  } else {
    const results::Percentiles w = q.waited_ms.value_or(results::Percentiles{});
    text = fmt::format(
        "block {}: {} of {} calls waited inside the server before it read them (wait p50 {:.1f} "
        "ms, p90 {:.1f} ms, in their TTFT); it served at most {} at once while up to {} were in "
        "flight",
        index, waited, info.server_queue->calls, w.p50, w.p90, served, in_flight);
  }
  if (const std::string p = parallel_clause(info, q); !p.empty()) {
    text += "; " + p;
  }
  text += ".";
  const auto load = q.load_duration_reported;
  if (load > 0) {
    text += fmt::format(
        " The server reported load_duration on {} call{} (p50 {:.1f} ms): Ollama counts waiting "
        "in its queue as loading.",
        load, load == 1 ? "" : "s", q.load_duration_ms.value_or(results::Percentiles{}).p50);
  }
  return text;
}

void write_concurrency_markdown(std::ostream& out, const results::RunManifest& run) {
  bool any = false;
  bool variants = false;
  for (const auto& b : run.blocks) {
    any = any || b.concurrency.has_value();
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
    if (!b.concurrency) {
      continue;
    }
    const results::ConcurrencyStats& s = *b.concurrency;
    out << fmt::format("| {} ", b.index)
        << (variants ? fmt::format("| {} ", b.variant.empty() ? std::string("-") : b.variant) : "")
        << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {} | {} |\n",
                       b.num_ctx, b.cache_type.empty() ? std::string("-") : b.cache_type,
                       b.slots.value_or(0), s.ok, s.refused, s.failed, deferred(b), s.max_in_flight,
                       s.prompt_tok_per_s.value_or(0.0), s.decode_tok_per_s.value_or(0.0),
                       percentiles(s.ttft_ms), percentiles(s.itl_ms));
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
