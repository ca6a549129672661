#include "harness/lesson/labs.h"

#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/lesson/evaluate.h"
#include "harness/lesson/render.h"

namespace kvbench::lesson {
namespace {

using ::testing::HasSubstr;

TEST(Labs, SelectKeepsTheCanonicalOrderAndRefusesUnknownNames) {
  EXPECT_EQ(select_labs("").size(), 5U);
  const auto two = select_labs("repeated-prompt,prompt-length");
  ASSERT_EQ(two.size(), 2U);
  EXPECT_EQ(two[0].id, "prompt-length");
  EXPECT_EQ(two[1].id, "repeated-prompt");
  try {
    select_labs("prompt-length,ctx");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown lab 'ctx'"));
    EXPECT_THAT(e.what(), HasSubstr("context-window"));
  }
}

LabOptions quick_options() {
  LabOptions o;
  o.quick = true;
  return o;
}
const LabOptions kQuick = quick_options();

TEST(Labs, EveryLabParsesInBothSizesAndTheQuickPatchApplies) {
  for (const auto& lab : labs()) {
    EXPECT_NO_THROW(lab_scenario(lab, {})) << lab.id;
    EXPECT_NO_THROW(lab_scenario(lab, kQuick)) << lab.id;
  }
  const auto full = lab_scenario(labs()[0], {});
  EXPECT_EQ(full.factors.prompt_tokens, (std::vector<int>{256, 1024, 2048, 4096, 6144, 7900}));
  EXPECT_EQ(full.repeats * static_cast<int>(full.factors.prompt_tokens.size()), 30);
  EXPECT_EQ(full.server.model, "synthetic:lesson");
  const auto quick = lab_scenario(labs()[0], kQuick);
  EXPECT_EQ(quick.name, "lesson-prompt-length-quick");
  EXPECT_EQ(quick.server.model, "synthetic:small");
  EXPECT_EQ(quick.factors.num_ctx, (std::vector<int>{4096}));
}

TEST(Labs, CommandLineOverridesTheServer) {
  const auto j = lab_scenario_json(labs()[1], {.quick = true,
                                               .kind = "ollama",
                                               .model = "qwen2.5:3b",
                                               .url = "http://127.0.0.1:11434",
                                               .binary = ""});
  EXPECT_EQ(j["server"]["kind"], "ollama");
  EXPECT_EQ(j["server"]["model"], "qwen2.5:3b");
  EXPECT_EQ(j["server"]["url"], "http://127.0.0.1:11434");
  EXPECT_EQ(j["factors"]["num_ctx"], nlohmann::json({2048, 8192, 32768}));
}

TEST(Figures, EveryFigureHasALabelAValueAndACheckOfItsLab) {
  const auto& f = figures();
  std::set<std::string> ids;
  for (const auto& fig : f.at("figures")) {
    const auto id = fig.at("id").get<std::string>();
    EXPECT_TRUE(ids.insert(id).second) << "duplicate " << id;
    EXPECT_FALSE(fig.at("label").get<std::string>().empty()) << id;
    EXPECT_NE(lesson_value_text(fig, f), "?") << id;
    const auto checks = lab_checks(fig.at("lab").get<std::string>());
    const auto check = fig.at("check").get<std::string>();
    EXPECT_TRUE(
        std::any_of(checks.begin(), checks.end(), [&](const auto& c) { return c.first == check; }))
        << id << " names check " << check;
  }
  EXPECT_EQ(ids.size(), 21U);
}

TEST(Figures, ValuesComeFromTheFileOrAPointerIntoIt) {
  const nlohmann::json file = {{"a", {{"b", 0.78}}}};
  EXPECT_EQ(lesson_value_text({{"from", "/a/b"}, {"unit", ""}}, file), "0.78");
  EXPECT_EQ(lesson_value_text({{"value", 36864}, {"unit", "B"}}, file), "36864 B");
  EXPECT_EQ(lesson_value_text({{"value", 8.6}, {"text", "8.6 tok/s, a fifth"}}, file),
            "8.6 tok/s, a fifth");
  EXPECT_EQ(lesson_value_text({{"from", "/a/c"}}, file), "?");
}

TEST(Report, CountsVerdictsAndExitsOneUnlessAllPass) {
  LabRun run{labs()[4], "results/x/run", 12.0, lab_not_run("repeated-prompt", "no server")};
  run.outcome.measured["resend_cold"] = "1.2 s";
  const RunInfo info{"quick", "llama-server (managed)", "synthetic:small", "2026-01-01T00:00:00Z",
                     20.0};
  auto j = report_json({run}, info, figures());
  EXPECT_EQ(j["verdicts"], nlohmann::json({{"pass", 0}, {"fail", 0}, {"inconclusive", 1}}));
  EXPECT_EQ(report_exit_code(j), 1);
  const auto& rows = j["labs"][0]["figures"];
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0]["lesson"], "2.53 s");
  EXPECT_EQ(rows[0]["here"], "1.2 s");
  EXPECT_EQ(rows[1]["here"], "not measured");
  std::ostringstream md;
  write_report_markdown(md, j);
  EXPECT_THAT(md.str(), HasSubstr("| 1,130-token prompt, first read | 2.53 s | 1.2 s |"));
  EXPECT_THAT(md.str(), HasSubstr("- **inconclusive**: A repeated prompt looks much faster at the "
                                  "same token count. no server.\n"));
  run.outcome.checks[0].result.verdict = Verdict::pass;
  j = report_json({run}, info, figures());
  EXPECT_EQ(report_exit_code(j), 0);
}

}  // namespace
}  // namespace kvbench::lesson
