#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/analysis/effects_detail.h"
#include "harness/core/error.h"
#include "harness/stats/ols.h"

namespace kvbench::analysis {
namespace {

// One server block: its setting and its mean (log and linear) per prompt length.
struct BlockMeans {
  const CallRecord* first = nullptr;
  std::map<int, std::pair<double, int>> log_sum;  // prompt tokens -> (sum, calls)
  std::map<int, std::pair<double, int>> sum;
};

double mean_over_lengths(const std::map<int, std::pair<double, int>>& by_length,
                         std::optional<int> length) {
  if (length) {
    const auto& [s, c] = by_length.at(*length);
    return s / c;
  }
  double total = 0;
  for (const auto& [len, sc] : by_length) {
    total += sc.first / sc.second;
  }
  return total / static_cast<double>(by_length.size());
}

// The blocks' means and the design over blocks: intercept, then one column per non-reference
// level of each factor; how many blocks each level has.
struct BlockTable {
  std::map<int, BlockMeans> blocks;
  std::vector<std::pair<std::size_t, std::string>> columns;  // factor index, level
  Eigen::MatrixXd x;
  std::map<std::string, int> count;  // "cache_type=q8_0" -> blocks
};

BlockTable block_table(const std::vector<EffectRow>& rows, const std::vector<std::size_t>& spikes,
                       const std::vector<RestartFactor>& factors) {
  BlockTable t;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (std::find(spikes.begin(), spikes.end(), i) != spikes.end()) {
      continue;
    }
    auto& b = t.blocks[rows[i].call->block];
    b.first = b.first ? b.first : rows[i].call;
    auto& l = b.log_sum[rows[i].call->prompt_tokens];
    l.first += std::log(rows[i].value);
    ++l.second;
    auto& s = b.sum[rows[i].call->prompt_tokens];
    s.first += rows[i].value;
    ++s.second;
  }
  for (std::size_t f = 0; f < factors.size(); ++f) {
    std::set<std::string> levels;
    for (const auto& [id, b] : t.blocks) {
      levels.insert(factors[f].level(*b.first));
    }
    for (const auto& level : levels) {
      if (level != factors[f].reference) {
        t.columns.emplace_back(f, level);
      }
    }
  }
  t.x = Eigen::MatrixXd::Ones(static_cast<Eigen::Index>(t.blocks.size()),
                              static_cast<Eigen::Index>(t.columns.size()) + 1);
  Eigen::Index row = 0;
  for (const auto& [id, b] : t.blocks) {
    for (const auto& f : factors) {
      ++t.count[f.name + "=" + f.level(*b.first)];
    }
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      t.x(row, static_cast<Eigen::Index>(c) + 1) =
          factors[t.columns[c].first].level(*b.first) == t.columns[c].second ? 1.0 : 0.0;
    }
    ++row;
  }
  return t;
}

// Column c's coefficient over the blocks' means (at one prompt length, or over all), on the log
// scale (relative) or the metric's; nothing where a block lacks that length.
std::optional<Effect> block_effect(const Metric& m, const BlockTable& t, std::size_t c,
                                   std::optional<int> length, bool relative) {
  const Eigen::Index nb = t.x.rows();
  Eigen::VectorXd y(nb);
  Eigen::Index i = 0;
  for (const auto& [id, b] : t.blocks) {
    const auto& by = relative ? b.log_sum : b.sum;
    if (length && !by.contains(*length)) {
      return std::nullopt;
    }
    y(i++) = mean_over_lengths(by, length);
  }
  std::vector<std::string> names(static_cast<std::size_t>(t.x.cols()));
  for (std::size_t k = 0; k < names.size(); ++k) {
    names[k] = fmt::format("c{}", k);
  }
  stats::OlsOptions options;
  options.vif = false;
  const stats::OlsFit fit = stats::fit_ols(t.x, y, names, options);
  Effect e;
  e.metric = m.key;
  e.estimate = fit.coefficients[c + 1].estimate;
  e.se = fit.coefficients[c + 1].se;
  e.df = fit.df;
  e.clusters = static_cast<std::size_t>(nb);
  e.cluster_unit = "block";
  e.unit = relative ? "%" : m.unit;
  e = with_t_interval(e);
  return relative ? relative_effect(e) : e;
}

}  // namespace

void block_effects(const Metric& m, const std::vector<EffectRow>& rows,
                   const std::vector<std::size_t>& spikes,
                   const std::vector<RestartFactor>& factors,
                   const std::set<std::string>& interacting, Effects& out) {
  const BlockTable t = block_table(rows, spikes, factors);
  std::set<int> lengths;
  for (const auto& r : rows) {
    lengths.insert(r.call->prompt_tokens);
  }
  const auto df = t.x.rows() - t.x.cols();
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const auto& f = factors[t.columns[c].first];
    const std::string level = f.name + "=" + t.columns[c].second;
    const int at_level = t.count.at(level);
    const int at_reference =
        t.count.count(f.name + "=" + f.reference) != 0 ? t.count.at(f.name + "=" + f.reference) : 0;
    if (std::min(at_level, at_reference) < kMinBlocksPerLevel || df < 1) {
      out.withheld.push_back(
          {m.key, level,
           fmt::format("{} changes only with a server restart: its blocks are its independent "
                       "units, and {} has {} block(s) against {}'s {} (at least {} each, "
                       "alternated A B B A, give an interval)",
                       f.name, t.columns[c].second, at_level, f.reference, at_reference,
                       kMinBlocksPerLevel),
           kMinBlocksPerLevel});
      continue;
    }
    std::vector<std::optional<int>> at;
    if (interacting.contains(level)) {
      for (const int length : lengths) {
        at.emplace_back(length);
      }
    } else {
      at.emplace_back(std::nullopt);
    }
    try {
      for (const auto& length : at) {
        for (const bool relative : {false, true}) {
          if (auto e = block_effect(m, t, c, length, relative)) {
            e->starts = std::min(at_level, at_reference);
            e->term = length ? fmt::format("{}@prompt_tokens={}", level, *length) : level;
            out.effects.push_back(std::move(*e));
          }
        }
      }
    } catch (const Error& err) {
      out.withheld.push_back({m.key, level, err.what(), 0});
    }
  }
}

}  // namespace kvbench::analysis
