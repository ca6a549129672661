#include "harness/report/capacity.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/analysis/memory.h"
#include "harness/gguf/model_shape.h"
#include "harness/kv/kv_arith.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string capacity_mib(double bytes) {
  return fmt::format("{:.2f}", bytes / (1024.0 * 1024.0));
}

std::string mib_of(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? capacity_mib(j[key].get<double>()) : "-";
}

std::string pct(const json& stats, const char* metric) {
  if (!stats.contains(metric) || !stats[metric].is_object()) {
    return "- / - / -";
  }
  const json& m = stats[metric];
  return fmt::format("{:.1f} / {:.1f} / {:.1f}", m["p50"].get<double>(), m["p90"].get<double>(),
                     m["p99"].get<double>());
}

std::string answer_sentence(const json& c) {
  const json& r = c["request"];
  const int answer = c.value("answer", 0);
  const double limit = r.value("ttft_p90_ms", 0.0);
  if (answer == 0) {
    return fmt::format("Not even one conversation keeps TTFT p90 under {:g} ms.", limit);
  }
  std::string tail = c.value("at_max", false)
                         ? fmt::format("the search stopped at --max {}; more may fit", answer)
                         : fmt::format("{} failed", c["first_failed"].get<int>());
  return fmt::format("**{} conversation{}** at once keep{} TTFT p90 under {:g} ms ({}).", answer,
                     answer == 1 ? "" : "s", answer == 1 ? "s" : "", limit, tail);
}

// " The TTFT p90, fitted as a non-decreasing curve of concurrency, reaches the limit at 5.4
// conversations [95% CI 4.6, 6.0]: a cliff (p90 x3.10 over one step)."
std::string boundary_sentence(const json& c) {
  const json& b = c.value("boundary", json::object());
  if (!b.contains("position")) {
    return "";
  }
  if (!b["boundary"].is_number()) {
    return fmt::format(
        " The fitted TTFT p90 does not reach the limit within the measured levels "
        "({}).",
        b.value("position", std::string()));
  }
  std::string ci;
  if (b["ci"].is_array()) {
    ci =
        fmt::format(" [95% CI {:.1f}, {:.1f}]", b["ci"][0].get<double>(), b["ci"][1].get<double>());
  }
  std::string shape = b.value("shape", std::string());
  if (b["jump"].is_number()) {
    shape += fmt::format(" (p90 x{:.2f} over the step)", b["jump"].get<double>());
  }
  return fmt::format(
      " The TTFT p90, fitted as a non-decreasing curve of concurrency (replicates pooled), "
      "reaches the limit at {:.1f} conversations{}: {}.",
      b["boundary"].get<double>(), ci, shape);
}

// The measured KV buffer, resident peak or Ollama /api/ps size of the level that answered, when
// it has them.
std::string measured_sentence(const json& c, int level) {
  for (const auto& l : c["levels"]) {
    if (l.value("level", 0) != level) {
      continue;
    }
    const json& b = l.value("block", json::object());
    std::vector<std::string> parts;
    if (b.contains("kv_bytes_logged")) {
      parts.push_back(fmt::format("the server logged {} MiB of KV buffer",
                                  capacity_mib(b["kv_bytes_logged"].get<double>())));
    }
    if (b.contains("ps_size_bytes")) {
      parts.push_back(
          fmt::format("Ollama's /api/ps size was {} MiB (weights, KV cache and buffers)",
                      capacity_mib(b["ps_size_bytes"].get<double>())));
    }
    if (b.contains("peak_rss_bytes")) {
      parts.push_back(fmt::format("its resident memory peaked at {} MiB",
                                  capacity_mib(b["peak_rss_bytes"].get<double>())));
    }
    if (parts.empty()) {
      return "";
    }
    return fmt::format(" Measured at {}: {}.", level, fmt::join(parts, ", "));
  }
  return "";
}

}  // namespace

std::optional<std::uint64_t> capacity_kv_bytes(const json& capacity, int conversations) {
  // capacity.json has run.json's "model"
  const auto shape = results::model_shape(capacity.value("model", json::object()));
  if (!shape || conversations < 1) {
    return std::nullopt;
  }
  const json& r = capacity["request"];
  const auto a = kv::arithmetic_for(*shape, r.value("cache_type", std::string("f16")));
  if (!a || !a->bytes_per_token) {
    return std::nullopt;
  }
  const auto n = static_cast<std::uint32_t>(conversations);
  const kv::CacheLayout layout{static_cast<std::uint64_t>(r.value("ctx", 0)) * n, n, false};
  return kv::cache_bytes(layout, *a->bytes_per_token);
}

std::string capacity_kv_sentence(const json& capacity, int conversations) {
  const json& r = capacity["request"];
  const std::string type = r.value("cache_type", std::string("f16"));
  const auto bytes = capacity_kv_bytes(capacity, conversations);
  if (!bytes) {
    return fmt::format("KV arithmetic: not available (no model shape, or {} does not fit it).",
                       type);
  }
  const auto n = static_cast<std::uint32_t>(conversations);
  const kv::CacheLayout layout{static_cast<std::uint64_t>(r.value("ctx", 0)) * n, n, false};
  return fmt::format(
      "KV arithmetic: {} conversation{} of {} tokens need {} MiB of KV cache at {} with this "
      "model ({} cells x {} bytes per token).",
      conversations, conversations == 1 ? "" : "s", r.value("ctx", 0),
      capacity_mib(static_cast<double>(*bytes)), type, kv::cache_cells(layout),
      *bytes / kv::cache_cells(layout));
}

void write_capacity_markdown(std::ostream& out, const json& c) {
  const json& r = c["request"];
  out << fmt::format(
      "## Capacity\n\n{}: {} tokens per conversation, cache {}, {}-token prompts, {} generated; "
      "TTFT p90 limit {:g} ms; levels 1 to {}, {} rounds each.\n\n",
      r.value("model", std::string("?")), r.value("ctx", 0), r.value("cache_type", std::string()),
      r.value("prompt_tokens", 0), r.value("max_tokens", 0), r.value("ttft_p90_ms", 0.0),
      r.value("max", 0), r.value("rounds", 0));
  if (c.value("status", std::string()) != "complete") {
    out << "The search did not finish; the levels below were measured.\n\n";
  } else {
    const int answer = c.value("answer", 0);
    out << answer_sentence(c) << boundary_sentence(c) << "\n\n"
        << capacity_kv_sentence(c, std::max(answer, 1)) << measured_sentence(c, answer) << "\n\n";
  }
  out << "| conversations | ok / calls | refused | TTFT ms p50 / p90 / p99 | inter-token ms p50 / "
         "p90 / p99 | prompt tok/s | decode tok/s | KV arithmetic MiB | KV logged MiB | peak "
         "RSS MiB | verdict | run |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& l : c["levels"]) {
    const json& s = l.value("concurrency", json::object());
    const json& b = l.value("block", json::object());
    const int level = l.value("level", 0);
    const auto kv = capacity_kv_bytes(c, level);
    out << fmt::format(
        "| {} | {} / {} | {} | {} | {} | {:.1f} | {:.1f} | {} | {} | {} | {} | {} |\n", level,
        s.value("ok", 0), s.value("calls", 0), s.value("refused", 0), pct(s, "ttft_ms"),
        pct(s, "itl_ms"), s.value("prompt_tok_per_s", 0.0), s.value("decode_tok_per_s", 0.0),
        kv ? capacity_mib(static_cast<double>(*kv)) : "-", mib_of(b, "kv_bytes_logged"),
        mib_of(b, "peak_rss_bytes"), l.value("verdict", std::string("-")),
        l.value("run_dir", std::string()));
  }
}

}  // namespace kvbench::report
