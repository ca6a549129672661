#include "harness/gate/block_effect.h"

#include <cmath>

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
                                        const std::string& baseline, const std::string& candidate) {
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
  // Per variant: the mean block level and the within-variant sum of squares across blocks.
  std::map<std::string, std::vector<double>> levels;
  for (const auto& [index, b] : blocks) {
    levels[b.variant].push_back(b.sum / static_cast<double>(b.n));
  }
  if (levels.count(baseline) == 0 || levels.count(candidate) == 0) {
    return std::nullopt;
  }
  double ss = 0.0;
  std::map<std::string, double> means;
  for (const auto& [variant, v] : levels) {
    double mean = 0.0;
    for (double x : v) {
      mean += x / static_cast<double>(v.size());
    }
    means[variant] = mean;
    for (double x : v) {
      ss += (x - mean) * (x - mean);
    }
  }
  BlockEffect out;
  out.blocks = blocks.size();
  out.df = static_cast<double>(blocks.size()) - static_cast<double>(levels.size());
  if (out.df < 1.0) {
    return std::nullopt;
  }
  const double s = std::sqrt(ss / out.df);
  out.estimate = means[candidate] - means[baseline];
  out.se = s * std::sqrt(1.0 / static_cast<double>(levels[candidate].size()) +
                         1.0 / static_cast<double>(levels[baseline].size()));
  return out;
}

}  // namespace kvbench::gate
