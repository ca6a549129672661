#include "harness/stats/distributions.h"

#include <cmath>
#include <limits>
#include <string>

#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "harness/core/error.h"

namespace kvbench::stats {
namespace {

void require_df(double df, const char* what) {
  if (!(df > 0.0)) {
    throw Error(std::string(what) + ": degrees of freedom must be > 0, got " + std::to_string(df));
  }
}

void require_probability(double p, const char* what) {
  if (!(p > 0.0 && p < 1.0)) {
    throw Error(std::string(what) + ": probability must be in (0, 1), got " + std::to_string(p));
  }
}

}  // namespace

double t_quantile(double p, double df) {
  require_probability(p, "t_quantile");
  require_df(df, "t_quantile");
  return boost::math::quantile(boost::math::students_t(df), p);
}

double t_cdf(double t, double df) {
  require_df(df, "t_cdf");
  return boost::math::cdf(boost::math::students_t(df), t);
}

double t_two_sided_p(double t, double df) {
  require_df(df, "t_two_sided_p");
  if (std::isnan(t)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (std::isinf(t)) {
    return 0.0;
  }
  return 2.0 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::abs(t)));
}

double normal_quantile(double p) {
  require_probability(p, "normal_quantile");
  return boost::math::quantile(boost::math::normal(), p);
}

double f_upper_tail(double f, double df1, double df2) {
  require_df(df1, "f_upper_tail");
  require_df(df2, "f_upper_tail");
  if (std::isnan(f)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (std::isinf(f)) {
    return 0.0;
  }
  return boost::math::cdf(boost::math::complement(boost::math::fisher_f(df1, df2), f));
}

}  // namespace kvbench::stats
