#include "harness/stats/change_point.h"

#include <algorithm>
#include <cmath>

#include "harness/stats/distributions.h"

namespace kvbench::stats {
namespace {

struct Segment {
  double mean = 0;
  double ss = 0;  // sum of squared deviations from the mean
};

Segment segment(const std::vector<double>& y, std::size_t from, std::size_t to) {
  Segment s;
  const auto n = static_cast<double>(to - from);
  for (std::size_t i = from; i < to; ++i) {
    s.mean += y[i] / n;
  }
  for (std::size_t i = from; i < to; ++i) {
    s.ss += (y[i] - s.mean) * (y[i] - s.mean);
  }
  return s;
}

// The residual sum of squares of a straight line through y over its index.
double line_ss(const std::vector<double>& y) {
  const auto n = static_cast<double>(y.size());
  const double mx = (n - 1) / 2;
  double my = 0;
  for (const double v : y) {
    my += v / n;
  }
  double sxy = 0;
  double sxx = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sxy += (static_cast<double>(i) - mx) * (y[i] - my);
    sxx += (static_cast<double>(i) - mx) * (static_cast<double>(i) - mx);
  }
  double ss = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = y[i] - my - sxy / sxx * (static_cast<double>(i) - mx);
    ss += e * e;
  }
  return ss;
}

}  // namespace

std::optional<Step> find_step(const std::vector<double>& y, const StepRule& rule) {
  const std::size_t n = y.size();
  const std::size_t m = std::max<std::size_t>(1, rule.min_segment);
  if (n < 2 * m + 1) {
    return std::nullopt;
  }
  const double df = static_cast<double>(n) - 2;
  const std::size_t tried = n - 2 * m + 1;
  std::optional<Step> best;
  double best_ss = 0;
  for (std::size_t at = m; at + m <= n; ++at) {
    const Segment a = segment(y, 0, at);
    const Segment b = segment(y, at, n);
    const double pooled = (a.ss + b.ss) / df;
    const double se =
        std::sqrt(pooled * (1.0 / static_cast<double>(at) + 1.0 / static_cast<double>(n - at)));
    const double shift = b.mean - a.mean;
    const double t = se > 0 ? shift / se : (shift != 0 ? INFINITY : 0.0);
    if (!best || std::abs(t) > std::abs(best->t)) {
      best = Step{at, shift, t, 1.0};
      best_ss = a.ss + b.ss;
    }
  }
  // A ramp fits a line better than any split: it is drift, which the intervals hold.
  if (best_ss >= line_ss(y)) {
    return std::nullopt;
  }
  const double one = std::isfinite(best->t) ? t_two_sided_p(best->t, df) : 0.0;
  best->p = std::min(1.0, one * static_cast<double>(tried));
  if (best->p > rule.alpha || std::abs(best->shift) < rule.min_shift) {
    return std::nullopt;
  }
  return best;
}

}  // namespace kvbench::stats
