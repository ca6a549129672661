// Microbenchmarks of the statistics: a large OLS fit with every diagnostic, and the bootstrap
// sizes kvbench uses by default (2000 resamples of a 30-call sample).

#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/random/normal_distribution.hpp>

#include "harness/core/random.h"
#include "harness/stats/bootstrap.h"
#include "harness/stats/descriptive.h"
#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<std::string> names;
};

// n calls: intercept plus `predictors` columns of uniform noise, y linear in them plus noise.
Data make_data(Eigen::Index n, Eigen::Index predictors, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> noise(0.0, 0.5);
  Data d{Eigen::MatrixXd(n, predictors + 1), Eigen::VectorXd(n), {"intercept"}};
  for (Eigen::Index j = 1; j <= predictors; ++j) {
    d.names.push_back(std::string("x").append(std::to_string(j)));
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    d.x(i, 0) = 1.0;
    double y = 41.0;
    for (Eigen::Index j = 1; j <= predictors; ++j) {
      d.x(i, j) = 8.0 * rng.uniform();
      y -= 0.1 * static_cast<double>(j) * d.x(i, j);
    }
    d.y(i) = y + noise(rng);
  }
  return d;
}

void BM_FitOls10000Calls5Predictors(benchmark::State& state) {
  const Data d = make_data(10000, 5, 1);
  const OlsOptions options{.level = 0.95, .hc3 = state.range(0) != 0, .vif = true};
  for (auto _ : state) {
    benchmark::DoNotOptimize(fit_ols(d.x, d.y, d.names, options));
  }
}
BENCHMARK(BM_FitOls10000Calls5Predictors)->Arg(0)->Arg(1)->ArgName("hc3");

void BM_BootstrapMedian2000Of30(benchmark::State& state) {
  const Data d = make_data(30, 1, 2);
  const std::vector<double> values(d.y.data(), d.y.data() + d.y.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(bootstrap_median_ci(values, 2000, 0.95, 7));
  }
}
BENCHMARK(BM_BootstrapMedian2000Of30);

void BM_PairsBootstrap2000Of30(benchmark::State& state) {
  const Data d = make_data(30, 2, 3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(pairs_bootstrap(d.x, d.y, d.names, {.resamples = 2000}));
  }
}
BENCHMARK(BM_PairsBootstrap2000Of30);

void BM_Summarize30(benchmark::State& state) {
  const Data d = make_data(30, 1, 4);
  const std::vector<double> values(d.y.data(), d.y.data() + d.y.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(summarize(values));
  }
}
BENCHMARK(BM_Summarize30);

}  // namespace
}  // namespace kvbench::stats
