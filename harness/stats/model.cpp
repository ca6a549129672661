#include "harness/stats/model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/core/error.h"

namespace kvbench::stats {
namespace {

std::string row_text(std::size_t i) {
  return "model row " + std::to_string(i);
}

void check_row(const ModelSpec& spec, const ModelRow& row, std::size_t i) {
  if (row.numeric.size() != spec.numeric.size() ||
      row.categorical.size() != spec.categorical.size()) {
    throw Error(row_text(i) + ": expected " + std::to_string(spec.numeric.size()) +
                " numeric and " + std::to_string(spec.categorical.size()) +
                " categorical values, got " + std::to_string(row.numeric.size()) + " and " +
                std::to_string(row.categorical.size()));
  }
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!std::all_of(row.numeric.begin(), row.numeric.end(), finite) ||
      !std::isfinite(row.elapsed_min) || !std::isfinite(row.value)) {
    throw Error(row_text(i) + ": holds a non-finite number");
  }
}

DummyCoding code_factor(const CategoricalFactor& factor, std::size_t k,
                        std::span<const ModelRow> rows) {
  std::set<std::string> levels;
  for (const ModelRow& row : rows) {
    levels.insert(row.categorical[k]);
  }
  DummyCoding coding{factor.name, factor.reference, {}};
  if (coding.reference.empty() && !levels.empty()) {
    coding.reference = *levels.begin();
  }
  if (!levels.empty() && levels.count(coding.reference) == 0) {
    throw Error("factor '" + factor.name + "': reference level '" + coding.reference +
                "' occurs in no row");
  }
  for (const std::string& level : levels) {
    if (level != coding.reference) {
      coding.levels.push_back(level);
    }
  }
  return coding;
}

std::vector<std::string> column_names(const ModelSpec& spec,
                                      const std::vector<DummyCoding>& dummies) {
  std::vector<std::string> names{kInterceptName};
  names.insert(names.end(), spec.numeric.begin(), spec.numeric.end());
  if (spec.time_term) {
    names.emplace_back(kTimeName);
  }
  if (spec.time_squared) {
    names.emplace_back(kTimeSquaredName);
  }
  for (const DummyCoding& coding : dummies) {
    for (const std::string& level : coding.levels) {
      names.push_back(coding.factor + "=" + level);
    }
  }
  return names;
}

// One row of X; throws if a level is unknown to the coding.
Eigen::RowVectorXd encode(const ModelSpec& spec, const std::vector<DummyCoding>& dummies,
                          const ModelRow& row, Eigen::Index columns) {
  Eigen::RowVectorXd out = Eigen::RowVectorXd::Zero(columns);
  Eigen::Index c = 0;
  out(c++) = 1.0;
  for (double v : row.numeric) {
    out(c++) = v;
  }
  if (spec.time_term) {
    out(c++) = row.elapsed_min;
  }
  if (spec.time_squared) {
    out(c++) = row.elapsed_min * row.elapsed_min;
  }
  for (std::size_t k = 0; k < dummies.size(); ++k) {
    const DummyCoding& coding = dummies[k];
    const std::string& level = row.categorical[k];
    const auto it = std::find(coding.levels.begin(), coding.levels.end(), level);
    if (it != coding.levels.end()) {
      out(c + (it - coding.levels.begin())) = 1.0;
    } else if (level != coding.reference) {
      throw Error("factor '" + coding.factor + "': unknown level '" + level + "'");
    }
    c += static_cast<Eigen::Index>(coding.levels.size());
  }
  return out;
}

}  // namespace

Design build_design(const ModelSpec& spec, std::span<const ModelRow> rows, bool log_metric) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_row(spec, rows[i], i);
    if (log_metric && !(rows[i].value > 0.0)) {
      throw Error(row_text(i) + ": the log model needs a value > 0, got " +
                  std::to_string(rows[i].value));
    }
  }
  Design design;
  for (std::size_t k = 0; k < spec.categorical.size(); ++k) {
    design.dummies.push_back(code_factor(spec.categorical[k], k, rows));
  }
  design.names = column_names(spec, design.dummies);
  const auto p = static_cast<Eigen::Index>(design.names.size());
  const auto n = static_cast<Eigen::Index>(rows.size());
  design.x.resize(n, p);
  design.y.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ModelRow& row = rows[static_cast<std::size_t>(i)];
    design.x.row(i) = encode(spec, design.dummies, row, p);
    design.y(i) = log_metric ? std::log(row.value) : row.value;
  }
  return design;
}

Eigen::VectorXd design_point(const ModelSpec& spec, const Design& design, const ModelRow& point) {
  check_row(spec, point, 0);
  return encode(spec, design.dummies, point, static_cast<Eigen::Index>(design.names.size()))
      .transpose();
}

ModelFit fit_model(const ModelSpec& spec, std::span<const ModelRow> rows,
                   const OlsOptions& options) {
  const Design linear = build_design(spec, rows, false);
  const Design log = build_design(spec, rows, true);
  ModelFit fit;
  fit.names = linear.names;
  fit.dummies = linear.dummies;
  fit.linear = fit_ols(linear.x, linear.y, linear.names, options);
  fit.log = fit_ols(log.x, log.y, log.names, options);
  for (std::size_t j = 1; j < fit.names.size(); ++j) {
    fit.relative_effects.push_back(relative_effect(fit.log, fit.names[j], options.level));
  }
  return fit;
}

void to_json(nlohmann::json& j, const DummyCoding& coding) {
  j = {{"factor", coding.factor}, {"reference", coding.reference}, {"levels", coding.levels}};
}

void to_json(nlohmann::json& j, const ModelFit& fit) {
  j = {{"names", fit.names},
       {"dummies", fit.dummies},
       {"linear", fit.linear},
       {"log", fit.log},
       {"relative_effects", fit.relative_effects}};
}

}  // namespace kvbench::stats
