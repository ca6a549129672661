#include "harness/gate/block_effect.h"

#include <cmath>
#include <set>

#include "harness/core/error.h"

namespace kvbench::gate {

namespace {

struct BlockLevel {
  std::string variant;
  double sum = 0.0;
  std::size_t n = 0;
};

}  // namespace

std::optional<BlockEffect> block_effect(const std::vector<const CallRecord*>& rows,
                                        const stats::OlsFit& fit,
                                        const std::map<std::string, double>& effects,
                                        const std::string& baseline, const std::string& candidate,
                                        int unit_blocks) {
  if (rows.size() != static_cast<std::size_t>(fit.residuals.size())) {
    return std::nullopt;
  }
  std::map<int, BlockLevel> blocks;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& b = blocks[rows[i]->block];
    b.variant = rows[i]->variant;
    const auto e = effects.find(b.variant);
    b.sum += fit.residuals[static_cast<Eigen::Index>(i)] + (e == effects.end() ? 0.0 : e->second);
    ++b.n;
  }
  // Columns: one per unit (its level), then one per variant besides the baseline.
  std::map<int, Eigen::Index> units;
  std::set<std::string> variants;
  for (const auto& [index, b] : blocks) {
    units.emplace(unit_blocks > 0 ? index / unit_blocks : 0, 0);
    variants.insert(b.variant);
  }
  if (variants.count(baseline) == 0 || variants.count(candidate) == 0) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (auto& [unit, column] : units) {
    column = static_cast<Eigen::Index>(names.size());
    names.push_back("unit=" + std::to_string(unit));
  }
  std::map<std::string, Eigen::Index> variant_columns;
  for (const auto& v : variants) {
    if (v != baseline) {
      variant_columns[v] = static_cast<Eigen::Index>(names.size());
      names.push_back("variant=" + v);
    }
  }
  const auto n = static_cast<Eigen::Index>(blocks.size());
  if (n <= static_cast<Eigen::Index>(names.size())) {
    return std::nullopt;
  }
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(names.size()));
  Eigen::VectorXd y(n);
  Eigen::Index row = 0;
  for (const auto& [index, b] : blocks) {
    x(row, units.at(unit_blocks > 0 ? index / unit_blocks : 0)) = 1.0;
    if (b.variant != baseline) {
      x(row, variant_columns.at(b.variant)) = 1.0;
    }
    y(row++) = b.sum / static_cast<double>(b.n);
  }
  try {
    const auto level_fit = stats::fit_ols(x, y, names, {.vif = false});
    const auto& c = level_fit.coefficient("variant=" + candidate);
    BlockEffect out;
    out.blocks = blocks.size();
    out.units = units.size();
    out.df = level_fit.df;
    out.estimate = c.estimate;
    out.se = c.se;
    return out;
  } catch (const Error&) {
    return std::nullopt;  // a variant only in units of its own: nothing to compare within
  }
}

}  // namespace kvbench::gate
