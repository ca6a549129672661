#pragma once
// A call record's columns: those of its description (record_fields(), core/record.h) that are
// columns, in column order. They drive the calls CSV (`kvbench report --calls-csv`) and the
// history's calls table (its columns, rows and INSERT); a workload's part adds its own columns in
// its own runs (results/record_parts.h).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/describe.h"
#include "harness/core/record.h"

namespace kvbench {

// A field's value: absent, an integer, a real number or text.
using FieldValue = describe::Value;

struct CallField {
  using Type = describe::Type;
  CallField(const describe::FieldInfo& f, std::function<FieldValue(const CallRecord&)> getter)
      : name(f.column_name),
        unit(f.unit),
        type(f.type),
        nullable(f.nullable),
        json_path(f.path),
        where_given(f.where_given),
        get(std::move(getter)) {}

  std::string name;  // the CSV column and the SQL column
  std::string unit;  // "ms", "tokens", "tokens/s", "s", "MHz"; empty: none
  Type type;
  bool nullable;          // may be absent (empty in the CSV, NULL in SQL)
  std::string json_path;  // where calls.jsonl holds it ("client.ttft_ms")
  bool where_given;       // in a run's CSV only where a call has a value
  std::function<FieldValue(const CallRecord&)> get;
};

// The record's own columns, in column order.
const std::vector<CallField>& call_fields();

// The field's value in the calls CSV: reals with three decimals, absent as empty.
std::string csv_text(const FieldValue& v);

}  // namespace kvbench
