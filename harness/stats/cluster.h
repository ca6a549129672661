#pragma once
// Standard errors at the level of the units that share their noise. A machine that slows down in
// episodes makes the calls of one round (or one server block) err together, so a standard error
// computed per call understates the uncertainty of anything that does not cancel within a unit.
// The cluster-robust ("sandwich") covariance sums each unit's scores before squaring them:
//   V = (XᵀX)⁻¹ [Σ_g X_gᵀ A_g e_g e_gᵀ A_g X_g] (XᵀX)⁻¹,
// CR1: A_g = I and the factor G/(G-1)·(N-1)/(N-K) (Cameron & Miller, "A Practitioner's Guide to
// Cluster-Robust Inference", 2015); CR2: A_g = (I - H_gg)^(-1/2), the Bell-McCaffrey adjustment
// that keeps few clusters honest (a pseudo-inverse where a unit's own fixed effect makes
// I - H_gg singular; Pustejovsky & Tipton 2018). Intervals use t with G - 1 degrees of freedom.

#include <cstddef>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

enum class ClusterCorrection { cr1, cr2 };

struct ClusteredCovariance {
  Eigen::MatrixXd covariance;  // K x K
  std::size_t clusters = 0;    // G
  double df = 0;               // G - 1
  ClusterCorrection correction = ClusterCorrection::cr2;
};

// The covariance of least-squares estimates whose design is `x` (N x K, full column rank) and
// residuals `residuals` (N), the rows grouped by `cluster` (N ids; any integers). Throws
// kvbench::Error on mismatched sizes, fewer than 2 clusters or a rank-deficient X.
ClusteredCovariance clustered_covariance(const Eigen::MatrixXd& x, const Eigen::VectorXd& residuals,
                                         const std::vector<int>& cluster,
                                         ClusterCorrection correction);

struct ClusteredEstimate {
  double estimate = 0;
  double se = 0;
  double df = 0;
  Interval ci;
};

// Least squares of y on x with the clustered standard error of coefficient `column` and its
// t(G-1) interval at `level`.
ClusteredEstimate clustered_fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                const std::vector<int>& cluster, Eigen::Index column,
                                ClusterCorrection correction, double level = 0.95);

}  // namespace kvbench::stats
