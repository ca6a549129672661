#include "harness/stats/group_t.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/stats/distributions.h"
#include "harness/stats/least_squares.h"

namespace kvbench::stats {

std::optional<GroupT> group_t(const std::vector<double>& estimates, double level) {
  if (estimates.size() < 2) {
    return std::nullopt;
  }
  GroupT g;
  g.groups = estimates.size();
  g.df = static_cast<double>(g.groups) - 1;
  g.estimate = mean(estimates);
  g.se = sample_sd(estimates) / std::sqrt(static_cast<double>(g.groups));
  const double half = t_quantile(0.5 + level / 2, g.df) * g.se;
  g.ci = Interval{g.estimate - half, g.estimate + half, level};
  return g;
}

namespace {

// The first column's coefficient in each of q groups of the ids in `ids` (in order; each row's id
// in `by`), one level per unit within a group; nothing
// when a group has no residual degrees of freedom or its columns are collinear.
std::optional<std::vector<double>> group_estimates(const Eigen::MatrixXd& within,
                                                   const Eigen::VectorXd& y,
                                                   const std::vector<int>& unit,
                                                   const std::vector<int>& by,
                                                   const std::set<std::size_t>& left_out,
                                                   const std::set<int>& ids, std::size_t q) {
  // The k-th of n units in order goes to group k q / n.
  std::map<int, std::size_t> group_of;
  std::size_t k = 0;
  for (const int id : ids) {
    group_of[id] = k++ * q / ids.size();
  }
  std::vector<double> estimates;
  for (std::size_t g = 0; g < q; ++g) {
    std::vector<std::size_t> rows;
    std::map<int, Eigen::Index> level;
    for (std::size_t i = 0; i < unit.size(); ++i) {
      if (!left_out.contains(i) && group_of.at(by[i]) == g) {
        rows.push_back(i);
        level.emplace(unit[i], static_cast<Eigen::Index>(level.size()));
      }
    }
    const Eigen::Index cols = within.cols() + static_cast<Eigen::Index>(level.size());
    const auto n = static_cast<Eigen::Index>(rows.size());
    if (n <= cols) {
      return std::nullopt;
    }
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, cols);
    Eigen::VectorXd v(n);
    for (Eigen::Index r = 0; r < n; ++r) {
      const auto i = rows[static_cast<std::size_t>(r)];
      x.row(r).head(within.cols()) = within.row(static_cast<Eigen::Index>(i));
      x(r, within.cols() + level.at(unit[i])) = 1.0;
      v(r) = y(static_cast<Eigen::Index>(i));
    }
    const QrLeastSquares qr(x);
    if (!qr.full_rank()) {
      return std::nullopt;
    }
    estimates.push_back(qr.solve(v)(0));
  }
  return estimates;
}

}  // namespace

std::optional<GroupT> group_t_by_units(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                                       const std::vector<int>& unit,
                                       const std::vector<std::size_t>& exclude,
                                       std::size_t max_groups, std::size_t min_groups,
                                       const std::vector<int>& group_by) {
  const std::vector<int>& by = group_by.empty() ? unit : group_by;
  if (by.size() != unit.size()) {
    return std::nullopt;
  }
  const std::set<std::size_t> left_out(exclude.begin(), exclude.end());
  std::set<int> ids;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    if (!left_out.contains(i)) {
      ids.insert(by[i]);
    }
  }
  // The most groups, down to min_groups, whose every group can be fitted (a round of two calls
  // alone leaves none of its own).
  for (std::size_t q = std::min(max_groups, ids.size()); q >= std::max<std::size_t>(min_groups, 2);
       --q) {
    if (const auto estimates = group_estimates(within, y, unit, by, left_out, ids, q)) {
      return group_t(*estimates);
    }
  }
  return std::nullopt;
}

}  // namespace kvbench::stats
