#pragma once
// The one list of a call record's flat fields: their names, units, types and getters. It drives
// the calls CSV (`kvbench report --calls-csv`) and the history's calls table (its columns, rows
// and INSERT), and a test holds it against the JSON Schema of calls.jsonl (json_path).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "harness/core/record.h"

namespace kvbench {

// A field's value: absent, an integer, a real number or text.
using FieldValue = std::variant<std::monostate, std::int64_t, double, std::string>;

// An optional number as a field's value: absent when empty.
template <typename T>
FieldValue field_value(const std::optional<T>& v) {
  if (!v) {
    return std::monostate{};
  }
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(*v);
  } else {
    return static_cast<std::int64_t>(*v);
  }
}

struct CallField {
  enum class Type { integer, real, text };
  std::string_view name;  // the CSV column and the SQL column
  std::string_view unit;  // "ms", "tokens", "tokens/s", "s", "MHz"; empty: none
  Type type;
  bool nullable;               // may be absent (empty in the CSV, NULL in SQL)
  std::string_view json_path;  // where calls.jsonl holds it ("client.ttft_ms"); empty: derived
  FieldValue (*get)(const CallRecord& r);
};

// In column order: the fields every version had first, each added field after them, so that an
// output gains columns at its end.
const std::vector<CallField>& call_fields();

// The field's value in the calls CSV: reals with three decimals, absent as empty.
std::string csv_text(const FieldValue& v);

}  // namespace kvbench
