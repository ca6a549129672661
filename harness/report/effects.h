#pragma once
// The "Effects", "Drift probes", "Diagnostics" and "Descriptive statistics" sections of the
// Markdown report, rendered from an Analysis. Pure.

#include <ostream>

#include "harness/analysis/analysis.h"

namespace kvbench::report {

void write_effects_markdown(std::ostream& out, const analysis::Analysis& a);

}  // namespace kvbench::report
