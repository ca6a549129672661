#pragma once
// The regression model over timed calls (results/README.md, "Statistics in the report"):
//   y = b0 + Σ b_k·x_k + b_t·t (+ b_tt·t²) + Σ γ·D + ε
// with numeric factors x_k (e.g. prompt tokens / 1000, num_ctx), elapsed minutes t since the
// first timed call (the drift term), and k-1 dummy columns per categorical factor. Nothing is
// centred: b0 is the value at x = 0, t = 0 and the reference levels; report other points with
// predict() at a stated reference point.

#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "harness/stats/ols.h"

namespace kvbench::stats {

inline constexpr const char* kInterceptName = "intercept";
inline constexpr const char* kTimeName = "t_min";
inline constexpr const char* kTimeSquaredName = "t_min^2";

struct CategoricalFactor {
  std::string name;
  std::string reference;  // empty: the first level in sorted (byte-wise) order
};

struct ModelSpec {
  std::vector<std::string> numeric;            // names, in the order of ModelRow::numeric
  std::vector<CategoricalFactor> categorical;  // in the order of ModelRow::categorical
  bool time_term = true;                       // column "t_min"
  bool time_squared = false;                   // column "t_min^2" (a curvature check)
};

// One timed call.
struct ModelRow {
  std::vector<double> numeric;           // one per ModelSpec::numeric
  std::vector<std::string> categorical;  // one level per ModelSpec::categorical
  double elapsed_min = 0.0;              // minutes since the first timed call
  double value = 0.0;                    // the metric (e.g. decode tok/s)
};

// Dummy coding of one factor: one column "<factor>=<level>" per non-reference level.
struct DummyCoding {
  std::string factor;
  std::string reference;
  std::vector<std::string> levels;  // the non-reference levels, sorted
};

struct Design {
  Eigen::MatrixXd x;  // columns: intercept, numeric..., t_min, t_min^2, dummies...
  Eigen::VectorXd y;  // value, or log(value) for a log design
  std::vector<std::string> names;
  std::vector<DummyCoding> dummies;  // one per categorical factor, in spec order
};

// Builds X and y from rows. Throws kvbench::Error on rows that do not match the spec, a given
// reference level that no row has, non-finite numbers, or (log_metric) a value <= 0; each
// message names the row or factor.
Design build_design(const ModelSpec& spec, std::span<const ModelRow> rows, bool log_metric);

// The x0 of one point in the column order of `design` (for predict()); point.value is ignored.
// Throws kvbench::Error on a level the design does not know.
Eigen::VectorXd design_point(const ModelSpec& spec, const Design& design, const ModelRow& point);

struct ModelFit {
  std::vector<std::string> names;
  std::vector<DummyCoding> dummies;
  OlsFit linear;                                 // the metric
  OlsFit log;                                    // log(metric)
  std::vector<RelativeEffect> relative_effects;  // exp(γ) - 1 of every non-intercept log term
};

// Fits the metric and its log on the same design. Throws as build_design and fit_ols do (a
// rank-deficient design names the collinear column, e.g. a dummy level confounded with t).
ModelFit fit_model(const ModelSpec& spec, std::span<const ModelRow> rows,
                   const OlsOptions& options = {});

void to_json(nlohmann::json& j, const DummyCoding& coding);
void to_json(nlohmann::json& j, const ModelFit& fit);

}  // namespace kvbench::stats
