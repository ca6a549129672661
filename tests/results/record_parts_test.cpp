// A call record described once (core/describe.h, results/record_parts.h): every record of the
// recorded runs reads and writes back as it was, each column reads what the record holds at its
// path, a workload's columns appear only in its own runs, and the committed JSON Schema of
// calls.jsonl is the one the descriptions generate.

#include "harness/results/record_parts.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/describe.h"
#include "harness/results/results.h"

namespace kvbench::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> lines_of(const fs::path& run) {
  std::vector<json> out;
  std::ifstream in(run / "calls.jsonl");
  for (std::string line; std::getline(in, line);) {
    out.push_back(json::parse(line));
  }
  return out;
}

std::vector<fs::path> recorded_runs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(KVBENCH_TEST_DATA) / "runs")) {
    out.push_back(e.path());
  }
  return out;
}

// Written back, a record is the line it was read from; a version 1 turn's wait moves from
// queue_ms into its conversation part (record version 2's place).
TEST(RecordDescription, EveryRecordedCallWritesBackAsItWasRead) {
  int checked = 0;
  int parts = 0;
  for (const auto& run : recorded_runs()) {
    for (json j : lines_of(run)) {
      SCOPED_TRACE(run.filename().string() + " seq " + j["seq"].dump());
      const CallRecord r = record_from_json(j);
      if (j.value("version", 2) < 2 && j.contains("conversation") && j.contains("queue_ms")) {
        j["conversation"]["wait_ms"] = j["queue_ms"];
        j.erase("queue_ms");
      }
      EXPECT_EQ(to_json(r), j);
      parts += r.part.empty() ? 0 : 1;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
  EXPECT_GT(parts, 40) << "the recorded conversation and trace runs carry their parts";
}

const json* value_at(const json& record, const std::string& path) {
  const auto p = describe::detail::pointer(path);
  return record.contains(p) ? &record.at(p) : nullptr;
}

// Each column of each run reads what calls.jsonl holds at the column's path.
TEST(RecordDescription, EachColumnReadsWhatTheRecordHolds) {
  int checked = 0;
  for (const auto& run : recorded_runs()) {
    const auto lines = lines_of(run);
    std::vector<CallRecord> calls;
    for (const auto& j : lines) {
      calls.push_back(record_from_json(j));
    }
    for (const auto& f : call_columns(calls)) {
      for (std::size_t i = 0; i < calls.size(); ++i) {
        SCOPED_TRACE(run.filename().string() + " seq " + std::to_string(calls[i].seq) + " " +
                     f.name);
        const json j = to_json(calls[i]);
        const FieldValue v = f.get(calls[i]);
        const json* at = value_at(j, f.json_path);
        if (at != nullptr && at->is_array()) {
          std::string joined;
          for (const auto& x : *at) {
            joined += (joined.empty() ? "" : ";") + x.get<std::string>();
          }
          EXPECT_EQ(std::get<std::string>(v), joined);
        } else if (at == nullptr || at->is_null()) {
          EXPECT_TRUE(std::holds_alternative<std::monostate>(v) ||
                      std::get<std::string>(v).empty());
        } else if (const auto* n = std::get_if<std::int64_t>(&v)) {
          EXPECT_EQ(*n, at->get<std::int64_t>());
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
  EXPECT_GT(checked, 5000);
}

std::set<std::string> column_names(const std::string& run) {
  const auto loaded = load_run(fs::path(KVBENCH_TEST_DATA) / "runs" / run);
  std::set<std::string> out;
  for (const auto& f : call_columns(loaded.calls)) {
    EXPECT_TRUE(out.insert(f.name).second) << f.name << " twice";
  }
  return out;
}

// A workload's columns are its own runs': a prompt sweep has none of a turn's or a request's.
TEST(RecordDescription, AWorkloadsColumnsAppearInItsOwnRunsOnly) {
  const auto sweep = column_names("quickstart");
  const auto conversation = column_names("conversation-tiny");
  const auto trace = column_names("trace-tiny");
  const auto always = std::count_if(call_fields().begin(), call_fields().end(),
                                    [](const CallField& f) { return !f.where_given; });
  EXPECT_EQ(sweep.size(), static_cast<std::size_t>(always))
      << "the record's own, but those only given in some runs (batch sizes)";
  EXPECT_FALSE(sweep.count("batch_size"));
  for (const char* c : {"turn", "history_tokens", "wait_ms"}) {
    EXPECT_TRUE(conversation.count(c)) << c;
    EXPECT_FALSE(sweep.count(c) || trace.count(c)) << c;
  }
  for (const char* c : {"trace_index", "predicted_tokens", "mismatch"}) {
    EXPECT_TRUE(trace.count(c)) << c;
    EXPECT_FALSE(sweep.count(c) || conversation.count(c)) << c;
  }
  ASSERT_NE(record_part("conversation"), nullptr);
  EXPECT_EQ(record_part("sweep"), nullptr) << "a sweep's calls carry no part";
}

// The committed schema is generated: KVBENCH_UPDATE_SCHEMA=1 writes it anew.
TEST(RecordDescription, TheCommittedSchemaIsTheGeneratedOne) {
  const fs::path path =
      fs::path(KVBENCH_SOURCE_DIR) / "results/schemas/kvbench.call.v1.schema.json";
  const json generated = call_schema();
  if (std::getenv("KVBENCH_UPDATE_SCHEMA") != nullptr) {
    std::ofstream(path) << generated.dump(2) << "\n";
  }
  std::ifstream in(path);
  EXPECT_EQ(json::parse(in), generated)
      << "results/schemas/kvbench.call.v1.schema.json is not what the record's description "
         "generates: run this test with KVBENCH_UPDATE_SCHEMA=1";
  EXPECT_EQ(generated["properties"]["conversation"]["properties"]["reuse"]["enum"],
            json({"on", "off"}));
  EXPECT_EQ(generated["properties"]["trace"]["properties"]["loss"]["enum"],
            json({"capacity", "placement", nullptr}));
}

}  // namespace
}  // namespace kvbench::results
