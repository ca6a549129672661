// The prefix-reuse experiment on Ollama, against the fixture server (tests/fixtures): edits placed
// by text keep the count the server reports, and the resend's time follows 1 - f.
//
// Why the ratios hold: the fixture counts BOS plus one token per 4 bytes, reuses the longest
// common prefix with its previous prompt in whole 4-byte tokens (all but one token at most), and
// sleeps 40 us per token it reads. An edit at fraction f of the tokens therefore re-reads about
// (1 - f) n of the cold read's n - 1 tokens. The fixture measures its own sleep, so the prompt-time
// ratio strays from 1 - f only by sleep overshoot: a 2,048-token cold read takes 82 ms, and the
// tolerance of 0.1 (kvbench's own kRatioTolerance) allows 8 ms of it. TTFT adds the request's
// fixed costs (HTTP, one decoded token: about 2 ms) to both reads, hence 0.15 for its ratio.

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/stats/descriptive.h"
#include "tests/integration/harness.h"
#include "tests/integration/ollama_fixture_server.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr double kPromptRatioTolerance = 0.1;
constexpr double kTtftRatioTolerance = 0.15;

struct Pair {
  const CallRecord* cold = nullptr;
  const CallRecord* edited = nullptr;
};

// Pairs by id; the reads of a pair run one right after the other.
std::map<int, Pair> ollama_pairs_of(const std::vector<CallRecord>& calls) {
  std::map<int, Pair> out;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    if (c.pair_role == kvbench::PairRole::cold) {
      out[*c.pair_id].cold = &c;
    } else if (c.pair_role == kvbench::PairRole::edited) {
      EXPECT_EQ(calls[i - 1].pair_id, c.pair_id) << "nothing runs between the reads of a pair";
      out[*c.pair_id].edited = &c;
    }
  }
  return out;
}

// Both reads ok, the edit placed by text, and the server counted both reads the same.
void expect_same_count(const Pair& p) {
  ASSERT_TRUE(p.cold && p.edited);
  const auto& e = *p.edited;
  ASSERT_EQ(p.cold->outcome, kvbench::Outcome::ok) << p.cold->error;
  ASSERT_EQ(e.outcome, kvbench::Outcome::ok) << e.error;
  ASSERT_TRUE(e.server.prompt_n && p.cold->server.prompt_n && e.edit_text_fraction &&
              e.edit_first_diff);
  EXPECT_EQ(*e.server.prompt_n, *p.cold->server.prompt_n) << e.edit_position << " " << e.edit;
  // The calibration from short probes extrapolates to the first long prompt within 1 %.
  EXPECT_NEAR(*e.server.prompt_n, e.prompt_tokens, 0.01 * e.prompt_tokens);
  EXPECT_FALSE(e.server.cache_n) << "Ollama reports no reuse";
  EXPECT_FALSE(e.expected_cache_n);
  EXPECT_TRUE(e.flags.empty()) << e.seq;
  EXPECT_TRUE(p.cold->flags.empty()) << p.cold->seq;
  EXPECT_EQ(e.nonce, p.cold->nonce) << "the resend keeps the cold read's first line";
}

// Median edited/cold ratios per edit position.
struct Ratios {
  std::map<std::string, std::vector<double>> prompt, ttft;
  double prompt_median(const std::string& pos) { return stats::median(prompt.at(pos)); }
  double ttft_median(const std::string& pos) { return stats::median(ttft.at(pos)); }
};

Ratios ratios_of(const std::map<int, Pair>& pairs) {
  Ratios out;
  for (const auto& [id, p] : pairs) {
    const std::string& pos = p.edited->edit_position;
    out.prompt[pos].push_back(*p.edited->server.prompt_ms / *p.cold->server.prompt_ms);
    out.ttft[pos].push_back(*p.edited->client.ttft_ms / *p.cold->client.ttft_ms);
  }
  return out;
}

std::string prefix_scenario(const std::string& server, const std::string& positions, int repeats) {
  return R"({"name": "ollama-prefix",
    "server": {"kind": "ollama", "model": "synthetic-small", )" +
         server + R"(},
    "factors": {"prompt_tokens": [2048], "num_ctx": [4096], "edit_position": [)" +
         positions + R"(]},
    "repeats": )" +
         std::to_string(repeats) + R"(, "warmup": 0, "max_tokens": 4})";
}

TEST(OllamaPrefixReuse, EditsPlacedByTextKeepTheCountAndTheTimeFollowsOneMinusF) {
  OllamaFixtureServer fixture({}, "fixture-prefix.log");
  const fs::path dir = fresh_dir("ollama-prefix");
  const std::string scenario =
      write_file(dir, "s.json",
                 prefix_scenario(R"("url": ")" + fixture.url() + R"(")",
                                 R"(0.25, 0.5, 0.75, "question", "none")", 3));
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  EXPECT_EQ(read_json(run_dir / "run.json")["status"], "complete");
  const auto calls = read_calls(run_dir);
  const auto pairs = ollama_pairs_of(calls);
  ASSERT_EQ(pairs.size(), 15U);
  for (const auto& [id, p] : pairs) {
    expect_same_count(p);
    const auto& e = *p.edited;
    const int n = *e.server.prompt_n;
    if (e.edit_position == "none") {
      EXPECT_EQ(e.edit, "unchanged");
      EXPECT_DOUBLE_EQ(*e.edit_text_fraction, 1.0);
    } else if (e.edit_position == "question") {
      EXPECT_GT(*e.edit_text_fraction, 0.95) << e.edit;
      EXPECT_THAT(e.edit, HasSubstr("'river' -> '"));
    } else {
      // The edit sits where it was asked for, in the text and as an estimated token index.
      const double f = std::stod(e.edit_position);
      EXPECT_NEAR(*e.edit_text_fraction, f, 0.01) << e.edit;
      EXPECT_NEAR(*e.edit_first_diff, f * n, 5) << e.edit;
    }
  }
  auto ratios = ratios_of(pairs);
  for (const double f : {0.25, 0.5, 0.75}) {
    const std::string pos = f == 0.25 ? "0.25" : f == 0.5 ? "0.5" : "0.75";
    EXPECT_NEAR(ratios.prompt_median(pos), 1 - f, kPromptRatioTolerance) << pos;
    EXPECT_NEAR(ratios.ttft_median(pos), 1 - f, kTtftRatioTolerance) << pos;
  }
  EXPECT_LT(ratios.prompt_median("question"), kPromptRatioTolerance);
  EXPECT_LT(ratios.prompt_median("none"), kPromptRatioTolerance);
  // The report's prefix section, with reuse inferred from time and no made-up cache_n.
  EXPECT_THAT(r.out, HasSubstr("## Prefix reuse: the edit-position experiment"));
  EXPECT_THAT(r.out, HasSubstr("15 of 15 pairs complete"));
  EXPECT_THAT(r.out, HasSubstr("Reused tokens: not reported."));
  EXPECT_THAT(r.out, HasSubstr("the same for both reads in 15 of 15 pairs"));
  EXPECT_THAT(r.out, HasSubstr("Verdict: Consistent with prefix reuse up to the first "
                               "difference, inferred from time only"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("0 of 0")));
}

TEST(OllamaPrefixReuse, ManagedServerPutsWhatChangesLast) {
  const fs::path dir = fresh_dir("ollama-prefix-managed");
  const std::string scenario =
      write_file(dir, "s.json",
                 prefix_scenario(R"("binary": ")" + std::string(KVBENCH_OLLAMA_FIXTURE) + R"(")",
                                 R"(0.5, "timestamp_first", "timestamp_last")", 1));
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["mode"], "managed");
  const auto calls = read_calls(run_dir);
  const auto pairs = ollama_pairs_of(calls);
  ASSERT_EQ(pairs.size(), 3U);
  for (const auto& [id, p] : pairs) {
    expect_same_count(p);
  }
  auto ratios = ratios_of(pairs);
  EXPECT_NEAR(ratios.prompt_median("0.5"), 0.5, kPromptRatioTolerance);
  EXPECT_GT(ratios.prompt_median("timestamp_first"), 1 - kPromptRatioTolerance);
  EXPECT_LT(ratios.prompt_median("timestamp_last"), kPromptRatioTolerance);
  EXPECT_THAT(r.out, HasSubstr("Put what changes last"));
}

}  // namespace
}  // namespace kvbench::itest
