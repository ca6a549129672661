// The call field list against the JSON Schema of calls.jsonl and against recorded runs: every
// field is where the schema says, of the type it says, and reads what the record holds.

#include "harness/core/call_fields.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kvbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The schema of the value at a dotted path ("client.ttft_ms"), or null when there is none.
json schema_at(const json& schema, const std::string& path) {
  json at = schema;
  std::size_t from = 0;
  while (from <= path.size()) {
    const auto dot = path.find('.', from);
    const std::string key = path.substr(from, dot - from);
    if (!at.contains("properties") || !at["properties"].contains(key)) {
      return nullptr;
    }
    at = at["properties"][key];
    if (dot == std::string::npos) {
      return at;
    }
    from = dot + 1;
  }
  return nullptr;
}

const json* value_at(const json& record, const std::string& path) {
  const json* at = &record;
  std::size_t from = 0;
  while (true) {
    const auto dot = path.find('.', from);
    const std::string key = path.substr(from, dot - from);
    if (!at->is_object() || !at->contains(key)) {
      return nullptr;
    }
    at = &(*at)[key];
    if (dot == std::string::npos) {
      return at;
    }
    from = dot + 1;
  }
}

// The JSON types a field's values may have in the schema.
std::set<std::string> schema_types(const json& s) {
  std::set<std::string> out;
  if (s.contains("type")) {
    const json& t = s["type"];
    if (t.is_string()) {
      out.insert(t.get<std::string>());
    } else {
      for (const auto& x : t) {
        out.insert(x.get<std::string>());
      }
    }
  }
  if (s.contains("enum")) {
    out.insert("string");
  }
  return out;
}

TEST(CallFields, EachIsInTheSchemaWithItsType) {
  const json schema =
      read(fs::path(KVBENCH_SOURCE_DIR) / "results/schemas/kvbench.call.v1.schema.json");
  std::set<std::string_view> names;
  for (const auto& f : call_fields()) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_TRUE(names.insert(f.name).second) << "listed twice";
    ASSERT_FALSE(f.json_path.empty());
    const json at = schema_at(schema, std::string(f.json_path));
    ASSERT_FALSE(at.is_null()) << f.json_path << " is not in the schema";
    const auto types = schema_types(at);
    if (f.name == "flags") {
      EXPECT_TRUE(types.count("array")) << "flags: a list, joined with ';' in a column";
      continue;
    }
    const char* want = f.type == CallField::Type::integer ? "integer"
                       : f.type == CallField::Type::real  ? "number"
                                                          : "string";
    EXPECT_TRUE(types.count(want) || (types.empty() && f.type == CallField::Type::text))
        << f.json_path << " is not a " << want << " in the schema";
  }
}

// Every field of every call of the recorded runs reads what calls.jsonl holds at its path.
TEST(CallFields, ReadWhatTheRecordsHold) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(fs::path(KVBENCH_TEST_DATA) / "runs")) {
    std::ifstream in(e.path() / "calls.jsonl");
    for (std::string line; std::getline(in, line);) {
      const json j = json::parse(line);
      const CallRecord r = record_from_json(j);
      for (const auto& f : call_fields()) {
        SCOPED_TRACE(e.path().filename().string() + " seq " + std::to_string(r.seq) + " " +
                     std::string(f.name));
        const FieldValue v = f.get(r);
        const json* at = value_at(j, std::string(f.json_path));
        if (f.name == "flags") {
          std::string joined;
          for (const auto& x : j.value("flags", json::array())) {
            joined += (joined.empty() ? "" : ";") + x.get<std::string>();
          }
          EXPECT_EQ(std::get<std::string>(v), joined);
        } else if (at == nullptr || at->is_null()) {
          EXPECT_TRUE(f.nullable || std::holds_alternative<std::string>(v));
          if (f.nullable) {
            EXPECT_TRUE(std::holds_alternative<std::monostate>(v));
          }
        } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
          EXPECT_EQ(*i, at->get<std::int64_t>());
        } else if (const auto* d = std::get_if<double>(&v)) {
          EXPECT_DOUBLE_EQ(*d, at->get<double>());
        } else {
          ASSERT_TRUE(std::holds_alternative<std::string>(v)) << "absent, but the record has it";
          EXPECT_EQ(std::get<std::string>(v), at->get<std::string>());
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace kvbench
