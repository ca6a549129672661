// The one table helper: the same rows as aligned Markdown, CSV, TSV, JSON and JSON Lines, with
// each format's escaping.

#include "harness/report/table.h"

#include <sstream>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::report {
namespace {

Table sample() {
  Table t({{"config", false}, {"n", true}, {"ttft ms", true}});
  t.add_row({"ctx=4096 kv=f16", "12", "308.6"});
  t.add_row({"a|b, \"c\"", "3", "-"});
  t.add_row({"short"});  // padded with empty cells
  return t;
}

std::string render(const Table& t, const std::string& format) {
  std::ostringstream out;
  t.write(out, format);
  return out.str();
}

TEST(Table, MarkdownIsAlignedWithPipesEscaped) {
  EXPECT_EQ(render(sample(), "md"),
            "| config          |   n | ttft ms |\n"
            "|-----------------|----:|--------:|\n"
            "| ctx=4096 kv=f16 |  12 |   308.6 |\n"
            "| a\\|b, \"c\"       |   3 |       - |\n"
            "| short           |     |         |\n");
}

TEST(Table, CsvQuotesWhatNeedsItAndTsvFlattensTabs) {
  EXPECT_EQ(render(sample(), "csv"),
            "config,n,ttft ms\n"
            "ctx=4096 kv=f16,12,308.6\n"
            "\"a|b, \"\"c\"\"\",3,-\n"
            "short,,\n");
  Table t({{"a", false}, {"b", false}});
  t.add_row({"x\ty", "line\nbreak"});
  EXPECT_EQ(render(t, "tsv"), "a\tb\nx y\tline break\n");
  EXPECT_EQ(csv_cell(" edge"), "\" edge\"");
  EXPECT_EQ(csv_cell("plain"), "plain");
}

TEST(Table, JsonHasNumbersForNumericColumnsAndNullsForEmptyCells) {
  const auto j = sample().to_json();
  ASSERT_EQ(j.size(), 3U);
  EXPECT_EQ(j[0]["config"], "ctx=4096 kv=f16");
  EXPECT_TRUE(j[0]["n"].is_number_integer());
  EXPECT_EQ(j[0]["n"], 12);
  EXPECT_DOUBLE_EQ(j[0]["ttft ms"].get<double>(), 308.6);
  EXPECT_TRUE(j[1]["ttft ms"].is_null()) << "'-' is no value";
  EXPECT_TRUE(j[2]["n"].is_null());
  const std::string lines = render(sample(), "jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 3);
  EXPECT_EQ(nlohmann::json::parse(lines.substr(0, lines.find('\n'))), j[0]);
  EXPECT_THROW(render(sample(), "xml"), Error);
}

}  // namespace
}  // namespace kvbench::report
