#include "harness/stats/validity.h"

#include <cmath>

#include <fmt/format.h>

namespace kvbench::stats {
namespace {

bool given(const std::optional<double>& v) {
  return v.has_value() && !std::isnan(*v);
}

void check_durbin_watson(const ValidityInputs& in, const ValidityLimits& limits,
                         std::vector<ValidityReason>& out) {
  const bool main = given(in.durbin_watson);
  const bool refit = given(in.durbin_watson_t2);
  if (main && *in.durbin_watson >= limits.min_durbin_watson) {
    return;
  }
  if (refit && *in.durbin_watson_t2 >= limits.min_durbin_watson) {
    return;
  }
  if (main) {
    const std::string after =
        refit ? fmt::format("{:.2f} after refitting with t²", *in.durbin_watson_t2)
              : std::string("no refit with t² given");
    out.push_back(
        {"durbin_watson", fmt::format("Durbin-Watson {:.2f} < {:.2f} over run order ({}): serial "
                                      "correlation, the drift model is inadequate",
                                      *in.durbin_watson, limits.min_durbin_watson, after)});
  } else if (refit) {
    out.push_back(
        {"durbin_watson", fmt::format("Durbin-Watson {:.2f} < {:.2f} after refitting with t²",
                                      *in.durbin_watson_t2, limits.min_durbin_watson)});
  }
}

void check_calls(const ValidityInputs& in, const ValidityLimits& limits,
                 std::vector<ValidityReason>& out) {
  if (in.valid_calls && *in.valid_calls < limits.min_valid_calls) {
    out.push_back({"valid_calls", fmt::format("{} valid calls < {} required", *in.valid_calls,
                                              limits.min_valid_calls)});
  }
  if (in.valid_calls && in.failed_calls) {
    const std::size_t total = *in.valid_calls + *in.failed_calls;
    const double fraction =
        total > 0 ? static_cast<double>(*in.failed_calls) / static_cast<double>(total) : 0.0;
    if (fraction > limits.max_failed_fraction) {
      out.push_back({"failed_calls",
                     fmt::format("{} of {} calls failed ({:.1f} % > {:.1f} %)", *in.failed_calls,
                                 total, 100.0 * fraction, 100.0 * limits.max_failed_fraction)});
    }
  }
}

void check_levels(const ValidityInputs& in, const ValidityLimits& limits,
                  std::vector<ValidityReason>& out) {
  if (given(in.cv_resid) && *in.cv_resid > limits.max_cv_resid) {
    out.push_back({"cv_resid", fmt::format("CV of residuals {:.1f} % > {:.1f} %",
                                           100.0 * *in.cv_resid, 100.0 * limits.max_cv_resid)});
  }
  if (given(in.pure_error) && *in.pure_error > limits.max_pure_error) {
    out.push_back({"pure_error",
                   fmt::format("calls repeated in one condition spread by {:.1f} % (pure error, "
                               "drift taken out) > {:.1f} %",
                               100.0 * *in.pure_error, 100.0 * limits.max_pure_error)});
  }
  if (given(in.corr_x_t) && std::abs(*in.corr_x_t) > limits.max_abs_corr_x_t) {
    out.push_back({"corr_x_t", fmt::format("|corr(x, t)| = {:.2f} > {:.2f}: the shuffle failed "
                                           "or was overridden",
                                           std::abs(*in.corr_x_t), limits.max_abs_corr_x_t)});
  }
  if (given(in.probe_drift) && std::abs(*in.probe_drift) > limits.max_abs_probe_drift) {
    const std::string interval =
        given(in.probe_drift_lower) && given(in.probe_drift_upper)
            ? fmt::format(" [{:+.1f}, {:+.1f}]", 100.0 * *in.probe_drift_lower,
                          100.0 * *in.probe_drift_upper)
            : std::string();
    out.push_back({"probe_drift", fmt::format("probe drifted {:+.1f} %{} of its level over the "
                                              "run (limit {:.1f} %)",
                                              100.0 * *in.probe_drift, interval,
                                              100.0 * limits.max_abs_probe_drift)});
  }
  if (given(in.throttled_fraction) && *in.throttled_fraction > limits.max_throttled_fraction) {
    out.push_back({"throttling", fmt::format("throttle reasons active in {:.1f} % of calls > "
                                             "{:.1f} %",
                                             100.0 * *in.throttled_fraction,
                                             100.0 * limits.max_throttled_fraction)});
  }
}

}  // namespace

std::vector<ValidityReason> validity_reasons(const ValidityInputs& inputs,
                                             const ValidityLimits& limits) {
  std::vector<ValidityReason> out;
  check_durbin_watson(inputs, limits, out);
  check_levels(inputs, limits, out);
  check_calls(inputs, limits, out);
  return out;
}

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void to_json(nlohmann::json& j, const ValidityInputs& in) {
  j = {
      {"durbin_watson", or_null(in.durbin_watson)},
      {"durbin_watson_t2", or_null(in.durbin_watson_t2)},
      {"cv_resid", or_null(in.cv_resid)},
      {"pure_error", or_null(in.pure_error)},
      {"valid_calls", or_null(in.valid_calls)},
      {"failed_calls", or_null(in.failed_calls)},
      {"corr_x_t", or_null(in.corr_x_t)},
      {"probe_drift", or_null(in.probe_drift)},
      {"probe_drift_ci", in.probe_drift_lower && in.probe_drift_upper
                             ? nlohmann::json::array({*in.probe_drift_lower, *in.probe_drift_upper})
                             : nlohmann::json(nullptr)},
      {"throttled_fraction", or_null(in.throttled_fraction)}};
}

void to_json(nlohmann::json& j, const ValidityReason& reason) {
  j = {{"rule", reason.rule}, {"message", reason.message}};
}

void to_json(nlohmann::json& j, const ValidityLimits& limits) {
  j = {{"min_durbin_watson", limits.min_durbin_watson},
       {"max_cv_resid", limits.max_cv_resid},
       {"max_pure_error", limits.max_pure_error},
       {"min_valid_calls", limits.min_valid_calls},
       {"max_failed_fraction", limits.max_failed_fraction},
       {"max_abs_corr_x_t", limits.max_abs_corr_x_t},
       {"max_abs_probe_drift", limits.max_abs_probe_drift},
       {"max_throttled_fraction", limits.max_throttled_fraction}};
}

}  // namespace kvbench::stats
