// Markdown and JSON renderings of the memory analysis.

#include <fmt/format.h>

#include "harness/kv/kv_arith.h"
#include "harness/report/memory.h"

namespace kvbench::report {

using analysis::BlockMemoryRow;
using analysis::CtxSweep;
using analysis::kSlopeTolerance;
using analysis::kUpFrontFraction;
using analysis::SlopeFit;
using analysis::TypeComparison;

using nlohmann::json;

namespace {

constexpr double kMib = 1024.0 * 1024.0;

std::string mib(const std::optional<std::uint64_t>& v) {
  return v ? fmt::format("{:.2f}", static_cast<double>(*v) / kMib) : "-";
}
std::string mib(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v / kMib) : "-";
}

template <typename T>
json json_opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Growth between load and the longest prompt, and whether it shows the window reserved at load.
std::string up_front(const BlockMemoryRow& r) {
  if (!r.rss_after_load_bytes || !r.rss_after_longest_bytes || !r.kv_arithmetic_bytes) {
    return "-";
  }
  const double growth = static_cast<double>(*r.rss_after_longest_bytes) -
                        static_cast<double>(*r.rss_after_load_bytes);
  const double kv = static_cast<double>(*r.kv_arithmetic_bytes);
  return growth < kUpFrontFraction * kv
             ? fmt::format("yes (grew {:.2f} MiB, {:.0f}% of the KV size)", growth / kMib,
                           100.0 * growth / kv)
             : fmt::format("no (grew {:.2f} MiB, {:.0f}% of the KV size)", growth / kMib,
                           100.0 * growth / kv);
}

std::string measure_name(const std::string& m) {
  return m == "kv_logged"     ? "KV size the server logged"
         : m == "ollama_size" ? "Ollama's /api/ps size after load"
                              : "resident memory after load";
}

std::string verdict(const SlopeFit& f) {
  if (f.closest_type.empty()) {
    return "no model shape in run.json: no arithmetic to compare";
  }
  if (f.explaining.empty()) {
    return fmt::format(
        "no cache type's arithmetic is within {:.0f}% of the slope; the closest is {} (its "
        "arithmetic explains {:.2f} of the slope)",
        100 * kSlopeTolerance, f.closest_type, 1.0 / f.closest_ratio);
  }
  return fmt::format("**{}** explains the slope (slope / arithmetic = {:.3f}, within {:.0f}%){}",
                     fmt::join(f.explaining, " = "), f.closest_ratio, 100 * kSlopeTolerance,
                     f.explaining.size() > 1 ? "; these types have equal or near arithmetic" : "");
}

void write_blocks(std::ostream& out, const MemoryAnalysis& a) {
  out << "\n## Memory\n\nPer managed server block: resident memory (VmRSS of the server and its "
         "children) after load, read after a one-token request; after the block's longest "
         "prompt; the peak (VmHWM) at the end; the KV cache size the server logged; the "
         "arithmetic for the block's cache type at its cells (llama.cpp pads n_ctx up to a "
         "multiple of 256).\n\n";
  out << "| block | num_ctx | cells | cache | KV logged MiB | KV arithmetic MiB | RSS after load "
         "MiB | RSS after longest prompt MiB | peak MiB | GPU MiB | reserved up front |\n";
  out << "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : a.blocks) {
    out << fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {}{} | {} | {} | {} |\n", r.index, r.num_ctx, r.cells,
        r.cache_type, mib(r.kv_logged_bytes), mib(r.kv_arithmetic_bytes),
        mib(r.rss_after_load_bytes), mib(r.rss_after_longest_bytes),
        r.longest_prompt_tokens > 0 ? fmt::format(" ({} tokens)", r.longest_prompt_tokens) : "",
        mib(r.peak_rss_bytes), mib(r.gpu_after_load_bytes), up_front(r));
  }
  for (const auto& r : a.blocks) {
    for (const auto& n : r.notes) {
      out << fmt::format("\n- block {}: {}", r.index, n);
    }
  }
  out << "\n";
}

void write_sweep(std::ostream& out, const MemoryAnalysis& a, const CtxSweep& s) {
  out << fmt::format(
      "\n### Memory against num_ctx, server cache type {}\n\nStraight-line fit of memory against "
      "cells; the slope is bytes per token (95% CI with 3 or more blocks).\n\n",
      s.cache_type);
  out << "| measure | blocks | bytes/token | 95% CI |\n|---|---:|---:|---|\n";
  for (const auto& f : s.fits) {
    out << fmt::format(
        "| {} | {} | {:.0f} | {} |\n", measure_name(f.measure), f.n, f.bytes_per_token,
        f.ci_lower ? fmt::format("[{:.0f}, {:.0f}]", *f.ci_lower, *f.ci_upper) : std::string("-"));
  }
  if (a.shape) {
    out << "\n| cache type | arithmetic bytes/token |";
    for (const auto& f : s.fits) {
      out << " " << measure_name(f.measure) << ": slope / arithmetic |";
    }
    out << "\n|---|---:|";
    for (std::size_t i = 0; i < s.fits.size(); ++i) {
      out << "---:|";
    }
    out << "\n";
    for (const auto& t : kv::arithmetic_for_all_types(*a.shape)) {
      out << fmt::format("| {} | {} |", t.name,
                         t.bytes_per_token ? std::to_string(*t.bytes_per_token) : "n/a");
      for (const auto& f : s.fits) {
        out << (t.bytes_per_token
                    ? fmt::format(" {:.3f} |",
                                  f.bytes_per_token / static_cast<double>(*t.bytes_per_token))
                    : std::string(" - |"));
      }
      out << "\n";
    }
  }
  out << "\n";
  for (const auto& f : s.fits) {
    out << fmt::format("- {}: {}.\n", measure_name(f.measure), verdict(f));
  }
}

}  // namespace

void write_memory_markdown(std::ostream& out, const MemoryAnalysis& a) {
  if (a.blocks.empty()) {
    return;
  }
  write_blocks(out, a);
  for (const auto& s : a.sweeps) {
    write_sweep(out, a, s);
  }
  if (a.comparisons.empty()) {
    return;
  }
  out << "\n### Cache type at equal num_ctx\n\n| num_ctx | type / reference | KV logged ratio | "
         "arithmetic ratio | RSS saved MiB | arithmetic saving MiB |\n"
         "|---:|---|---:|---:|---:|---:|\n";
  for (const auto& c : a.comparisons) {
    out << fmt::format("| {} | {} / {} | {} | {} | {} | {} |\n", c.num_ctx, c.type, c.reference,
                       c.kv_logged_ratio ? fmt::format("{:.4f}", *c.kv_logged_ratio) : "-",
                       c.arithmetic_ratio ? fmt::format("{:.4f}", *c.arithmetic_ratio) : "-",
                       mib(c.rss_difference_bytes), mib(c.arithmetic_difference_bytes));
  }
}

json memory_json(const MemoryAnalysis& a) {
  json blocks = json::array();
  for (const auto& r : a.blocks) {
    blocks.push_back({{"index", r.index},
                      {"num_ctx", r.num_ctx},
                      {"cells", r.cells},
                      {"cache_type", r.cache_type},
                      {"kv_logged_bytes", json_opt(r.kv_logged_bytes)},
                      {"kv_arithmetic_bytes", json_opt(r.kv_arithmetic_bytes)},
                      {"rss_after_load_bytes", json_opt(r.rss_after_load_bytes)},
                      {"rss_after_longest_prompt_bytes", json_opt(r.rss_after_longest_bytes)},
                      {"longest_prompt_tokens", r.longest_prompt_tokens},
                      {"peak_rss_bytes", json_opt(r.peak_rss_bytes)},
                      {"gpu_after_load_bytes", json_opt(r.gpu_after_load_bytes)},
                      {"notes", r.notes}});
    if (r.kv_halves) {
      const auto& h = *r.kv_halves;
      blocks.back()["kv_halves"] = {{"k_arithmetic_bytes", h.k_arithmetic_bytes},
                                    {"v_arithmetic_bytes", h.v_arithmetic_bytes},
                                    {"k_logged_bytes", json_opt(h.k_logged_bytes)},
                                    {"v_logged_bytes", json_opt(h.v_logged_bytes)}};
    }
  }
  json sweeps = json::array();
  for (const auto& s : a.sweeps) {
    json fits = json::array();
    for (const auto& f : s.fits) {
      fits.push_back({{"measure", f.measure},
                      {"n", f.n},
                      {"bytes_per_token", f.bytes_per_token},
                      {"ci_lower", json_opt(f.ci_lower)},
                      {"ci_upper", json_opt(f.ci_upper)},
                      {"closest_type", f.closest_type},
                      {"closest_ratio", f.closest_ratio},
                      {"explaining", f.explaining},
                      {"tolerance", kSlopeTolerance}});
    }
    sweeps.push_back({{"cache_type", s.cache_type}, {"fits", fits}});
  }
  json comparisons = json::array();
  for (const auto& c : a.comparisons) {
    comparisons.push_back(
        {{"num_ctx", c.num_ctx},
         {"type", c.type},
         {"reference", c.reference},
         {"kv_logged_ratio", json_opt(c.kv_logged_ratio)},
         {"arithmetic_ratio", json_opt(c.arithmetic_ratio)},
         {"rss_difference_bytes", json_opt(c.rss_difference_bytes)},
         {"arithmetic_difference_bytes", json_opt(c.arithmetic_difference_bytes)}});
  }
  return {{"blocks", blocks}, {"ctx_sweeps", sweeps}, {"cache_type_comparisons", comparisons}};
}

}  // namespace kvbench::report
