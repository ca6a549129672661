// One server setting's slope: its design, its spikes and its fits on both scales.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/analysis/effects_detail.h"
#include "harness/core/error.h"
#include "harness/stats/unit_fit.h"

namespace kvbench::analysis {
namespace {

// A unit's id: its block x kUnitsPerBlock + its round.
constexpr int kUnitsPerBlock = 100000;

// The server starts from which a slope clustered by start is taken at the run's mean state.
constexpr std::size_t kStateStarts = 12;

// The within-unit design and the rounds' levels it was built from.
struct StateDesign {
  Eigen::MatrixXd x;
  std::vector<double> levels;  // log scale, in run order, each block's mean removed
  std::vector<int> blocks;     // each level's block
};

// The within-unit column [k] and beside it k x (the unit's level - their mean), the unit's level
// on the log scale being the mean of log y - b k over its calls (b from the fit of [k]): a machine
// whose slow stretches cost more at longer prompts makes the slope depend on the state, and with
// it the slope is taken at the run's mean state, where a round's state no longer leaves its
// slope in the residuals. With fewer than 8 units, the column [k] alone. `within_start`: the
// unit's level less its start's mean instead, so that a start's own level and slope (which its
// rounds share) do not pass for the machine's state.
StateDesign with_state(const Eigen::MatrixXd& x, const Eigen::VectorXd& log_y,
                       const std::vector<int>& unit, const std::vector<std::size_t>& exclude,
                       bool within_start = false) {
  const double b = stats::unit_fit(x, log_y, unit, exclude).beta(0);
  std::map<int, std::pair<double, int>> level;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if (std::find(exclude.begin(), exclude.end(), static_cast<std::size_t>(i)) == exclude.end()) {
      auto& l = level[unit[static_cast<std::size_t>(i)]];
      l.first += log_y(i) - b * x(i, 0);
      ++l.second;
    }
  }
  double mean = 0;
  for (const auto& [u, l] : level) {
    mean += l.first / l.second / static_cast<double>(level.size());
  }
  StateDesign design{x, {}, {}};
  // The levels in run order (unit ids grow with the block and the round), each block's mean
  // removed: rounds of one server share its level, which is no state of the machine.
  std::map<int, std::pair<double, int>> block;
  for (const auto& [u, l] : level) {
    auto& in_block = block[u / kUnitsPerBlock];
    in_block.first += l.first / l.second;
    ++in_block.second;
  }
  for (const auto& [u, l] : level) {
    const auto& in_block = block[u / kUnitsPerBlock];
    design.levels.push_back(l.first / l.second - in_block.first / in_block.second);
    design.blocks.push_back(u / kUnitsPerBlock);
  }
  if (level.size() < 8) {
    return design;
  }
  Eigen::MatrixXd& out = design.x;
  out.resize(x.rows(), 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const int u = unit[static_cast<std::size_t>(i)];
    const auto it = level.find(u);
    const auto& in_block = block[u / kUnitsPerBlock];
    const double centre = within_start ? in_block.first / in_block.second : mean;
    const double z = it == level.end() ? 0.0 : it->second.first / it->second.second - centre;
    out(i, 0) = x(i, 0);
    out(i, 1) = x(i, 0) * z;
  }
  return design;
}

// One column per prompt length but the first (1 where the call has that length): a spike is a
// call far from its own length's level in its round. Against a straight line in the length, the
// curve of log TTFT (prefill's intercept and L^2 term make it bend) would widen the residuals'
// scale until a call three times as long as its neighbours no longer stands out.
Eigen::MatrixXd length_columns(const Eigen::MatrixXd& k) {
  std::vector<double> levels;
  for (Eigen::Index i = 0; i < k.rows(); ++i) {
    if (std::find(levels.begin(), levels.end(), k(i, 0)) == levels.end()) {
      levels.push_back(k(i, 0));
    }
  }
  std::sort(levels.begin(), levels.end());
  if (levels.size() < 2) {
    return k;
  }
  Eigen::MatrixXd out =
      Eigen::MatrixXd::Zero(k.rows(), static_cast<Eigen::Index>(levels.size()) - 1);
  for (Eigen::Index i = 0; i < k.rows(); ++i) {
    for (std::size_t j = 1; j < levels.size(); ++j) {
      out(i, static_cast<Eigen::Index>(j) - 1) = k(i, 0) == levels[j] ? 1.0 : 0.0;
    }
  }
  return out;
}

// Log y on each prompt length's own level and the length of the call before it in its block
// (timed calls; per 1,000 tokens): a server or machine that a long prompt leaves slower (memory to
// give back, a cache to refill) makes the next call pay for it. Each length has its own level, so
// that no bend in the metric's curve leaks into the previous length, which within a shuffled round
// runs against a call's own. nullopt with one length, or where the fit fails.
std::optional<stats::UnitFit> carry_over_fit(const std::vector<EffectRow>& rows,
                                             const std::vector<std::size_t>& in_cell,
                                             const Eigen::MatrixXd& x, const Eigen::VectorXd& log_y,
                                             const std::vector<int>& unit,
                                             std::vector<std::size_t> exclude,
                                             const std::vector<int>& cluster) {
  const Eigen::MatrixXd own = length_columns(x);
  if (own.cols() == 1 && own.isApprox(x)) {
    return std::nullopt;
  }
  const auto call = [&](std::size_t i) { return rows[in_cell[i]].call; };
  std::vector<std::size_t> order(in_cell.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(call(a)->block, call(a)->seq) < std::pair(call(b)->block, call(b)->seq);
  });
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(x.rows(), own.cols() + 1);
  d.leftCols(own.cols()) = own;
  for (std::size_t p = 0; p < order.size(); ++p) {
    const auto i = static_cast<Eigen::Index>(order[p]);
    if (p > 0 && call(order[p - 1])->block == call(order[p])->block) {
      d(i, own.cols()) = x(static_cast<Eigen::Index>(order[p - 1]), 0);
    } else {
      exclude.push_back(order[p]);
    }
  }
  try {
    return stats::unit_fit(d, log_y, unit, exclude, cluster);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The state's fit on each round's level within its start, clustered by round; nothing where a
// start has one round (no level within it to read) or the fit fails.
std::optional<stats::UnitFit> state_fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& log_y,
                                        const std::vector<int>& unit,
                                        const std::vector<std::size_t>& exclude) {
  const StateDesign design = with_state(x, log_y, unit, exclude, true);
  if (design.x.cols() < 2 || design.x.col(1).cwiseAbs().maxCoeff() == 0.0) {
    return std::nullopt;
  }
  try {
    return stats::unit_fit(design.x, log_y, unit, exclude);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

CellSlope cell_slope(const std::vector<EffectRow>& rows, const std::vector<std::size_t>& in_cell,
                     std::string cell) {
  CellSlope out;
  out.cell = std::move(cell);
  const auto n = static_cast<Eigen::Index>(in_cell.size());
  Eigen::MatrixXd x(n, 1);
  Eigen::VectorXd y(n);
  Eigen::VectorXd log_y(n);
  std::vector<int> unit;
  std::vector<int> block;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& row = rows[in_cell[static_cast<std::size_t>(i)]];
    x(i, 0) = row.call->prompt_tokens / 1000.0;
    y(i) = row.value;
    log_y(i) = std::log(row.value);
    unit.push_back(row.call->block * kUnitsPerBlock + row.call->round);
    block.push_back(row.call->block);
  }
  // A server start may set its own slope (where its memory landed, its threads' placement), which
  // the rounds of that start share: from kMinBlocksPerLevel starts on, they are the units.
  out.starts = std::set<int>(block.begin(), block.end()).size();
  if (out.starts < static_cast<std::size_t>(kMinBlocksPerLevel)) {
    block.clear();
  }
  const auto local = stats::find_spikes(length_columns(x), log_y, unit, stats::SpikeRule{});
  for (const auto i : local) {
    out.spikes.push_back(in_cell[i]);
  }
  try {
    const StateDesign design = with_state(x, log_y, unit, local);
    out.levels = design.levels;
    out.blocks = design.blocks;
    // Over fewer than kStateStarts (12) starts, the state's column costs the slope its coverage (4
    // starts of 2 rounds covered 0.88-0.93 with it, 0.95 without, in start_units_test.cpp): the
    // slope is the one over this run's mix of states, and the state's own fit is kept for the
    // structure axis alone, on each round's level within its start and clustered by round (a
    // start's own level and slope are no state of the machine, and they cancel within it): 4
    // starts of 2 rounds found a state that was not there in 0.07-0.08 of runs this way, in
    // 0.11-0.17 on the run's levels clustered by start, the same as the slope.
    const bool few_starts = !block.empty() && out.starts < kStateStarts && design.x.cols() > 1;
    const Eigen::MatrixXd& slope_x = few_starts ? x : design.x;
    out.fit[0] = stats::unit_fit(slope_x, y, unit, local, block);
    out.fit[1] = stats::unit_fit(slope_x, log_y, unit, local, block);
    out.by_block = !block.empty();
    out.state = few_starts ? state_fit(x, log_y, unit, local) : out.fit[1];
    out.carry_over = carry_over_fit(rows, in_cell, x, log_y, unit, local, block);
    // Clustered by start, the groups are whole starts (6 or more needed).
    out.im[0] = stats::group_t_by_units(x, y, unit, local, 8, 6, block);
    out.im[1] = stats::group_t_by_units(x, log_y, unit, local, 8, 6, block);
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace kvbench::analysis
