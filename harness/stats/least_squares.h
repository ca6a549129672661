#pragma once
// Least squares by column-pivoted Householder QR (never the normal equations). Each column of X
// is first scaled to unit length, so the rank decision does not depend on units, and the
// estimates are mapped back to the original scale.

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace kvbench::stats {

// Relative size of the smallest kept pivot of the unit-column R against the largest: X is
// treated as rank-deficient below it (a condition number above about 1e12).
inline constexpr double kRankTolerance = 1e-12;

class QrLeastSquares {
 public:
  // Factorizes X (n x p). Never throws; check full_rank() before using the solve functions.
  explicit QrLeastSquares(const Eigen::MatrixXd& x);

  bool full_rank() const { return full_rank_; }
  Eigen::Index rank() const { return qr_.rank(); }

  // Why X is rank-deficient, naming the first dependent column and the columns it is a
  // combination of, e.g. "predictor 'b' is collinear with 'a', 'intercept' (rank 2 of 3)".
  // Empty when X has full column rank.
  std::string collinearity_message(const std::vector<std::string>& names) const;

  // Least-squares coefficients for y (length n), in the original units of X.
  Eigen::VectorXd solve(const Eigen::VectorXd& y) const;
  // (XᵀX)⁻¹ computed as D⁻¹P R⁻¹R⁻ᵀ PᵀD⁻¹ from the factorization.
  Eigen::MatrixXd inverse_gram() const;
  // Diagonal of the hat matrix X(XᵀX)⁻¹Xᵀ: the squared row norms of the thin Q.
  Eigen::VectorXd leverage() const;
  // (XᵀX)⁻¹ Xᵀ diag(w) X (XᵀX)⁻¹, the sandwich used by heteroscedasticity-consistent SEs.
  Eigen::MatrixXd sandwich(const Eigen::VectorXd& w) const;

 private:
  Eigen::MatrixXd r_inverse() const;  // R⁻¹ of the unit-column, pivoted problem (p x p)
  Eigen::MatrixXd thin_q() const;     // n x p
  Eigen::MatrixXd to_original(const Eigen::MatrixXd& pivoted_scaled) const;

  Eigen::VectorXd scale_;  // column norms of X
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr_;
  bool full_rank_ = false;
  std::optional<Eigen::Index> zero_column_;
};

}  // namespace kvbench::stats
