#pragma once
// The Ibragimov-Mueller cross-check of a clustered interval ("t-statistic based correlation and
// heterogeneity robust inference", Journal of Business & Economic Statistics 28, 2010): split the
// units into q groups that share no noise (consecutive rounds), estimate the coefficient in each
// group on its own, and take the t interval of the q estimates with q - 1 degrees of freedom. It
// needs no variance model at all and stays valid (conservative at 5 % for q up to 14) however the
// groups differ in size or noise, at the price of a wide interval for small q; 6-8 groups is
// the usual choice.

#include <cstddef>
#include <optional>
#include <vector>

#include <Eigen/Dense>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

struct GroupT {
  double estimate = 0;  // the mean of the groups' estimates
  double se = 0;        // their SD / sqrt(q)
  double df = 0;        // q - 1
  Interval ci;
  std::size_t groups = 0;
};

// The t interval at `level` of `estimates` (one per group); nullopt below two groups.
std::optional<GroupT> group_t(const std::vector<double>& estimates, double level = 0.95);

// The coefficient of the first column of `within` fitted in each of up to `max_groups` groups of
// consecutive units (units ordered by id, split as evenly as the count allows), each group with
// one level per unit, rows in `exclude` left out; then group_t of those estimates. Fewer groups
// (down to `min_groups`) where a group cannot be fitted; nullopt below that.
// `group_by` (N ids, each holding whole units; empty: the units themselves) is what groups are
// made of: where the units of one server start share its slope, groups must not split a start.
std::optional<GroupT> group_t_by_units(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                                       const std::vector<int>& unit,
                                       const std::vector<std::size_t>& exclude,
                                       std::size_t max_groups = 8, std::size_t min_groups = 6,
                                       const std::vector<int>& group_by = {});

}  // namespace kvbench::stats
