#include "harness/stats/cluster.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"
#include "harness/stats/least_squares.h"

namespace kvbench::stats {
namespace {

// Eigenvalues of I - H_gg below this are treated as zero (the unit's own fixed effect).
constexpr double kSingular = 1e-10;

// (I - H_gg)^(-1/2) by the symmetric eigendecomposition, pseudo-inverted where singular.
Eigen::MatrixXd inverse_root(const Eigen::MatrixXd& m) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m);
  Eigen::VectorXd d = eig.eigenvalues();
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    d(i) = d(i) > kSingular ? 1.0 / std::sqrt(d(i)) : 0.0;
  }
  return eig.eigenvectors() * d.asDiagonal() * eig.eigenvectors().transpose();
}

// Row indices per cluster, in the order of first appearance of each id.
std::vector<std::vector<Eigen::Index>> rows_by_cluster(const std::vector<int>& cluster) {
  std::map<int, std::size_t> slot;
  std::vector<std::vector<Eigen::Index>> out;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const auto [it, added] = slot.emplace(cluster[i], out.size());
    if (added) {
      out.emplace_back();
    }
    out[it->second].push_back(static_cast<Eigen::Index>(i));
  }
  return out;
}

}  // namespace

ClusteredCovariance clustered_covariance(const Eigen::MatrixXd& x, const Eigen::VectorXd& residuals,
                                         const std::vector<int>& cluster,
                                         ClusterCorrection correction) {
  const Eigen::Index n = x.rows();
  const Eigen::Index k = x.cols();
  if (residuals.size() != n || static_cast<Eigen::Index>(cluster.size()) != n) {
    throw Error(fmt::format("clustered_covariance: {} rows, {} residuals and {} cluster ids", n,
                            residuals.size(), cluster.size()));
  }
  const auto groups = rows_by_cluster(cluster);
  if (groups.size() < 2) {
    throw Error("clustered_covariance: needs at least 2 clusters");
  }
  const QrLeastSquares qr(x);
  if (!qr.full_rank()) {
    throw Error("clustered_covariance: the design is rank-deficient");
  }
  const Eigen::MatrixXd bread = qr.inverse_gram();
  Eigen::MatrixXd meat = Eigen::MatrixXd::Zero(k, k);
  for (const auto& rows : groups) {
    const auto m = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd xg(m, k);
    Eigen::VectorXd eg(m);
    for (Eigen::Index r = 0; r < m; ++r) {
      xg.row(r) = x.row(rows[static_cast<std::size_t>(r)]);
      eg(r) = residuals(rows[static_cast<std::size_t>(r)]);
    }
    if (correction == ClusterCorrection::cr2) {
      const Eigen::MatrixXd h = xg * bread * xg.transpose();
      eg = inverse_root(Eigen::MatrixXd::Identity(m, m) - h) * eg;
    }
    const Eigen::VectorXd score = xg.transpose() * eg;
    meat += score * score.transpose();
  }
  ClusteredCovariance out;
  out.clusters = groups.size();
  out.df = static_cast<double>(groups.size() - 1);
  out.correction = correction;
  out.covariance = bread * meat * bread;
  if (correction == ClusterCorrection::cr1) {
    const auto g = static_cast<double>(groups.size());
    out.covariance *= g / (g - 1) * static_cast<double>(n - 1) / static_cast<double>(n - k);
  }
  return out;
}

ClusteredEstimate clustered_fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                const std::vector<int>& cluster, Eigen::Index column,
                                ClusterCorrection correction, double level) {
  const QrLeastSquares qr(x);
  if (!qr.full_rank()) {
    throw Error("clustered_fit: the design is rank-deficient");
  }
  const Eigen::VectorXd beta = qr.solve(y);
  const Eigen::VectorXd residuals = y - x * beta;
  const ClusteredCovariance v = clustered_covariance(x, residuals, cluster, correction);
  ClusteredEstimate out;
  out.estimate = beta(column);
  out.se = std::sqrt(v.covariance(column, column));
  out.df = v.df;
  const double t = t_quantile(0.5 + level / 2, v.df);
  out.ci = {out.estimate - t * out.se, out.estimate + t * out.se, level};
  return out;
}

}  // namespace kvbench::stats
