#pragma once
// The validity rules of results/README.md ("Statistics in the report") as data in, reasons out. A
// run with any reason is INVALID (neither PASS nor FAIL). The caller passes only the numbers it
// has; a missing or NaN input is not judged.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::stats {

struct ValidityInputs {
  std::optional<double> durbin_watson;     // main fit, over run order
  std::optional<double> durbin_watson_t2;  // the same fit refitted with a t² term
  std::optional<double> cv_resid;          // residual SE / mean of the metric (fraction)
  // Relative spread of calls repeated in one condition, drift taken out (the saturated model's
  // relative residual SD): noise, whatever the shape of the factors.
  std::optional<double> pure_error;
  std::optional<std::size_t> valid_calls;   // per arm: pass the smallest arm
  std::optional<std::size_t> failed_calls;  // failed or errored calls (with valid_calls)
  std::optional<double> corr_x_t;           // correlation of the main factor with time
  std::optional<double> probe_drift;        // signed probe drift over the run / probe level
  // The probe drift's 95 % CI (from the Theil-Sen slope's), shown in the reason. The rule judges
  // the point estimate: a step in the last probes is a drift, yet few probes' Kendall CI spans 0.
  std::optional<double> probe_drift_lower;
  std::optional<double> probe_drift_upper;
  std::optional<double> throttled_fraction;  // calls with an active throttle reason / calls
};

struct ValidityLimits {
  double min_durbin_watson = 1.0;
  double max_cv_resid = 0.05;
  double max_pure_error = 0.05;
  std::size_t min_valid_calls = 10;
  double max_failed_fraction = 0.10;  // of valid + failed calls
  double max_abs_corr_x_t = 0.3;
  double max_abs_probe_drift = 0.10;
  double max_throttled_fraction = 0.10;
};

struct ValidityReason {
  std::string rule;     // durbin_watson, cv_resid, pure_error, valid_calls, failed_calls,
                        // corr_x_t, probe_drift, throttling
  std::string message;  // one line for people, with the number and its limit
};

// Every rule the inputs break. Durbin–Watson: a main-fit DW below the limit is a reason only
// if the t² refit is missing or also below the limit. Empty when the run is valid.
std::vector<ValidityReason> validity_reasons(const ValidityInputs& inputs,
                                             const ValidityLimits& limits = {});

void to_json(nlohmann::json& j, const ValidityInputs& inputs);  // missing inputs are null
void to_json(nlohmann::json& j, const ValidityReason& reason);
void to_json(nlohmann::json& j, const ValidityLimits& limits);

}  // namespace kvbench::stats
