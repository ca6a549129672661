#include "harness/stats/least_squares.h"

#include <cmath>

namespace kvbench::stats {
namespace {

Eigen::MatrixXd scaled_columns(const Eigen::MatrixXd& x, Eigen::VectorXd& scale,
                               std::optional<Eigen::Index>& zero_column) {
  scale = x.colwise().norm().transpose();
  Eigen::MatrixXd out = x;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    if (scale(j) > 0.0) {
      out.col(j) /= scale(j);
    } else if (!zero_column) {
      zero_column = j;
    }
  }
  return out;
}

std::string quoted(const std::vector<std::string>& names, Eigen::Index j) {
  const auto k = static_cast<std::size_t>(j);
  return "'" + (k < names.size() ? names[k] : "column " + std::to_string(j)) + "'";
}

}  // namespace

QrLeastSquares::QrLeastSquares(const Eigen::MatrixXd& x) {
  const Eigen::MatrixXd unit = scaled_columns(x, scale_, zero_column_);
  qr_.setThreshold(kRankTolerance);
  qr_.compute(unit);
  full_rank_ = !zero_column_ && x.rows() >= x.cols() && qr_.rank() == x.cols();
}

std::string QrLeastSquares::collinearity_message(const std::vector<std::string>& names) const {
  if (full_rank_) {
    return {};
  }
  const Eigen::Index p = qr_.cols();
  if (zero_column_) {
    return "predictor " + quoted(names, *zero_column_) + " is zero in every row";
  }
  const Eigen::Index r = qr_.rank();
  const std::string rank_text = " (rank " + std::to_string(r) + " of " + std::to_string(p) + ")";
  if (r == 0 || qr_.rows() < p) {
    return "X has fewer rows than columns or no usable column" + rank_text;
  }
  // The dependent column is R11·c = R12 in the pivoted, unit-column coordinates.
  const auto& perm = qr_.colsPermutation().indices();
  const Eigen::MatrixXd& qr = qr_.matrixQR();
  const Eigen::VectorXd c =
      qr.topLeftCorner(r, r).triangularView<Eigen::Upper>().solve(qr.block(0, r, r, 1).eval());
  std::string partners;
  for (Eigen::Index k = 0; k < r; ++k) {
    if (std::abs(c(k)) > 1e-8) {
      partners += (partners.empty() ? "" : ", ") + quoted(names, perm(k));
    }
  }
  return "predictor " + quoted(names, perm(r)) + " is collinear with " +
         (partners.empty() ? "the other predictors" : partners) + rank_text;
}

Eigen::VectorXd QrLeastSquares::solve(const Eigen::VectorXd& y) const {
  return (qr_.solve(y).array() / scale_.array()).matrix();
}

Eigen::MatrixXd QrLeastSquares::r_inverse() const {
  const Eigen::Index p = qr_.cols();
  return qr_.matrixQR().topLeftCorner(p, p).triangularView<Eigen::Upper>().solve(
      Eigen::MatrixXd::Identity(p, p));
}

Eigen::MatrixXd QrLeastSquares::thin_q() const {
  return qr_.householderQ() * Eigen::MatrixXd::Identity(qr_.rows(), qr_.cols());
}

Eigen::MatrixXd QrLeastSquares::to_original(const Eigen::MatrixXd& pivoted_scaled) const {
  // beta = D⁻¹ P z, so Cov(beta) = D⁻¹ P Cov(z) Pᵀ D⁻¹.
  const auto& perm = qr_.colsPermutation();
  Eigen::MatrixXd out = perm * pivoted_scaled * perm.transpose();
  const Eigen::VectorXd inv = scale_.cwiseInverse();
  return inv.asDiagonal() * out * inv.asDiagonal();
}

Eigen::MatrixXd QrLeastSquares::inverse_gram() const {
  const Eigen::MatrixXd r_inv = r_inverse();
  return to_original(r_inv * r_inv.transpose());
}

Eigen::VectorXd QrLeastSquares::leverage() const {
  return thin_q().rowwise().squaredNorm();
}

Eigen::MatrixXd QrLeastSquares::sandwich(const Eigen::VectorXd& w) const {
  // In pivoted unit-column coordinates (XᵀX)⁻¹Xᵀ = R⁻¹Qᵀ.
  const Eigen::MatrixXd a = r_inverse() * thin_q().transpose();  // p x n
  return to_original(a * w.asDiagonal() * a.transpose());
}

}  // namespace kvbench::stats
