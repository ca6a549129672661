#pragma once
// The variant effect at the level it was assigned: a variant is given to whole blocks (one server
// start each), so calls of one block share that start's level and are not independent replicates.
// A call-level standard error then understates the uncertainty as soon as server starts differ
// (an A/A run on a 2-core machine showed -5.4 % [-8.9, -1.9] between identical variants). Here
// each block's level is the mean residual of its calls under the call-level log model, plus the
// block variant's fitted effect; the variant effect is then compared across blocks, within the
// counterbalanced units of the design (the A B B A of one configuration in one set): a level the
// machine holds for a minute or so is shared by a unit's blocks and leaves the comparison, as a
// linear drift over the unit does. Degrees of freedom B - U - (k - 1) (B blocks, U units, k
// variants); without units (unit_blocks 0), the pooled between-block spread with B - k.

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
  double df = 0.0;  // blocks minus units minus variants plus one (blocks minus variants)
  std::size_t blocks = 0;
  std::size_t units = 0;  // counterbalanced units the blocks fall in (1 without units)
};

// `rows` are the calls in the fit's row order (fit.residuals[i] belongs to rows[i]); `effects`
// maps every non-baseline variant to its fitted log-model coefficient. `unit_blocks`: the blocks
// of one counterbalanced unit, consecutive in block order (2 x the variants); 0: no units. Nothing
// when the rows do not match the fit, a variant has no block, or there are no degrees of freedom
// left.
std::optional<BlockEffect> block_effect(const std::vector<const CallRecord*>& rows,
                                        const stats::OlsFit& fit,
                                        const std::map<std::string, double>& effects,
                                        const std::string& baseline, const std::string& candidate,
                                        int unit_blocks = 0);

}  // namespace kvbench::gate
