#pragma once
// A least-squares fit with one level per unit (a shuffled round of one server block): the
// metric's level moves with the machine's state from unit to unit, and what is estimated is what
// changes within units (a randomized complete block design: every unit holds every condition, so
// the unit levels cancel in within-unit contrasts). Standard errors are clustered by unit (CR2,
// t with G - 1 degrees of freedom; cluster.h), and a stated rule keeps spikes out of the fit.

#include <cstddef>
#include <vector>

#include <Eigen/Dense>

namespace kvbench::stats {

// A call is a spike when its residual, leverage-adjusted (e / sqrt(1 - h)), is at least
// `robust_z` robust standard deviations (1.4826 x the median absolute adjusted residual) from its
// unit's fit and at least `min_residual` away in absolute terms (on the log scale, log 1.5: a call
// 50 % off its fit; an episode of a slow machine, about 35 % slower, that begins or ends within a
// round is not a spike), the largest first, one at a time with a refit between, at most
// `max_share` of the calls (at least one). A spike stays in the record and the tables; it is kept
// out of the fits that name this rule.
struct SpikeRule {
  double robust_z = 5.0;
  double min_residual = 0.4054651081081644;  // log(1.5)
  double max_share = 0.05;
};

struct UnitFit {
  Eigen::VectorXd beta;            // the within-unit columns' coefficients
  Eigen::MatrixXd covariance;      // clustered by unit (or the given clusters), CR2
  Eigen::MatrixXd iid_covariance;  // per call (s² (XᵀX)⁻¹ of the same design): for the inflation
  std::size_t n = 0;               // calls in the fit
  std::size_t clusters = 0;        // units (or given clusters) with calls in the fit
  double df = 0;                   // clusters - 1
  double residual_sd = 0;          // within units, on y's scale
};

// The rows of `y` that `rule` calls spikes, in the order found. `within` (N x K) holds the
// within-unit columns (no intercept: each unit has its level), `unit` the N unit ids. Rows of a
// unit with a single call carry no within-unit information and are never flagged.
std::vector<std::size_t> find_spikes(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                                     const std::vector<int>& unit, const SpikeRule& rule);

// The fit of y on `within` and one level per unit, rows in `exclude` left out; units left with
// one call drop out. Standard errors are clustered by unit, or by `cluster` (N ids, each holding
// whole units: the server start whose rounds share more than their levels) when it is given.
// Throws kvbench::Error when fewer than two units or no residual degrees of freedom remain, or the
// within-unit columns are collinear with the unit levels.
UnitFit unit_fit(const Eigen::MatrixXd& within, const Eigen::VectorXd& y,
                 const std::vector<int>& unit, const std::vector<std::size_t>& exclude = {},
                 const std::vector<int>& cluster = {});

}  // namespace kvbench::stats
