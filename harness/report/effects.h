#pragma once
// The "Effects", "Drift probes", "Diagnostics" and "Descriptive statistics" sections of the
// Markdown report, rendered from an Analysis. Pure.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/analysis/analysis.h"
#include "harness/results/manifest.h"

namespace kvbench::report {

// The reference variant of a run's comparison (run.json's scenario gate.baseline); empty when
// the run has no variants.
std::string baseline_variant(const results::RunManifest& run);

// Writes the sections above; with server variants, the Effects section leads with each
// variant's relative effect on every metric against the baseline.
void write_effects_markdown(std::ostream& out, const analysis::Analysis& a);

}  // namespace kvbench::report
