#include "harness/results/run_events.h"

#include "harness/core/optional_json.h"

namespace kvbench::results {

using nlohmann::json;

void to_json(json& j, const Resumed& r) {
  j = {
      {"at", r.at}, {"calls_recorded", r.calls_recorded}, {"server", r.server}, {"model", r.model}};
}

void from_json(const json& j, Resumed& r) {
  r = {j.value("at", ""), j.value("calls_recorded", std::size_t{0}), j.value("server", json()),
       j.value("model", json())};
}

void to_json(json& j, const Extended& e) {
  j = {{"at", e.at},
       {"sets", e.sets},
       {"sets_before", e.sets_before},
       {"blocks_before", e.blocks_before},
       {"calls_recorded", e.calls_recorded}};
}

void from_json(const json& j, Extended& e) {
  e = {j.value("at", ""), j.value("sets", 0), j.value("sets_before", 0),
       j.value("blocks_before", std::size_t{0}), j.value("calls_recorded", std::size_t{0})};
}

void to_json(json& j, const RunTotals& t) {
  j = {{"calls", t.calls}, {"failed", t.failed}, {"flagged", t.flagged}};
}

void from_json(const json& j, RunTotals& t) {
  t = {j.value("calls", 0), j.value("failed", 0), j.value("flagged", 0)};
}

void to_json(json& j, const PrecisionStatus& c) {
  j = {{"metric", c.metric},
       {"effect", c.effect},
       {"target_half_width", c.target_half_width},
       {"max_calls", c.max_calls},
       {"sets", c.sets},
       {"calls", c.calls},
       {"at", c.at},
       {"status", c.status}};
  put_optional(j, "estimate", c.estimate);
  put_optional(j, "ci", c.ci);
  put_optional(j, "half_width", c.half_width);
  put_optional(j, "why", c.why);
}

void from_json(const json& j, PrecisionStatus& c) {
  c = PrecisionStatus{};
  c.metric = j.value("metric", "");
  c.effect = j.value("effect", "");
  c.target_half_width = j.value("target_half_width", 0.0);
  c.max_calls = j.value("max_calls", 0);
  c.sets = j.value("sets", 0);
  c.calls = j.value("calls", std::size_t{0});
  c.at = j.value("at", "");
  c.status = j.value("status", "");
  c.estimate = optional_at<double>(j, "estimate");
  c.ci = optional_at<std::array<double, 2>>(j, "ci");
  c.half_width = optional_at<double>(j, "half_width");
  c.why = optional_at<std::string>(j, "why");
}

void to_json(json& j, const PrecisionRecord& p) {
  j = p.last;
  j["checks"] = p.checks;
}

void from_json(const json& j, PrecisionRecord& p) {
  p.last = j.get<PrecisionStatus>();
  p.checks = j.value("checks", std::vector<PrecisionStatus>{});
}

}  // namespace kvbench::results
