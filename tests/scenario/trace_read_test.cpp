#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kTraces = std::string(KVBENCH_TEST_DATA) + "/traces/";

// The message of the InputError that reading `text` throws; fails the test if none is thrown.
std::string read_error(const std::string& text, Format format) {
  std::istringstream in(text);
  try {
    read_trace(in, format, "t.jsonl");
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(TraceFormat, NamesRoundTrip) {
  for (Format f : {Format::mooncake, Format::bailian, Format::weka}) {
    EXPECT_EQ(format_named(format_name(f)), f);
  }
  EXPECT_FALSE(format_named("azure").has_value());
}

TEST(TraceRead, MooncakeConversationTraceLoadsWhole) {
  const Trace t = read_trace_file(kTraces + "mooncake-conversation.jsonl.xz", Format::mooncake);
  ASSERT_EQ(t.requests.size(), 12031U);
  EXPECT_EQ(t.block_tokens, 512);
  EXPECT_TRUE(t.partial_block_has_id);
  const Request& first = t.requests.front();
  EXPECT_EQ(first.input_tokens, 6758);
  EXPECT_EQ(first.output_tokens, 500);
  EXPECT_EQ(first.blocks.size(), 14U);
  EXPECT_EQ(first.origin, "line 1");
  EXPECT_DOUBLE_EQ(t.requests.back().due_ms, 3536999.0);
  for (const auto& r : t.requests) {
    ASSERT_EQ(r.blocks.front(), 0U) << r.origin;  // every request starts with block 0
  }
}

TEST(TraceRead, BailianFixtureKeepsSessionLinksAndSeconds) {
  const Trace t = read_trace_file(kTraces + "bailian-fixture.jsonl", Format::bailian);
  ASSERT_EQ(t.requests.size(), 4U);
  EXPECT_EQ(t.block_tokens, 16);
  EXPECT_DOUBLE_EQ(t.requests[1].due_ms, 1500.0);
  EXPECT_EQ(t.requests[1].chat_id, 2);
  EXPECT_EQ(t.requests[1].parent_chat_id, 1);
  EXPECT_EQ(t.requests[1].turn, 2);
  EXPECT_EQ(t.requests[2].type, "file");
  EXPECT_EQ(t.requests[3].blocks, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 6, 7}));
}

TEST(TraceRead, AGzippedTraceReadsAsItsPlainFile) {
  std::ifstream plain(kTraces + "bailian-fixture.jsonl", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(plain)), std::istreambuf_iterator<char>());
  const auto path = std::filesystem::temp_directory_path() / "kvbench-bailian-fixture.jsonl.gz";
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  const Trace zipped = read_trace_file(path.string(), Format::bailian);
  const Trace t = read_trace_file(kTraces + "bailian-fixture.jsonl", Format::bailian);
  std::filesystem::remove(path);
  ASSERT_EQ(zipped.requests.size(), t.requests.size());
  for (std::size_t i = 0; i < t.requests.size(); ++i) {
    EXPECT_EQ(zipped.requests[i].blocks, t.requests[i].blocks);
    EXPECT_EQ(zipped.requests[i].due_ms, t.requests[i].due_ms);
    EXPECT_EQ(zipped.requests[i].origin, t.requests[i].origin);
  }
}

TEST(TraceRead, WekaFixtureGivesSubagentsIdsOfTheirOwn) {
  const Trace t = read_trace_file(kTraces + "weka-fixture.json", Format::weka);
  ASSERT_EQ(t.requests.size(), 5U);
  EXPECT_EQ(t.block_tokens, 64);
  EXPECT_FALSE(t.partial_block_has_id);
  // The subagent spawns at 6 s; its requests' times count from there.
  std::vector<double> due;
  for (const auto& r : t.requests) {
    due.push_back(r.due_ms);
  }
  EXPECT_EQ(due, (std::vector<double>{0, 5000, 6000, 8500, 10000}));
  EXPECT_EQ(t.requests[2].origin, "requests[2].requests[0]");
  // The conversation's ids 1, 2, 3, 4 and 6 and the subagent's 1, 2, 5 are eight blocks.
  EXPECT_EQ(t.requests[0].blocks, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(t.requests[1].blocks, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.requests[2].blocks, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(t.requests[3].blocks, (std::vector<std::uint64_t>{4, 5, 6}));
  EXPECT_EQ(t.requests[4].blocks, (std::vector<std::uint64_t>{0, 1, 2, 3, 7}));
}

TEST(TraceRead, WekaGlobalScopeSharesIdsWithSubagents) {
  std::istringstream in(R"({"block_size": 64, "hash_id_scope": "global", "requests": [
      {"t": 0, "type": "n", "in": 128, "out": 1, "hash_ids": [7, 8]},
      {"t": 1, "type": "subagent", "requests": [
        {"t": 0, "type": "n", "in": 64, "out": 1, "hash_ids": [7]}]}]})");
  const Trace t = read_trace(in, Format::weka, "g.json");
  ASSERT_EQ(t.requests.size(), 2U);
  EXPECT_EQ(t.requests[1].blocks.front(), t.requests[0].blocks.front());
}

TEST(TraceRead, WekaListOfConversationsKeepsThemApart) {
  std::istringstream in(R"([
      {"block_size": 64, "requests": [{"t": 2, "type": "n", "in": 64, "out": 1, "hash_ids": [1]}]},
      {"block_size": 64, "requests": [{"t": 1, "type": "n", "in": 64, "out": 1, "hash_ids": [1]}]}
    ])");
  const Trace t = read_trace(in, Format::weka, "two.json");
  ASSERT_EQ(t.requests.size(), 2U);
  EXPECT_EQ(t.requests[0].origin, "[1].requests[0]");  // arrival order across conversations
  EXPECT_NE(t.requests[0].blocks, t.requests[1].blocks);
}

TEST(TraceReadErrors, MooncakeBlockCountNamesLineFieldAndRule) {
  const auto message = read_error(
      "{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 5, \"input_length\": 1000, \"output_length\": 1, \"hash_ids\": [0]}\n",
      Format::mooncake);
  EXPECT_THAT(message, AllOf(HasSubstr("trace 't.jsonl' line 2"), HasSubstr("'hash_ids'"),
                             HasSubstr("ceil(input_length 1000 / 512) = 2 block ids, got 1")));
}

TEST(TraceReadErrors, MooncakeTimestampGoingBackNamesBothLines) {
  const auto message = read_error(
      "{\"timestamp\": 10, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "\n"
      "{\"timestamp\": 9, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n",
      Format::mooncake);
  EXPECT_THAT(message, AllOf(HasSubstr("line 3"), HasSubstr("'timestamp'"),
                             HasSubstr("non-decreasing"), HasSubstr("9 after 10 on line 1")));
}

TEST(TraceReadErrors, MissingOrWrongFieldsAreNamed) {
  EXPECT_THAT(
      read_error("{\"timestamp\": 0, \"input_length\": 1, \"hash_ids\": [0]}\n", Format::mooncake),
      AllOf(HasSubstr("line 1"), HasSubstr("'output_length'"), HasSubstr("missing")));
  EXPECT_THAT(read_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, "
                         "\"hash_ids\": [-3]}\n",
                         Format::mooncake),
              AllOf(HasSubstr("'hash_ids'"), HasSubstr("item 0"), HasSubstr("got -3")));
  EXPECT_THAT(read_error("{\"timestamp\": 0, \"input_length\": 2.5, \"output_length\": 1, "
                         "\"hash_ids\": [0]}\n",
                         Format::mooncake),
              AllOf(HasSubstr("'input_length'"), HasSubstr("expected an integer")));
  EXPECT_THAT(read_error("not json\n", Format::mooncake),
              AllOf(HasSubstr("line 1"), HasSubstr("not JSON")));
  EXPECT_THAT(read_error("\n", Format::mooncake), HasSubstr("no requests"));
}

TEST(TraceReadErrors, BailianChecksItsOwnFieldsAndBlocks) {
  EXPECT_THAT(read_error("{\"chat_id\": 1, \"timestamp\": 0, \"input_length\": 16, "
                         "\"output_length\": 1, \"type\": \"text\", \"turn\": 1, "
                         "\"hash_ids\": [0]}\n",
                         Format::bailian),
              AllOf(HasSubstr("line 1"), HasSubstr("'parent_chat_id'")));
  EXPECT_THAT(read_error("{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 0, "
                         "\"input_length\": 17, \"output_length\": 1, \"type\": \"text\", "
                         "\"turn\": 1, \"hash_ids\": [0]}\n",
                         Format::bailian),
              HasSubstr("ceil(input_length 17 / 16) = 2 block ids, got 1"));
}

TEST(TraceReadErrors, WekaNamesTheNestedRequest) {
  const auto message = read_error(R"({"block_size": 64, "requests": [
      {"t": 0, "type": "n", "in": 64, "out": 1, "hash_ids": [1]},
      {"t": 1, "type": "subagent", "requests": [
        {"t": 0, "type": "n", "in": 64, "out": 1, "hash_ids": [1]},
        {"t": 1, "type": "n", "in": 200, "out": 1, "hash_ids": [1, 2]}]}]})",
                                  Format::weka);
  EXPECT_THAT(message, AllOf(HasSubstr("requests[1].requests[1]"), HasSubstr("'hash_ids'"),
                             HasSubstr("floor(in 200 / 64) = 3 block ids, got 2")));
  EXPECT_THAT(read_error(R"({"requests": []})", Format::weka), HasSubstr("'block_size'"));
  EXPECT_THAT(read_error(R"({"block_size": 64, "requests": [
      {"t": 3, "type": "n", "in": 64, "out": 1, "hash_ids": [1]},
      {"t": 2, "type": "n", "in": 64, "out": 1, "hash_ids": [1]}]})",
                         Format::weka),
              AllOf(HasSubstr("requests[1]"), HasSubstr("'t'"), HasSubstr("non-decreasing")));
}

TEST(TraceReadErrors, UnreadableFileIsNamed) {
  try {
    read_trace_file(kTraces + "no-such-trace.jsonl", Format::mooncake);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("no-such-trace.jsonl"));
  }
}

}  // namespace
}  // namespace kvbench::workloads::trace
