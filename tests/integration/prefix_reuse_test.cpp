// The prefix-reuse experiment on the real llama-server: each edited resend re-reads only the
// tokens from its first difference on, the server's cache_n says exactly that, and the time
// follows; a varying line costs a full read when placed first and almost nothing when last;
// a repeated prompt without a unique first line looks much faster than it is.

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Pair {
  const CallRecord* cold = nullptr;
  const CallRecord* edited = nullptr;
  double prompt_ms_ratio() const { return *edited->server.prompt_ms / *cold->server.prompt_ms; }
  double ttft_ratio() const { return *edited->client.ttft_ms / *cold->client.ttft_ms; }
};

std::map<int, Pair> pairs_of(const std::vector<CallRecord>& calls) {
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

// Both reads ok, the edit kept the token count, and the server reused exactly the tokens before
// the first difference.
//
// How exactly cache_n matches: with -np 1, id_slot 0 and no --cache-reuse, llama-server keeps
// the longest common token prefix of the new prompt and its slot's cache, token by token (not in
// whole cache cells), and re-reads at least one token. So the edited read's cache_n equals the
// first-difference index exactly, or the prompt length minus one for an unchanged resend; and
// prompt_n + cache_n is the prompt's full length for both reads.
// `max_cold_reuse`: what a cold read may share with the prompt before it (one token natively; the
// chat template's start and the common start of the first line through a chat endpoint).
// `server_times`: the server reports its prompt time (llama-server's timings; not on /v1/messages).
void expect_exact_reuse(const Pair& p, int max_cold_reuse = 1, bool server_times = true) {
  ASSERT_TRUE(p.cold && p.edited);
  const auto& e = *p.edited;
  ASSERT_EQ(p.cold->outcome, kvbench::Outcome::ok) << p.cold->error;
  ASSERT_EQ(e.outcome, kvbench::Outcome::ok) << e.error;
  ASSERT_TRUE(e.server.cache_n && e.server.prompt_n && e.edit_first_diff);
  ASSERT_TRUE(e.server.prompt_ms || !server_times);
  EXPECT_EQ(e.prompt_tokens_counted, p.cold->prompt_tokens_counted) << e.edit;
  EXPECT_EQ(e.prompt_tokens_counted, e.prompt_tokens) << "built to the exact token count";
  EXPECT_TRUE(e.flags.empty()) << e.seq;
  EXPECT_TRUE(p.cold->flags.empty()) << p.cold->seq;
  EXPECT_EQ(p.cold->server.cache_n, p.cold->expected_cache_n) << "the cold read is cold";
  EXPECT_LE(*p.cold->server.cache_n, max_cold_reuse);
  const int n = *e.prompt_tokens_counted;
  EXPECT_EQ(*e.expected_cache_n, std::min(*e.edit_first_diff, n - 1));
  EXPECT_EQ(e.server.cache_n, e.expected_cache_n) << e.edit_position << " " << e.edit;
  EXPECT_EQ(*e.server.prompt_n + *e.server.cache_n, n);
  EXPECT_EQ(*p.cold->server.prompt_n + *p.cold->server.cache_n, n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The same experiment on every way llama-server is called: its native /completion, and its
// OpenAI- and Anthropic-compatible endpoints (prompts through its chat template).
struct EditKind {
  std::string name;
  std::string server;        // the scenario's "server" members besides model and threads
  bool server_times = true;  // llama-server's timings come back (not on /v1/messages)
  // Pairs per position. The timing bands are the server's and are judged on the native endpoint
  // (five pairs); each other endpoint proves its reuse exactly on every pair and keeps the
  // order of the times (two pairs).
  int repeats = 5;
};

// Where the median ratio of an edit at f must lie. Re-reading the tokens after fL costs 1 - f of
// a cold read if every token costs the same, and up to 1 - f^2 if attention (a cost growing with
// each token's position, the L^2 term of prefill) dominates: the tokens read again are the dear
// ones. So the band is [1 - f, 1 - f^2], with `slack` either side for noise. A server that reused
// nothing reads about 1 at every f and fails at f = 0.75 (band 0.25 to 0.44).
void expect_in_band(double ratio, double f, double slack, const std::string& what) {
  EXPECT_GE(ratio, 1 - f - slack) << what << " at f = " << f;
  EXPECT_LE(ratio, 1 - f * f + slack) << what << " at f = " << f;
}

class EditRatios : public ::testing::TestWithParam<EditKind> {};

TEST_P(EditRatios, FollowOneMinusF) {
  const fs::path results = fresh_dir("prefix_reuse_" + GetParam().name);
  // The "lesson" shape makes the prompt read dominate. Measured on a 2-core machine: at 1,000
  // tokens the ratios sit 0.06 to 0.08 above 1 - f (later tokens attend to more context, and a
  // shorter read runs in smaller batches), so they stay within 0.1 of it. One server thread
  // keeps other load on the machine from stalling the server's thread barriers: cold reads
  // then varied by about 30 % instead of 50 % or more. Later the same VM got noisier (the
  // server alone decoded 112-192 tok/s over 16 calls in a row), and with three pairs the median
  // at f = 0.25 read 0.63 in one run and 0.86 in another, and 0.906 later (inside 1 - f^2 =
  // 0.94: the attention term). So: five pairs per position, judged by their median, within 0.1 of
  // the band [1 - f, 1 - f^2] (0.15 for TTFT), and the medians must fall as f grows. About 40 s.
  const std::string scenario = write_file(results, "prefix.json",
                                          R"({
    "name": "prefix", "server": {)" + GetParam().server +
                                              R"("model": "synthetic:lesson", "threads": 1},
    "factors": {"prompt_tokens": [1000], "num_ctx": [1280],
                "edit_position": [0.25, 0.5, 0.75, "none"]},
    "repeats": )" + std::to_string(GetParam().repeats) +
                                              R"(, "warmup": 1, "max_tokens": 2, "seed": 5 })");
  const auto r = run_kvbench({"run", scenario, "--results", (results / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(results / "runs");
  const auto calls = read_calls(run_dir);
  const int n_pairs = 4 * GetParam().repeats;
  ASSERT_EQ(calls.size(), static_cast<std::size_t>(2 * n_pairs + 1));
  const auto pairs = pairs_of(calls);
  ASSERT_EQ(pairs.size(), static_cast<std::size_t>(n_pairs));
  const bool bands = GetParam().repeats >= 5;
  std::map<std::string, std::vector<double>> prompt_ms_ratios;
  std::map<std::string, std::vector<double>> ttft_ratios;
  for (const auto& [id, p] : pairs) {
    SCOPED_TRACE(p.edited->edit_position + " " + p.edited->edit);
    const bool server_times = GetParam().server_times;
    expect_exact_reuse(p, GetParam().name == "native" ? 1 : 32, server_times);
    const std::string& pos = p.edited->edit_position;
    prompt_ms_ratios[pos].push_back(server_times ? p.prompt_ms_ratio() : p.ttft_ratio());
    ttft_ratios[pos].push_back(p.ttft_ratio());
    if (pos != "none") {
      const double share = double(*p.edited->edit_first_diff) / *p.edited->prompt_tokens_counted;
      EXPECT_NEAR(share, std::stod(pos), 0.01) << "the word replaced sits at f of the tokens";
    }
  }
  for (const auto& [pos, ratios] : prompt_ms_ratios) {
    // Server prompt time is the primary measure; the client's TTFT adds one decoded token and
    // the network, so it is held to a looser bound.
    if (pos == "none") {
      EXPECT_LT(median(ratios), 0.05) << "unchanged resend";
      EXPECT_LT(median(ttft_ratios[pos]), 0.1) << "unchanged resend, TTFT";
      continue;
    }
    if (!bands) {
      continue;
    }
    // Where the server reports no times (/v1/messages) this measure is the TTFT too, and is
    // held to the TTFT's bound: one run through /v1/messages read 0.634 at f = 0.25.
    expect_in_band(median(ratios), std::stod(pos), GetParam().server_times ? 0.1 : 0.15,
                   "server prompt time (TTFT where the server reports none)");
    expect_in_band(median(ttft_ratios[pos]), std::stod(pos), 0.15, "TTFT");
  }
  if (bands) {
    EXPECT_GT(median(prompt_ms_ratios["0.25"]), median(prompt_ms_ratios["0.5"]));
    EXPECT_GT(median(prompt_ms_ratios["0.5"]), median(prompt_ms_ratios["0.75"]));
  } else {  // 1 - f: 0.75 against 0.25, far apart beside a two-pair median's noise
    EXPECT_GT(median(prompt_ms_ratios["0.25"]), median(prompt_ms_ratios["0.75"]));
  }
  const auto rep =
      run_kvbench({"report", run_dir.string(), "--json", (results / "summary.json").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("## Prefix reuse: the edit-position experiment"));
  EXPECT_THAT(rep.out, HasSubstr(fmt::format("{0} of {0} pairs complete", n_pairs)));
  EXPECT_THAT(rep.out, HasSubstr(fmt::format("in {0} of {0} pairs the edited read's cache_n "
                                             "equalled",
                                             n_pairs)));
  const auto summary = read_json(results / "summary.json");
  const auto& positions = summary["prefix_reuse"]["positions"];
  ASSERT_EQ(positions.size(), 4U);
  EXPECT_EQ(positions[0]["edit_position"], "0.25");
  EXPECT_EQ(positions[0]["lesson_ratio"], 0.78);
  EXPECT_EQ(positions[3]["edit_position"], "none");
  EXPECT_EQ(summary["conditions"][0]["calls"], n_pairs) << "the table counts the cold reads only";
}

INSTANTIATE_TEST_SUITE_P(
    PrefixReuse, EditRatios,
    ::testing::Values(EditKind{"native", ""},
                      EditKind{"chat", R"("kind": "openai", "endpoint": "chat", )", true, 2},
                      EditKind{"completions", R"("kind": "openai", "endpoint": "completions", )",
                               true, 2},
                      EditKind{"messages", R"("kind": "anthropic", )", false, 2}),
    [](const auto& kind) { return kind.param.name; });

// The small model reads fast; one server thread keeps its reads steady on a busy machine.
TEST(PrefixReuse, AVaryingLineCostsAFullReadFirstAndAlmostNothingLast) {
  const fs::path results = fresh_dir("put_last");
  const std::string scenario = write_file(results, "last.json", R"({
    "name": "last", "server": {"model": "synthetic:small", "threads": 1},
    "factors": {"prompt_tokens": [1024], "num_ctx": [1280],
                "edit_position": ["timestamp_first", "timestamp_last", "question"]},
    "repeats": 1, "warmup": 1, "max_tokens": 4 })");
  const auto r =
      run_kvbench({"run", scenario, "--results", (results / "runs").string(), "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = read_calls(only_run_dir(results / "runs"));
  const auto pairs = pairs_of(calls);
  ASSERT_EQ(pairs.size(), 3U);
  for (const auto& [id, p] : pairs) {
    SCOPED_TRACE(p.edited->edit_position + " " + p.edited->edit);
    expect_exact_reuse(p);
    if (p.edited->edit_position == "question") {
      // Only the question's last word changed: everything before it is reused.
      EXPECT_THAT(p.edited->edit, HasSubstr("'river' -> '"));
      EXPECT_GT(*p.edited->server.cache_n, 1000);
      continue;
    }
    EXPECT_THAT(p.edited->edit, HasSubstr("'Current time: ")) << "the timestamp line changed";
    if (p.edited->edit_position == "timestamp_first") {
      // Only the unique first line and the timestamp's unchanged start are reused.
      EXPECT_GT(*p.edited->server.prompt_n, 0.9 * *p.edited->prompt_tokens_counted);
      EXPECT_GT(p.prompt_ms_ratio(), 0.5) << "a full re-read costs about as much as the cold read";
    } else {
      EXPECT_GT(*p.edited->server.cache_n, 1000);
      EXPECT_LT(p.prompt_ms_ratio(), 0.1);
    }
  }
  EXPECT_THAT(r.out, HasSubstr("Put what changes last: with a timestamp line at the start"));
}

TEST(PrefixReuse, RepeatedPromptTrapIsQuantifiedInTheReport) {
  const fs::path results = fresh_dir("trap_report");
  const std::string scenario = write_file(results, "trap.json", R"({
    "name": "trap", "server": {"model": "synthetic:small", "threads": 1},
    "factors": {"prompt_tokens": [1024], "num_ctx": [1280]}, "unique_first_line": false,
    "repeats": 3, "block_repeats": 2, "warmup": 0, "max_tokens": 4 })");
  const auto r =
      run_kvbench({"run", scenario, "--results", (results / "runs").string(), "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Repeated-prompt trap (1024 tokens): 4 timed calls read their "
                               "prompt from the cache"));
  EXPECT_THAT(r.out, HasSubstr("for the 2 read cold"));
  const auto rep = run_kvbench({"report", only_run_dir(results / "runs").string(), "--json",
                                (results / "summary.json").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const auto trap = read_json(results / "summary.json")["prefix_reuse"]["trap"];
  ASSERT_EQ(trap.size(), 1U);
  EXPECT_GT(trap[0]["speedup"].get<double>(), 3.0) << "a cache hit is far faster than a read";
}

TEST(PrefixReuse, ShippedScenariosPlan) {
  for (const char* name : {"prefix-reuse", "put-what-changes-last", "repeated-prompt-trap"}) {
    const auto r =
        run_kvbench({"plan", std::string(KVBENCH_SOURCE_DIR) + "/scenarios/" + name + ".json"});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  const auto r =
      run_kvbench({"plan", std::string(KVBENCH_SOURCE_DIR) + "/scenarios/prefix-reuse.json"});
  EXPECT_THAT(r.out, HasSubstr("pair 1 cold edit"));
  EXPECT_THAT(r.out, HasSubstr("pair 1 edited edit"));
}

}  // namespace
}  // namespace kvbench::itest
