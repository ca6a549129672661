#pragma once
// What the workloads' parts of call records (core/record_part.h) add to the record's columns and
// schema: each workload describes its part once (harness/workloads/<name>/record.h), and its
// columns appear only in the runs whose calls carry it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/call_fields.h"
#include "harness/core/describe.h"
#include "harness/core/record.h"

namespace kvbench::results {

// A workload's part of a call record: its key in the record, its columns (read from a record that
// carries it, absent on any other) and the JSON Schema of its object. An empty key: none.
struct RecordPartInfo {
  std::string key;
  std::vector<CallField> columns;
  nlohmann::json schema;
};

// Every workload's part, from the table (workloads/records.cpp).
const std::vector<RecordPartInfo>& record_parts();

// The columns of `calls`: the record's own (one given only in some runs, where one of them has
// it), then those of each workload part one of them carries.
std::vector<CallField> call_columns(const std::vector<CallRecord>& calls);
// The part of `key`; nullptr when no workload has one of that name.
const RecordPartInfo* record_part(const std::string& key);

// The JSON Schema of a line of calls.jsonl, generated from the descriptions; the committed
// results/schemas/kvbench.call.v1.schema.json is this, and a test holds them equal.
nlohmann::json call_schema();

// A part described by `fields` (static: its columns read through them).
template <typename T>
RecordPartInfo part_info(const std::vector<describe::Field<T>>& fields) {
  RecordPartInfo out;
  out.key = std::string(T::kKey);
  for (const auto& f : fields) {
    if (f.column_name.empty()) {
      continue;
    }
    CallField c(f, [&f](const CallRecord& r) {
      const T* p = r.part.get<T>();
      return p != nullptr ? f.get(*p) : FieldValue{};
    });
    c.nullable = true;
    c.json_path = out.key + "." + f.path;
    out.columns.push_back(std::move(c));
  }
  out.schema = describe::schema(fields);
  return out;
}

}  // namespace kvbench::results
