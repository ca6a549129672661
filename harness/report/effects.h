#pragma once
// The "Effects", "Drift probes", "Diagnostics" and "Descriptive statistics" sections of the
// Markdown report, rendered from an Analysis. Pure.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/analysis/analysis.h"
#include "harness/analysis/run_analysis.h"
#include "harness/results/manifest.h"

namespace kvbench::report {

using analysis::baseline_variant;

// Writes the sections above; with server variants, the Effects section leads with each
// variant's relative effect on every metric against the baseline.
void write_effects_markdown(std::ostream& out, const analysis::Analysis& a);

}  // namespace kvbench::report
