#include "harness/stats/unit_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/stats/cluster.h"
#include "harness/stats/least_squares.h"

namespace kvbench::stats {
namespace {

// The kept rows (not excluded, in a unit with at least two kept calls) with the design
// [within | one column per unit] and their unit ids.
struct UnitDesign {
  std::vector<std::size_t> rows;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<int> unit;
  Eigen::Index within = 0;
};

UnitDesign unit_design(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                       const std::vector<int>& unit, const std::vector<std::size_t>& exclude) {
  if (within.rows() != y.size() || static_cast<Eigen::Index>(unit.size()) != y.size()) {
    throw Error(fmt::format("unit_fit: {} rows, {} values and {} unit ids", within.rows(), y.size(),
                            unit.size()));
  }
  std::vector<bool> out(unit.size(), false);
  for (const auto i : exclude) {
    out.at(i) = true;
  }
  std::map<int, int> count;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    count[unit[i]] += out[i] ? 0 : 1;
  }
  std::map<int, Eigen::Index> column;
  UnitDesign d;
  d.within = within.cols();
  for (std::size_t i = 0; i < unit.size(); ++i) {
    if (!out[i] && count[unit[i]] >= 2) {
      d.rows.push_back(i);
      column.emplace(unit[i], d.within + static_cast<Eigen::Index>(column.size()));
    }
  }
  const auto n = static_cast<Eigen::Index>(d.rows.size());
  d.x = Eigen::MatrixXd::Zero(n, d.within + static_cast<Eigen::Index>(column.size()));
  d.y.resize(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    const std::size_t i = d.rows[static_cast<std::size_t>(r)];
    d.x.row(r).head(d.within) = within.row(static_cast<Eigen::Index>(i));
    d.x(r, column.at(unit[i])) = 1.0;
    d.y(r) = y(static_cast<Eigen::Index>(i));
    d.unit.push_back(unit[i]);
  }
  return d;
}

double median_magnitude(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) {
    return *mid;
  }
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

}  // namespace

std::vector<std::size_t> find_spikes(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                                     const std::vector<int>& unit, const SpikeRule& rule) {
  std::vector<std::size_t> spikes;
  const auto cap = std::max<std::size_t>(
      1, static_cast<std::size_t>(rule.max_share * static_cast<double>(y.size())));
  while (spikes.size() < cap) {
    const UnitDesign d = unit_design(within, y, unit, spikes);
    if (d.x.rows() <= d.x.cols()) {
      break;
    }
    const QrLeastSquares qr(d.x);
    if (!qr.full_rank()) {
      break;
    }
    const Eigen::VectorXd e = d.y - d.x * qr.solve(d.y);
    const Eigen::VectorXd h = qr.leverage();
    std::vector<double> adjusted(static_cast<std::size_t>(e.size()));
    for (Eigen::Index r = 0; r < e.size(); ++r) {
      adjusted[static_cast<std::size_t>(r)] = e(r) / std::sqrt(std::max(1e-12, 1.0 - h(r)));
    }
    std::vector<double> magnitude(adjusted.size());
    std::transform(adjusted.begin(), adjusted.end(), magnitude.begin(),
                   [](double a) { return std::abs(a); });
    const double scale = 1.4826 * median_magnitude(magnitude);
    const auto worst = std::max_element(magnitude.begin(), magnitude.end());
    if (*worst < rule.min_residual || *worst < rule.robust_z * scale) {
      break;
    }
    spikes.push_back(d.rows[static_cast<std::size_t>(worst - magnitude.begin())]);
  }
  return spikes;
}

UnitFit unit_fit(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                 const std::vector<int>& unit, const std::vector<std::size_t>& exclude,
                 const std::vector<int>& cluster) {
  const UnitDesign d = unit_design(within, y, unit, exclude);
  if (!cluster.empty() && cluster.size() != unit.size()) {
    throw Error(
        fmt::format("unit_fit: {} unit ids and {} cluster ids", unit.size(), cluster.size()));
  }
  std::vector<int> by = d.unit;
  for (std::size_t r = 0; r < by.size() && !cluster.empty(); ++r) {
    by[r] = cluster[d.rows[r]];
  }
  const auto n = d.x.rows();
  const auto k = d.x.cols();
  if (k - d.within < 2) {
    throw Error("unit_fit: fewer than two units hold two calls or more");
  }
  if (n <= k) {
    throw Error(
        fmt::format("unit_fit: {} calls leave no residual degrees of freedom for {} "
                    "coefficients",
                    n, k));
  }
  const QrLeastSquares qr(d.x);
  if (!qr.full_rank()) {
    throw Error("unit_fit: the within-unit columns do not vary within units");
  }
  const Eigen::VectorXd beta = qr.solve(d.y);
  const Eigen::VectorXd e = d.y - d.x * beta;
  const ClusteredCovariance v = clustered_covariance(d.x, e, by, ClusterCorrection::cr2);
  const double s2 = e.squaredNorm() / static_cast<double>(n - k);
  UnitFit out;
  out.beta = beta.head(d.within);
  out.covariance = v.covariance.topLeftCorner(d.within, d.within);
  out.iid_covariance = s2 * qr.inverse_gram().topLeftCorner(d.within, d.within);
  out.n = static_cast<std::size_t>(n);
  out.clusters = v.clusters;
  out.df = v.df;
  out.residual_sd = std::sqrt(s2);
  return out;
}

}  // namespace kvbench::stats
