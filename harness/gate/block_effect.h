#pragma once
// The variant effect at the level it was assigned: a variant is given to whole blocks (one server
// start each), so calls of one block share that start's level and are not independent replicates.
// A call-level standard error then understates the uncertainty as soon as server starts differ
// (an A/A run on a 2-core machine showed -5.4 % [-8.9, -1.9] between identical variants). Here
// each block's level is the mean residual of its calls under the call-level log model, plus the
// block variant's fitted effect; the variant effect is then compared across blocks, with the
// pooled between-block spread and B - k degrees of freedom (B blocks, k variants).

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/record.h"
#include "harness/stats/ols.h"

namespace kvbench::gate {

struct BlockEffect {
  double estimate = 0.0;  // candidate minus baseline, log scale
  double se = 0.0;
  double df = 0.0;  // blocks minus variants
  std::size_t blocks = 0;
};

// `rows` are the calls in the fit's row order (fit.residuals[i] belongs to rows[i]); `effects`
// maps every non-baseline variant to its fitted log-model coefficient. Nothing when the rows do
// not match the fit, a variant has no block, or there are no degrees of freedom left.
std::optional<BlockEffect> block_effect(const std::vector<const CallRecord*>& rows,
                                        const stats::OlsFit& fit,
                                        const std::map<std::string, double>& effects,
                                        const std::string& baseline, const std::string& candidate);

}  // namespace kvbench::gate
