#include "harness/analysis/memory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <Eigen/Dense>

#include "harness/core/cache_level.h"
#include "harness/core/error.h"
#include "harness/kv/kv_arith.h"
#include "harness/stats/ols.h"

namespace kvbench::analysis {

using nlohmann::json;

namespace {

std::optional<std::uint64_t> rss_of(const std::optional<results::TreeMemory>& m) {
  return m ? std::optional(m->rss_bytes) : std::nullopt;
}

std::optional<std::uint64_t> arithmetic_bytes_per_token(
    const std::optional<gguf::ModelShape>& shape, const std::string& type) {
  if (!shape) {
    return std::nullopt;
  }
  const auto a = kv::level_bytes_per_token(*shape, type);  // both halves, or K/V apart
  return a ? std::optional(a->total()) : std::nullopt;
}

// The slots the block's server held, each with num_ctx: a managed Ollama's num_parallel, else a
// concurrent llama-server block's slots (-np), else one; nullopt for an attached Ollama running
// concurrent calls (num_parallel null: its OLLAMA_NUM_PARALLEL is unknown).
std::optional<std::uint32_t> server_slots(const results::BlockInfo& b) {
  const auto count = [](std::optional<int> v) -> std::optional<std::uint32_t> {
    if (v && *v >= 1) {
      return static_cast<std::uint32_t>(*v);
    }
    return std::nullopt;
  };
  if (b.num_parallel || b.num_parallel_unknown) {
    return count(b.num_parallel);
  }
  return b.slots ? count(*b.slots).value_or(1U) : 1U;
}

// A split pair's arithmetic per half beside the log's K and V sizes.
std::optional<BlockMemoryRow::Halves> halves_of(const results::BlockInfo& info,
                                                const std::optional<gguf::ModelShape>& shape,
                                                std::uint64_t cells) {
  if (!shape || !cache_halves(info.cache_type).split()) {
    return std::nullopt;
  }
  const auto bpt = kv::level_bytes_per_token(*shape, info.cache_type);
  if (!bpt) {
    return std::nullopt;
  }
  BlockMemoryRow::Halves h{bpt->k * cells, bpt->v * cells, std::nullopt, std::nullopt};
  if (info.memory.server_log && !info.memory.server_log->kv.empty()) {
    double k = 0;
    double v = 0;
    for (const auto& t : info.memory.server_log->kv) {
      k += t.k_mib;
      v += t.v_mib;
    }
    h.k_logged_bytes = static_cast<std::uint64_t>(std::llround(k * 1024.0 * 1024.0));
    h.v_logged_bytes = static_cast<std::uint64_t>(std::llround(v * 1024.0 * 1024.0));
  }
  return h;
}

BlockMemoryRow row_of(const results::BlockInfo& info,
                      const std::optional<gguf::ModelShape>& shape) {
  const results::ServerMemory& m = info.memory;
  BlockMemoryRow r;
  r.index = info.index;
  r.num_ctx = info.num_ctx;
  const auto slots = server_slots(info);
  const auto ctx = static_cast<std::uint64_t>(std::max(r.num_ctx, 0));
  r.cells = kv::cache_cells({ctx * slots.value_or(1), slots.value_or(1), false});
  r.cache_type = info.cache_type;
  r.kv_logged_bytes = m.kv_bytes_logged;
  if (const auto bpt = arithmetic_bytes_per_token(shape, r.cache_type); bpt && slots) {
    r.kv_arithmetic_bytes = *bpt * r.cells;
  }
  r.kv_halves = halves_of(info, shape, r.cells);
  r.rss_after_load_bytes = rss_of(m.after_load);
  r.rss_after_longest_bytes = rss_of(m.after_longest_prompt);
  if (m.after_longest_prompt) {
    r.longest_prompt_tokens = m.longest_prompt_tokens.value_or(0);
  }
  r.peak_rss_bytes = m.peak_rss_bytes;
  r.gpu_after_load_bytes = m.gpu_after_load_bytes;
  if (info.api_ps_after_load) {
    r.ollama_size_bytes = info.api_ps_after_load->size_bytes;
  }
  r.notes = info.memory_notes;
  return r;
}

std::vector<SlopeFit> fits_for(const std::vector<const BlockMemoryRow*>& rows,
                               const std::optional<gguf::ModelShape>& shape) {
  std::vector<SlopeFit> out;
  const auto add = [&](const char* measure, auto get) {
    std::vector<double> x;
    std::vector<double> y;
    for (const auto* r : rows) {
      if (const auto v = get(*r)) {
        x.push_back(static_cast<double>(r->cells));
        y.push_back(static_cast<double>(*v));
      }
    }
    if (auto f = fit_slope(measure, x, y, shape)) {
      out.push_back(std::move(*f));
    }
  };
  add("kv_logged", [](const BlockMemoryRow& r) { return r.kv_logged_bytes; });
  add("rss_after_load", [](const BlockMemoryRow& r) { return r.rss_after_load_bytes; });
  add("ollama_size", [](const BlockMemoryRow& r) { return r.ollama_size_bytes; });
  return out;
}

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) {
    return std::nullopt;
  }
  double s = 0;
  for (double x : v) {
    s += x;
  }
  return s / static_cast<double>(v.size());
}

std::vector<TypeComparison> compare_types(const std::vector<BlockMemoryRow>& rows,
                                          const std::optional<gguf::ModelShape>& shape) {
  // num_ctx -> type -> (kv logged values, rss values)
  std::map<int, std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>> g;
  for (const auto& r : rows) {
    auto& cell = g[r.num_ctx][r.cache_type];
    if (r.kv_logged_bytes) {
      cell.first.push_back(static_cast<double>(*r.kv_logged_bytes));
    }
    if (r.rss_after_load_bytes) {
      cell.second.push_back(static_cast<double>(*r.rss_after_load_bytes));
    }
  }
  std::vector<TypeComparison> out;
  for (const auto& [ctx, types] : g) {
    if (types.size() < 2) {
      continue;
    }
    const std::string ref = types.count("f16") ? "f16" : types.begin()->first;
    const auto ref_bpt = arithmetic_bytes_per_token(shape, ref);
    const auto cells = static_cast<double>(kv::pad_ctx(static_cast<std::uint64_t>(ctx)));
    for (const auto& [type, values] : types) {
      if (type == ref) {
        continue;
      }
      TypeComparison c{ctx, type, ref, {}, {}, {}, {}};
      const auto kv_t = mean_of(values.first);
      const auto kv_r = mean_of(types.at(ref).first);
      if (kv_t && kv_r && *kv_r > 0) {
        c.kv_logged_ratio = *kv_t / *kv_r;
      }
      const auto rss_t = mean_of(values.second);
      const auto rss_r = mean_of(types.at(ref).second);
      if (rss_t && rss_r) {
        c.rss_difference_bytes = *rss_r - *rss_t;
      }
      const auto bpt = arithmetic_bytes_per_token(shape, type);
      if (bpt && ref_bpt && *ref_bpt > 0) {
        c.arithmetic_ratio = static_cast<double>(*bpt) / static_cast<double>(*ref_bpt);
        c.arithmetic_difference_bytes =
            (static_cast<double>(*ref_bpt) - static_cast<double>(*bpt)) * cells;
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

std::optional<SlopeFit> fit_slope(const std::string& measure, const std::vector<double>& cells,
                                  const std::vector<double>& ys,
                                  const std::optional<gguf::ModelShape>& shape) {
  const std::set<double> distinct(cells.begin(), cells.end());
  if (cells.size() != ys.size() || cells.size() < 2 || distinct.size() < 2) {
    return std::nullopt;
  }
  SlopeFit f;
  f.measure = measure;
  f.n = cells.size();
  if (cells.size() == 2) {
    f.bytes_per_token = (ys[1] - ys[0]) / (cells[1] - cells[0]);
  } else {
    const auto n = static_cast<Eigen::Index>(cells.size());
    Eigen::MatrixXd x(n, 2);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      x(i, 0) = 1.0;
      x(i, 1) = cells[static_cast<std::size_t>(i)];
      y(i) = ys[static_cast<std::size_t>(i)];
    }
    stats::OlsOptions options;
    options.vif = false;
    const auto fit = stats::fit_ols(x, y, {"intercept", "cells"}, options);
    const auto& slope = fit.coefficient("cells");
    f.bytes_per_token = slope.estimate;
    f.ci_lower = slope.ci.lower;
    f.ci_upper = slope.ci.upper;
  }
  if (!shape) {
    return f;
  }
  std::vector<std::pair<double, std::string>> by_distance;
  for (const auto& a : kv::arithmetic_for_all_types(*shape)) {
    if (a.bytes_per_token && *a.bytes_per_token > 0) {
      const double ratio = f.bytes_per_token / static_cast<double>(*a.bytes_per_token);
      by_distance.emplace_back(std::abs(ratio - 1.0), std::string(a.name));
      if (by_distance.size() == 1 || std::abs(ratio - 1.0) < std::abs(f.closest_ratio - 1.0)) {
        f.closest_type = a.name;
        f.closest_ratio = ratio;
      }
    }
  }
  std::stable_sort(by_distance.begin(), by_distance.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [distance, name] : by_distance) {
    if (distance <= kSlopeTolerance) {
      f.explaining.push_back(name);
    }
  }
  return f;
}

MemoryAnalysis analyze_memory(const results::RunManifest& run) {
  MemoryAnalysis a;
  a.shape = run.shape();
  for (const auto& b : run.blocks) {
    if (b.memory.after_load || b.memory.kv_bytes_logged || !b.memory_notes.empty() ||
        (b.api_ps_after_load && b.api_ps_after_load->size_bytes)) {
      a.blocks.push_back(row_of(b, a.shape));
    }
  }
  std::map<std::string, std::vector<const BlockMemoryRow*>> by_type;
  for (const auto& r : a.blocks) {
    by_type[r.cache_type].push_back(&r);
  }
  for (const auto& [type, rows] : by_type) {
    CtxSweep sweep{type, fits_for(rows, a.shape)};
    if (!sweep.fits.empty()) {
      a.sweeps.push_back(std::move(sweep));
    }
  }
  a.comparisons = compare_types(a.blocks, a.shape);
  return a;
}

}  // namespace kvbench::analysis
