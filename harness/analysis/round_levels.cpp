// The rounds' levels of one server setting: how they follow one another (lag 1), whether the
// slope depends on them, and whether the machine's speed changed once and stayed changed.

#include <algorithm>
#include <cmath>

#include "harness/analysis/effects_detail.h"
#include "harness/core/optional_json.h"
#include "harness/stats/change_point.h"
#include "harness/stats/distributions.h"
#include "harness/stats/unit_fit.h"

namespace kvbench::analysis {

namespace {

// The first block whose rounds' levels changed once by 50 % or more and stayed changed, judged at
// 1 % over all the cell's blocks (Bonferroni) and on TTFT only: a change of the machine's speed
// moves every metric, and judging each would multiply the false alarms. 50 %, as for a spike
// (stats::SpikeRule): the slow stretches of the machines measured here (x1.35) stay below it, and
// rounds of a few calls caught in them split a block by chance.
std::optional<RoundLevels::Step> first_step(const Metric& m, const std::vector<double>& levels,
                                            const std::vector<int>& block_of) {
  if (m.key != "ttft_ms") {
    return std::nullopt;
  }
  std::vector<std::vector<double>> blocks;
  std::vector<int> ids;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (ids.empty() || ids.back() != block_of[i]) {
      ids.push_back(block_of[i]);
      blocks.emplace_back();
    }
    blocks.back().push_back(levels[i]);
  }
  stats::StepRule rule;
  rule.min_shift = stats::SpikeRule{}.min_residual;
  rule.alpha = 0.01 / static_cast<double>(std::max<std::size_t>(1, blocks.size()));
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (const auto s = stats::find_step(blocks[b], rule)) {
      return RoundLevels::Step{ids[b], s->at, 100 * std::expm1(s->shift), s->p};
    }
  }
  return std::nullopt;
}

}  // namespace

RoundLevels round_levels(const Metric& m, std::string cell, const std::vector<double>& levels,
                         const std::vector<int>& blocks,
                         const std::optional<stats::UnitFit>& log_fit,
                         const std::optional<stats::UnitFit>& carry_over_fit) {
  RoundLevels r;
  r.metric = m.key;
  r.cell = std::move(cell);
  r.levels = levels;
  r.blocks = blocks;
  r.step = first_step(m, levels, blocks);
  if (r.levels.size() >= 3) {
    const std::vector<double> a(r.levels.begin(), r.levels.end() - 1);
    const std::vector<double> b(r.levels.begin() + 1, r.levels.end());
    if (const double lag1 = stats::pearson_correlation(a, b); std::isfinite(lag1)) {
      r.lag1 = lag1;
    }
  }
  if (log_fit && log_fit->beta.size() == 2) {
    const auto& f = *log_fit;
    r.state_slope = f.beta(1);
    const double half = stats::t_quantile(0.975, f.df) * std::sqrt(f.covariance(1, 1));
    r.state_slope_ci = stats::Interval{f.beta(1) - half, f.beta(1) + half, 0.95};
  }
  if (carry_over_fit) {
    const auto& f = *carry_over_fit;
    const Eigen::Index c = f.beta.size() - 1;
    const double se = std::sqrt(f.covariance(c, c));
    const double half = stats::t_quantile(0.975, f.df) * se;
    r.carry_over = RoundLevels::CarryOver{
        100 * std::expm1(f.beta(c)),
        {100 * std::expm1(f.beta(c) - half), 100 * std::expm1(f.beta(c) + half), 0.95},
        se > 0 ? stats::t_two_sided_p(f.beta(c) / se, f.df) : 1.0};
  }
  return r;
}

void to_json(nlohmann::json& j, const RoundLevels& r) {
  j = {{"metric", r.metric},
       {"cell", r.cell},
       {"levels", r.levels},
       {"blocks", r.blocks},
       {"lag1", or_null(r.lag1)},
       {"state_slope", or_null(r.state_slope)},
       {"state_slope_ci", or_null(r.state_slope_ci)},
       {"step", r.step ? nlohmann::json{{"block", r.step->block},
                                        {"round", r.step->round},
                                        {"relative", r.step->relative},
                                        {"p", r.step->p}}
                       : nlohmann::json(nullptr)},
       {"carry_over", r.carry_over ? nlohmann::json{{"relative", r.carry_over->relative},
                                                    {"ci", r.carry_over->ci},
                                                    {"p", r.carry_over->p}}
                                   : nlohmann::json(nullptr)}};
}

}  // namespace kvbench::analysis
