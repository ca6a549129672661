#include "harness/load/capacity_boundary.h"

#include <algorithm>

#include "harness/core/random.h"

namespace kvbench::load {

std::vector<double> isotonic_fit(const std::vector<double>& y, const std::vector<double>& w) {
  struct Pool {
    double mean;
    double weight;
    std::size_t count;
  };
  std::vector<Pool> pools;
  for (std::size_t i = 0; i < y.size(); ++i) {
    pools.push_back({y[i], w[i], 1});
    while (pools.size() > 1 && pools[pools.size() - 2].mean > pools.back().mean) {
      const Pool b = pools.back();
      pools.pop_back();
      Pool& a = pools.back();
      const double weight = a.weight + b.weight;
      a.mean =
          weight > 0 ? (a.mean * a.weight + b.mean * b.weight) / weight : (a.mean + b.mean) / 2;
      a.weight = weight;
      a.count += b.count;
    }
  }
  std::vector<double> out;
  for (const auto& p : pools) {
    out.insert(out.end(), p.count, p.mean);
  }
  return out;
}

namespace {

struct Crossing {
  std::optional<double> at;
  int side = 0;  // -1 below the levels, 0 within, +1 above
  std::optional<double> jump;
};

Crossing cross(const std::vector<int>& levels, const std::vector<double>& fit, double limit) {
  Crossing c;
  const auto first = std::find_if(fit.begin(), fit.end(), [&](double v) { return v >= limit; });
  if (first == fit.end()) {
    c.side = 1;
    return c;
  }
  const auto i = static_cast<std::size_t>(first - fit.begin());
  if (i == 0) {
    c.side = -1;
    return c;
  }
  const double lo = fit[i - 1];
  const double hi = fit[i];
  const double l0 = levels[i - 1];
  const double l1 = levels[i];
  c.at = hi > lo ? l0 + (limit - lo) / (hi - lo) * (l1 - l0) : l0;
  if (lo > 0) {
    c.jump = hi / lo;
  }
  return c;
}

std::vector<double> p90s(const std::vector<std::vector<double>>& samples) {
  std::vector<double> out;
  for (const auto& s : samples) {
    out.push_back(stats::percentile(s, 0.90));
  }
  return out;
}

}  // namespace

CapacityBoundary estimate_boundary(const std::vector<LevelSamples>& input, double limit_ms,
                                   std::uint64_t seed, int resamples, double level) {
  std::vector<LevelSamples> levels;
  for (const auto& l : input) {
    if (!l.ttft_ms.empty()) {
      levels.push_back(l);
    }
  }
  std::sort(levels.begin(), levels.end(),
            [](const auto& a, const auto& b) { return a.level < b.level; });
  CapacityBoundary b;
  std::vector<std::vector<double>> samples;
  std::vector<double> weights;
  for (const auto& l : levels) {
    b.levels.push_back(l.level);
    samples.push_back(l.ttft_ms);
    weights.push_back(static_cast<double>(l.ttft_ms.size()));
  }
  if (levels.empty()) {
    b.position = "no level measured a TTFT";
    return b;
  }
  b.p90_ms = p90s(samples);
  b.monotone_ms = isotonic_fit(b.p90_ms, weights);
  const Crossing c = cross(b.levels, b.monotone_ms, limit_ms);
  b.boundary = c.at;
  b.position = c.side == 0  ? "within"
               : c.side > 0 ? "above the measured levels"
                            : "below the measured levels";
  if (c.at) {
    b.jump = c.jump;
    b.shape = c.jump && *c.jump >= kCliffRatio ? "cliff" : "smooth rise";
  }
  // Bootstrap: calls resampled within each level; a replicate that does not cross within the
  // range counts at its edge (the lowest or the highest level).
  Rng rng(seed);
  std::vector<double> found;
  for (int r = 0; r < resamples; ++r) {
    std::vector<std::vector<double>> boot;
    for (const auto& s : samples) {
      std::vector<double> one;
      one.reserve(s.size());
      for (std::size_t k = 0; k < s.size(); ++k) {
        one.push_back(s[rng.below(s.size())]);
      }
      boot.push_back(std::move(one));
    }
    const Crossing bc = cross(b.levels, isotonic_fit(p90s(boot), weights), limit_ms);
    found.push_back(bc.at ? *bc.at
                          : static_cast<double>(bc.side > 0 ? b.levels.back() : b.levels.front()));
  }
  b.resamples = resamples;
  if (!found.empty()) {
    std::sort(found.begin(), found.end());
    b.ci = stats::Interval{stats::percentile_sorted(found, (1 - level) / 2),
                           stats::percentile_sorted(found, (1 + level) / 2), level};
  }
  return b;
}

void to_json(nlohmann::json& j, const CapacityBoundary& b) {
  j = {{"levels", b.levels},     {"p90_ms", b.p90_ms},       {"monotone_p90_ms", b.monotone_ms},
       {"position", b.position}, {"resamples", b.resamples}, {"cliff_ratio", kCliffRatio}};
  j["boundary"] = b.boundary ? nlohmann::json(*b.boundary) : nlohmann::json(nullptr);
  j["ci"] = b.ci ? nlohmann::json::array({b.ci->lower, b.ci->upper}) : nlohmann::json(nullptr);
  j["shape"] = b.shape.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.shape);
  j["jump"] = b.jump ? nlohmann::json(*b.jump) : nlohmann::json(nullptr);
}

}  // namespace kvbench::load
