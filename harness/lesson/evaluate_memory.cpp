// The context-window and cache-type labs: memory against num_ctx and between cache types.
#include <fmt/format.h>

#include "harness/analysis/conditions.h"
#include "harness/analysis/memory.h"
#include "harness/lesson/evaluate.h"

namespace kvbench::lesson {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// The KV buffer the server logs is exact arithmetic; resident memory also holds compute buffers
// and allocator slack that grow with the window, so its slope gets a wider band.
constexpr double kLoggedTolerance = 0.10;
constexpr double kResidentTolerance = 0.25;

std::optional<double> per_token(const std::optional<std::uint64_t>& bytes, std::uint64_t cells) {
  if (!bytes || cells == 0) {
    return std::nullopt;
  }
  return static_cast<double>(*bytes) / static_cast<double>(cells);
}
}  // namespace

LabOutcome evaluate_context_window(const analysis::RunAnalysis& run) {
  LabOutcome out{"context-window", {}, {}, {}, nlohmann::json::object()};
  const auto& mem = run.memory;
  const analysis::BlockMemoryRow* lo = nullptr;
  const analysis::BlockMemoryRow* hi = nullptr;
  std::optional<double> arith;
  std::string type;
  for (const auto& b : mem.blocks) {
    std::string text = b.rss_after_load_bytes
                           ? fmt::format("{:.1f} MiB resident after load",
                                         static_cast<double>(*b.rss_after_load_bytes) / kMiB)
                           : std::string("resident memory not measured");
    if (b.kv_logged_bytes) {
      text +=
          fmt::format(" (KV buffer {:.2f} MiB)", static_cast<double>(*b.kv_logged_bytes) / kMiB);
    }
    out.measured[fmt::format("mem_ctx_{}", b.num_ctx)] = text;
    if (!lo || b.num_ctx < lo->num_ctx) {
      lo = &b;
    }
    if (!hi || b.num_ctx > hi->num_ctx) {
      hi = &b;
    }
    if (!arith) {
      arith = per_token(b.kv_arithmetic_bytes, b.cells);
      type = b.cache_type;
    }
  }
  if (lo && hi && lo != hi && lo->rss_after_load_bytes && hi->rss_after_load_bytes) {
    const double added = static_cast<double>(*hi->rss_after_load_bytes) -
                         static_cast<double>(*lo->rss_after_load_bytes);
    out.measured["mem_added"] = fmt::format("{:.1f} MiB resident from num_ctx {} to {}",
                                            added / kMiB, lo->num_ctx, hi->num_ctx);
  }
  if (arith) {
    out.measured["kv_arith_active"] = fmt::format("{:.0f} B ({}, this model)", *arith, type);
  }
  RatioInput in{std::nullopt, std::nullopt, arith, kLoggedTolerance, "bytes per token"};
  std::string slopes;
  for (const auto& sweep : mem.sweeps) {
    for (const auto& f : sweep.fits) {
      slopes += fmt::format("{}{:.0f} B ({})", slopes.empty() ? "" : "; ", f.bytes_per_token,
                            f.measure == "kv_logged" ? "KV buffer logged" : "resident memory");
      out.numbers["slope_" + f.measure] = f.bytes_per_token;
      if (!in.measured) {
        in.measured = f.bytes_per_token;
        if (f.ci_lower && f.ci_upper) {
          in.ci = stats::Interval{*f.ci_lower, *f.ci_upper, 0.95};
        }
        in.tolerance = f.measure == "kv_logged" ? kLoggedTolerance : kResidentTolerance;
        in.what =
            f.measure == "kv_logged" ? "logged KV bytes per token" : "resident bytes per token";
      }
    }
  }
  if (!slopes.empty()) {
    out.measured["mem_slope"] = slopes;
  }
  add_check(out, "memory_slope", check_relative(in));
  return out;
}

// Ollama logs no KV buffer, but the /api/ps sizes of one model loaded at one num_ctx with f16 and
// with q8_0 differ by exactly the KV bytes q8_0 saves. Nothing unless both were measured.
std::optional<double> api_ps_saving(const results::RunManifest& run, int num_ctx) {
  std::optional<double> f16;
  std::optional<double> q8;
  for (const auto& b : run.blocks) {
    if (b.num_ctx != num_ctx || !b.api_ps_after_load || !b.api_ps_after_load->size_bytes) {
      continue;
    }
    const auto& type = b.cache_type;
    if (type == "f16") {
      f16 = static_cast<double>(*b.api_ps_after_load->size_bytes);
    } else if (type == "q8_0") {
      q8 = static_cast<double>(*b.api_ps_after_load->size_bytes);
    }
  }
  if (!f16 || !q8) {
    return std::nullopt;
  }
  return *f16 - *q8;
}

LabOutcome evaluate_cache_type(const analysis::RunAnalysis& run) {
  LabOutcome out{"cache-type", {}, {}, {}, nlohmann::json::object()};
  const auto& mem = run.memory;
  for (const auto& b : mem.blocks) {
    const auto logged = per_token(b.kv_logged_bytes, b.cells);
    const auto arith = per_token(b.kv_arithmetic_bytes, b.cells);
    if (logged && (b.cache_type == "f16" || b.cache_type == "q8_0")) {
      out.measured["kv_" + b.cache_type + "_per_token"] = fmt::format(
          "{:.0f} B logged ({:.0f} B arithmetic, this model)", *logged, arith.value_or(0));
    }
  }
  RatioInput in{std::nullopt, std::nullopt, std::nullopt, kLoggedTolerance,
                "q8_0 / f16 logged KV size"};
  for (const auto& c : mem.comparisons) {
    if (c.type == "q8_0" && c.reference == "f16" && !in.measured) {
      in.measured = c.kv_logged_ratio;
      in.expected = c.arithmetic_ratio;
      if (c.kv_logged_ratio) {
        out.measured["kv_ratio"] =
            fmt::format("{:.3f} at num_ctx {}", *c.kv_logged_ratio, c.num_ctx);
        out.numbers["kv_ratio"] = *c.kv_logged_ratio;
      }
    }
  }
  const auto per_token_kv =
      run.run.model.is_object()
          ? run.run.model.value("kv_bytes_per_token", nlohmann::json::object())
          : nlohmann::json::object();
  const auto ctx = run.run.scenario.value("factors", nlohmann::json::object())
                       .value("num_ctx", std::vector<int>{});
  if ((!in.measured || !in.expected) && ctx.size() == 1 && per_token_kv.contains("f16") &&
      per_token_kv.contains("q8_0")) {
    if (const auto saving = api_ps_saving(run.run, ctx.front())) {
      const double expected =
          (per_token_kv["f16"].get<double>() - per_token_kv["q8_0"].get<double>()) * ctx.front();
      in = {saving, std::nullopt, expected, kLoggedTolerance,
            "bytes q8_0 saves by the /api/ps size difference (no KV buffer reported)"};
      out.measured["kv_ratio"] = fmt::format(
          "{:.0f} B saved by q8_0 at num_ctx {} (/api/ps size difference; arithmetic {:.0f} B)",
          *saving, ctx.front(), expected);
      out.numbers["kv_saving_bytes"] = *saving;
    }
  }
  add_check(out, "cache_ratio", check_relative(in));
  // Beyond the lesson, which did not test whether q8_0 changed any answers: shown, not judged.
  const auto& a = run.answers;
  for (const auto& t : a.types) {
    if (t.cache_type != "q8_0" || t.prompts == 0) {
      continue;
    }
    const std::string control =
        a.controls.empty() ? "no control ran"
        : a.deterministic  ? "the f16 control agreed on every token"
                           : "the f16 control did not agree: the server is not deterministic here";
    out.notes.push_back(fmt::format(
        "Beyond the lesson: greedy answers under q8_0 identical to f16's in {} of {} prompts "
        "({:.1f} % of {} the same){}; {}",
        t.identical_answers, t.prompts, 100 * t.identical_share,
        t.text_only ? "bytes (text only)" : "tokens",
        t.mean_first_diff ? fmt::format(", first difference at {} {:.0f} on average",
                                        t.text_only ? "byte" : "token", *t.mean_first_diff)
                          : "",
        control));
    out.numbers["answers_identical"] = t.identical_answers;
    out.numbers["answers_prompts"] = t.prompts;
    out.numbers["answers_deterministic"] = a.deterministic;
  }
  for (const auto& row : run.conditions) {
    out.notes.push_back(fmt::format(
        "{} at {} prompt tokens: median TTFT {:.1f} ms, decode {:.1f} tok/s (shown, not judged)",
        row.cache_type, row.prompt_tokens, row.ttft_ms.median, row.decode_tps.median));
  }
  return out;
}

}  // namespace kvbench::lesson
