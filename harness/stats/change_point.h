#pragma once
// One sustained change in a series' level: the split into a before and an after that separates
// their means best, judged by the pooled t of the two segments with t(n - 2) and a Bonferroni
// bound over the splits tried. A step is what the machine did once and kept doing
// (another process took a core and stayed); an episode that ends inside the series splits it
// into three and is judged as noise the intervals already hold, and a ramp that a straight line
// fits better than any split is drift.

#include <cstddef>
#include <optional>
#include <vector>

namespace kvbench::stats {

struct Step {
  std::size_t at = 0;  // the first index of the after segment
  double shift = 0;    // mean after - mean before
  double t = 0;
  double p = 1;  // two-sided, Bonferroni-adjusted over the splits tried
};

struct StepRule {
  std::size_t min_segment = 2;  // values on each side of a split
  double alpha = 0.01;          // after the Bonferroni adjustment
  double min_shift = 0.0;       // |shift| below this is no step, whatever its p
};

// The best split of `y` when it passes the rule; nothing when no split does or `y` has fewer than
// 2 x min_segment + 1 values (one split alone proves nothing about where it is).
std::optional<Step> find_step(const std::vector<double>& y, const StepRule& rule);

}  // namespace kvbench::stats
