#include "harness/results/record_parts.h"

#include <algorithm>
#include <set>
#include <variant>

namespace kvbench::results {

std::vector<CallField> call_columns(const std::vector<CallRecord>& calls) {
  std::vector<CallField> out;
  for (const auto& f : call_fields()) {
    const auto given = [&f](const CallRecord& c) {
      return !std::holds_alternative<std::monostate>(f.get(c));
    };
    if (!f.where_given || std::any_of(calls.begin(), calls.end(), given)) {
      out.push_back(f);
    }
  }
  std::set<std::string> carried;
  for (const auto& c : calls) {
    if (!c.part.empty()) {
      carried.insert(c.part.key());
    }
  }
  for (const auto& p : record_parts()) {
    if (carried.count(p.key) != 0) {
      out.insert(out.end(), p.columns.begin(), p.columns.end());
    }
  }
  return out;
}

const RecordPartInfo* record_part(const std::string& key) {
  for (const auto& p : record_parts()) {
    if (p.key == key) {
      return &p;
    }
  }
  return nullptr;
}

nlohmann::json call_schema() {
  nlohmann::json out = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"$id", "kvbench.call.v1"},
      {"title",
       "One call of a run: a line of calls.jsonl (record versions 1 and 2). Generated from the "
       "record's description (harness/core/call_fields.cpp) and each workload's part "
       "(harness/workloads/<name>/record.cpp); a call carries at most one part."}};
  const nlohmann::json core = describe::schema(record_fields());
  for (const auto& [k, v] : core.items()) {
    out[k] = v;
  }
  for (const auto& p : record_parts()) {
    out["properties"][p.key] = p.schema;
  }
  return out;
}

}  // namespace kvbench::results
