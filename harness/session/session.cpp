#include "harness/session/session.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/core/error.h"
#include "harness/session/where.h"

namespace kvbench::session {

namespace {

struct Reference {
  int prompt_tokens = 0;
  int num_ctx = 0;
  std::vector<std::string> variants;
};

// The reference point of the timed single prompts (conversation turns are no single prompts:
// analysis::measured).
Reference reference_of(const std::vector<CallRecord>& calls) {
  Reference ref;
  std::set<int> prompts;
  std::set<int> contexts;
  for (const auto& r : analysis::measured(calls).singles) {
    if (r.kind != CallKind::timed) {
      continue;
    }
    prompts.insert(r.prompt_tokens);
    contexts.insert(r.num_ctx);
    if (std::find(ref.variants.begin(), ref.variants.end(), r.variant) == ref.variants.end()) {
      ref.variants.push_back(r.variant);
    }
  }
  if (!prompts.empty()) {
    ref.prompt_tokens = *std::next(prompts.begin(), static_cast<long>((prompts.size() - 1) / 2));
    ref.num_ctx = *contexts.begin();
  }
  return ref;
}

// exp(x0·β) of the log fit; x0 from the column names (dummies 0 but this variant's).
double fitted_at(const stats::OlsFit& fit, const Reference& ref, const std::string& variant) {
  double y = 0.0;
  for (const auto& c : fit.coefficients) {
    double x = 0.0;
    if (c.name == stats::kInterceptName) {
      x = 1.0;
    } else if (c.name == "prompt_ktokens") {
      x = ref.prompt_tokens / 1000.0;
    } else if (c.name == "num_ctx_k") {
      x = ref.num_ctx / 1000.0;
    } else if (c.name == "variant=" + variant) {
      x = 1.0;
    }
    y += x * c.estimate;
  }
  return std::exp(y);
}

}  // namespace

std::vector<SessionValue> session_values(const std::vector<CallRecord>& calls,
                                         const scenario::GateConfig& config, std::uint64_t seed) {
  std::vector<SessionValue> out;
  for (std::size_t i = 0; i < config.metrics.size(); ++i) {
    const auto& gm = config.metrics[i];
    const auto field = fmt::format("gate.metrics[{}]", i);
    std::vector<CallRecord> subset;
    for (const auto& r : calls) {
      if (matches(r, gm.where, field + ".where")) {
        subset.push_back(r);
      }
    }
    const Reference ref = reference_of(subset);
    const std::string baseline =
        config.baseline.empty() && !ref.variants.empty() ? ref.variants.front() : config.baseline;
    const auto a = analysis::analyze(subset, seed, baseline);
    const auto model = std::find_if(a.models.begin(), a.models.end(),
                                    [&](const auto& m) { return m.metric == gm.metric; });
    if (model == a.models.end() && !ref.variants.empty()) {
      throw InputError(fmt::format("{}.metric: unknown metric '{}'", field, gm.metric));
    }
    for (const auto& v : ref.variants) {
      SessionValue s;
      s.metric = gm.metric;
      s.where = gm.where;
      s.variant = v;
      s.value = std::numeric_limits<double>::quiet_NaN();
      s.ref_prompt_tokens = ref.prompt_tokens;
      s.ref_num_ctx = ref.num_ctx;
      s.n = model->n;
      if (model->fit) {
        s.value = fitted_at(model->fit->log, ref, v);
      } else {
        s.error = model->error.empty() ? "the model could not be fitted" : model->error;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace kvbench::session
