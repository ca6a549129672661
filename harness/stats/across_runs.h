#pragma once
// One effect measured by N runs of one scenario: what the runs say together, and whether each
// run's own interval was honest about how far the next run would land. An effect in ms moves with
// the machine's speed from run to run, which no single run's interval can hold; the run-to-run
// component (DerSimonian-Laird tau^2) says how much, and the interval over runs includes it.

#include <cstddef>
#include <vector>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

// One run's estimate with its standard error and the degrees of freedom of its t (0: normal).
struct RunEstimate {
  double estimate = 0;
  double se = 0;
  double df = 0;
};

struct AcrossRuns {
  std::size_t runs = 0;
  double mean = 0;  // of the runs' estimates, unweighted
  double sd = 0;    // their spread
  Interval ci;      // mean ± t(N - 1) sd / sqrt(N): the run-to-run component included
  // Inverse-variance weighted mean, Cochran's Q about it, the Birge ratio sqrt(Q / (N - 1)) (about
  // 1 when the runs' SEs hold their spread) and the DerSimonian-Laird tau^2 (0 when they do).
  double weighted_mean = 0;
  double q = 0;
  double birge = 0;
  double tau2 = 0;
  // The calibration: each run's deviation from the mean of the others, over the root of the sum
  // of both squared SEs, turned into a normal score through the run's own t(df); their root mean
  // square (each deviation from the others' mean is N / (N - 1) times its deviation from the mean
  // of all, so sqrt(sum z^2 / N) follows sqrt(chi^2(N - 1) / (N - 1)) when the SEs are honest).
  double scores_birge = 0;
  double bound = 0;  // sqrt(chi^2 quantile at 1 - alpha, N - 1 df / (N - 1))
  double alpha = 0.05;
  bool honest() const { return scores_birge <= bound; }
};

// Throws kvbench::Error for fewer than 2 runs, a standard error that is not positive and finite,
// or alpha or level outside (0, 1).
AcrossRuns across_runs(const std::vector<RunEstimate>& runs, double level = 0.95,
                       double alpha = 0.05);

// The bound a Birge ratio of N runs stays below with probability 1 - alpha when the SEs are
// honest.
double birge_bound(std::size_t runs, double alpha);

}  // namespace kvbench::stats
