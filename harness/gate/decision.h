#pragma once
// The same-session gate of results/README.md ("CI performance gate") on a run with server variants:
// for every gated metric (and its condition) and every variant besides the baseline, the variant
// coefficient γ of the analysis' log model becomes a PASS / FAIL / INCONCLUSIVE verdict,
// Holm-corrected across all entries. Pure: records in, decision out.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/gate/block_effect.h"
#include "harness/gate/session_names.h"
#include "harness/scenario/gate_config.h"
#include "harness/stats/gate.h"
#include "harness/stats/validity.h"

namespace kvbench::gate {

// One gated metric, condition and candidate variant.
struct GateEntry {
  std::string metric;
  std::map<std::string, std::string> where;  // empty: all calls
  std::string candidate;                     // the variant judged against the baseline
  double margin = 0.0;
  std::size_t n = 0;                            // calls in the fit
  std::optional<stats::GateResult> result;      // absent when no γ could be estimated
  double se_calls = 0.0;                        // γ's standard error from the calls alone
  std::optional<BlockEffect> block;             // γ across blocks (server starts)
  std::vector<stats::ValidityReason> validity;  // of the metric's model on these calls
  std::string reason;  // why the verdict is INCONCLUSIVE without numbers, or was downgraded
  stats::Verdict verdict = stats::Verdict::inconclusive;
};

struct RunGate {
  std::string baseline;
  std::vector<std::string> variants;  // every variant, the baseline included
  double alpha = 0.05;
  std::vector<GateEntry> entries;
  stats::Verdict overall = stats::Verdict::inconclusive;  // FAIL if any, PASS if all, else INC.
};

// The variants of a run: `declared` (from the scenario) when non-empty, else those of the timed
// calls in order of first appearance. The baseline is config.baseline, else the first variant.
// Throws InputError when fewer than two variants are found or the baseline is not one of them.
RunGate plan_gate(const std::vector<CallRecord>& calls, const scenario::GateConfig& config,
                  const std::vector<std::string>& declared);

// Gates a run. Each γ is the call-level estimate; its standard error is the larger of the
// call-level one and the block-level one (block_effect.h), with the block-level degrees of
// freedom, because the variant is assigned by block. A verdict of an entry whose model breaks a
// validity rule is never PASS: it becomes INCONCLUSIVE with the reasons (a FAIL stays FAIL, reasons
// attached). Entries without a variant term or fit are INCONCLUSIVE with the reason. Throws
// InputError for an unknown metric or factor.
RunGate gate_run(const std::vector<CallRecord>& calls, const scenario::GateConfig& config,
                 const std::vector<std::string>& declared, std::uint64_t seed = 1);

void to_json(nlohmann::json& j, const GateEntry& e);
void to_json(nlohmann::json& j, const RunGate& g);

}  // namespace kvbench::gate
