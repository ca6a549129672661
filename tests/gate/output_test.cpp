#include "harness/gate/output.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kvbench::gate {
namespace {

using stats::Verdict;

GateReport report(Verdict v, bool inconclusive_fails) {
  GateReport r;
  r.title = "kvbench gate: demo";
  r.mode = "interleaved";
  r.overall = v;
  r.inconclusive_fails = inconclusive_fails;
  r.rows = {{"decode_tps", "all calls", "cand vs base", v, "change -12.0 % <x>", ""}};
  return r;
}

TEST(GateOutput, ExitCodes) {
  EXPECT_EQ(exit_code(Verdict::pass, true), 0);
  EXPECT_EQ(exit_code(Verdict::fail, false), 1);
  EXPECT_EQ(exit_code(Verdict::inconclusive, true), 3);
  EXPECT_EQ(exit_code(Verdict::inconclusive, false), 0);
}

TEST(GateOutput, LinesNameVerdictMetricComparisonAndCondition) {
  std::ostringstream out;
  write_lines(out, report(Verdict::inconclusive, false));
  EXPECT_EQ(out.str(),
            "INCONCLUSIVE decode_tps cand vs base (all calls): change -12.0 % <x>\n"
            "gate: INCONCLUSIVE (warning only)\n");
}

TEST(GateOutput, JunitFailsSkipsAndEscapes) {
  std::ostringstream fail;
  write_junit(fail, report(Verdict::fail, true));
  EXPECT_NE(fail.str().find("failures=\"1\""), std::string::npos);
  EXPECT_NE(fail.str().find("<failure type=\"failed\" message=\"FAIL decode_tps [all calls] cand "
                            "vs base: change -12.0 % &lt;x&gt;\""),
            std::string::npos)
      << fail.str();
  std::ostringstream warn;
  write_junit(warn, report(Verdict::inconclusive, false));
  EXPECT_NE(warn.str().find("<skipped message="), std::string::npos);
  EXPECT_EQ(warn.str().find("<failure"), std::string::npos);
  std::ostringstream closed;
  write_junit(closed, report(Verdict::inconclusive, true));
  EXPECT_NE(closed.str().find("<failure type=\"undecided\""), std::string::npos);
}

TEST(GateOutput, MarkdownAndJson) {
  std::ostringstream md;
  write_markdown(md, report(Verdict::pass, true));
  EXPECT_NE(md.str().find("**Verdict: PASS**"), std::string::npos);
  EXPECT_NE(md.str().find("| PASS | decode_tps | all calls | cand vs base |"), std::string::npos);
  const auto j = report_json(report(Verdict::fail, true));
  EXPECT_EQ(j["overall"], "FAIL");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["rows"][0]["metric"], "decode_tps");
}

}  // namespace
}  // namespace kvbench::gate
