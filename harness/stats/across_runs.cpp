#include "harness/stats/across_runs.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"

namespace kvbench::stats {

namespace {

// A deviation over its SE as a normal score: through t(df) where the run's interval used one.
double normal_score(double ratio, double df) {
  if (!(df > 0)) {
    return ratio;
  }
  const double p = std::clamp(t_cdf(ratio, df), 1e-15, 1 - 1e-15);
  return normal_quantile(p);
}

}  // namespace

double birge_bound(std::size_t runs, double alpha) {
  if (runs < 2 || !(alpha > 0 && alpha < 1)) {
    throw Error(fmt::format("birge_bound: needs 2 runs or more and alpha in (0, 1), got {} and {}",
                            runs, alpha));
  }
  const double df = static_cast<double>(runs - 1);
  const boost::math::chi_squared chi2(df);
  return std::sqrt(boost::math::quantile(boost::math::complement(chi2, alpha)) / df);
}

AcrossRuns across_runs(const std::vector<RunEstimate>& runs, double level, double alpha) {
  if (runs.size() < 2) {
    throw Error(fmt::format("across_runs: needs 2 runs or more, got {}", runs.size()));
  }
  if (!(level > 0 && level < 1)) {
    throw Error(fmt::format("across_runs: level must be in (0, 1), got {}", level));
  }
  for (const auto& r : runs) {
    if (!(r.se > 0) || !std::isfinite(r.se) || !std::isfinite(r.estimate)) {
      throw Error(
          fmt::format("across_runs: every run needs a finite estimate and a positive SE, "
                      "got {} with SE {}",
                      r.estimate, r.se));
    }
  }
  AcrossRuns a;
  a.runs = runs.size();
  a.alpha = alpha;
  const double n = static_cast<double>(runs.size());
  std::vector<double> x;
  double w_sum = 0;
  double w2_sum = 0;
  double wx_sum = 0;
  double var_sum = 0;
  for (const auto& r : runs) {
    x.push_back(r.estimate);
    const double w = 1 / (r.se * r.se);
    w_sum += w;
    w2_sum += w * w;
    wx_sum += w * r.estimate;
    var_sum += r.se * r.se;
  }
  a.mean = stats::mean(x);
  a.sd = sample_sd(x);
  const double half = t_quantile((1 + level) / 2, n - 1) * a.sd / std::sqrt(n);
  a.ci = Interval{a.mean - half, a.mean + half, level};
  a.weighted_mean = wx_sum / w_sum;
  for (const auto& r : runs) {
    a.q += (r.estimate - a.weighted_mean) * (r.estimate - a.weighted_mean) / (r.se * r.se);
  }
  a.birge = std::sqrt(a.q / (n - 1));
  a.tau2 = std::max(0.0, (a.q - (n - 1)) / (w_sum - w2_sum / w_sum));
  double z2 = 0;
  for (const auto& r : runs) {
    const double others = (a.mean * n - r.estimate) / (n - 1);
    const double others_se = std::sqrt(var_sum - r.se * r.se) / (n - 1);
    const double z = normal_score((r.estimate - others) / std::hypot(r.se, others_se), r.df);
    z2 += z * z;
  }
  a.scores_birge = std::sqrt(z2 / n);
  a.bound = birge_bound(runs.size(), alpha);
  return a;
}

}  // namespace kvbench::stats
