// A stream ended by its watch on the real llama-server: the call is answered with the tokens up
// to then, the server stops the request (it releases the slot with the tokens up to then) and
// serves the next call whole.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "harness/backend/llama_server.h"
#include "harness/core/clock.h"
#include "harness/http/curl_transport.h"
#include "harness/process/ports.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

// The tokens llama-server held in the slot when it released its first task, from its log ("slot
// release: id 0 | task 0 | stop processing: n_tokens = 21"): the prompt and what it generated
// before it stopped; -1 when the log has no such line.
int first_release_tokens(const fs::path& log) {
  return logged_number(log, R"(release: .*stop processing: n_tokens = (\d+))");
}

TEST(TokenWatch, AStreamEndedByItsWatchIsAnsweredAndTheServerDropsIt) {
  const fs::path dir = fresh_dir("token_watch");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port = process::find_free_loopback_port();
  auto server = serve_by_hand(dir / "tiny.gguf", port, dir / "server.log");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(answers_soon(url + "/health", {}, 400)) << "llama-server did not start";
  SteadyClock clock;
  http::CurlTransport transport(clock);
  backend::LlamaServerBackend be(transport, url, "");
  backend::CompletionSpec spec;
  spec.prompt = "One long answer, please.";
  spec.max_tokens = 200;
  spec.timeout = std::chrono::milliseconds(60000);
  int told = 0;
  spec.watch = [&](Nanos /*arrival*/, int tokens) {
    told += tokens;
    return told < 4;
  };
  const auto ended = be.complete(spec);
  EXPECT_EQ(ended.outcome, Outcome::ok) << ended.error;
  EXPECT_TRUE(ended.ended);
  EXPECT_EQ(told, 4);
  EXPECT_LT(derive_timing(ended.trace).tokens, 200);
  spec.watch = nullptr;
  spec.max_tokens = 16;
  const auto whole = be.complete(spec);
  EXPECT_EQ(whole.outcome, Outcome::ok) << whole.error;
  EXPECT_FALSE(whole.ended);
  EXPECT_EQ(whole.server.predicted_n, 16);
  const int prompt = be.count_tokens(spec.prompt);
  server.stop(std::chrono::milliseconds(3000));
  // The server stopped the call when the stream ended: it released the slot with the prompt and
  // a few tokens, not the 200 asked for (what the installed llama-server logs).
  const int held = first_release_tokens(dir / "server.log");
  ASSERT_GT(held, 0) << "no slot release in the server's log";
  EXPECT_LT(held, prompt + 50);
}

}  // namespace
}  // namespace kvbench::itest
