// The progress lines: one per call and result for a log or a pipe, one line redrawn in place on a
// terminal (failures and notes above it, a last line at the end), colour only when asked.

#include "harness/run/progress.h"

#include <cstdio>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvbench::run {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What a Progress wrote, read back from a temporary file.
class Captured {
 public:
  Captured() : file_(std::tmpfile(), &std::fclose) {}
  std::FILE* get() { return file_.get(); }
  std::string text() {
    std::fflush(file_.get());
    std::rewind(file_.get());
    std::string out;
    for (int c = std::fgetc(file_.get()); c != EOF; c = std::fgetc(file_.get())) {
      out += static_cast<char>(c);
    }
    return out;
  }

 private:
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

plan::Block block_of() {
  plan::Block b;
  b.index = 0;
  b.config.num_ctx = 4096;
  b.config.cache_type = "f16";
  return b;
}

CallRecord ok_record(int seq) {
  CallRecord r;
  r.seq = seq;
  r.outcome = Outcome::ok;
  r.client.ttft_ms = 12.5;
  r.client.decode_tps = 300;
  r.server.cache_n = 1;
  return r;
}

CallRecord failed_record(int seq) {
  CallRecord r;
  r.seq = seq;
  r.outcome = Outcome::timeout;
  r.error = "no answer";
  return r;
}

void three_calls(Progress& p) {
  const plan::Block b = block_of();
  plan::PlannedCall c;
  c.prompt_tokens = 256;
  for (int i = 0; i < 3; ++i) {
    c.seq = i;
    p.call_started(c, b);
    p.call_done(i == 1 ? failed_record(i) : ok_record(i));
  }
  p.note("block 0: a note");
}

TEST(Progress, LinesForALogHaveNoEscapes) {
  Captured out;
  {
    Progress p(3, {true, false, false}, out.get());
    three_calls(p);
  }
  const std::string text = out.text();
  EXPECT_THAT(text, HasSubstr("[1/3] block 0"));
  EXPECT_THAT(text, HasSubstr("[3/3] block 0"));
  EXPECT_THAT(text, HasSubstr("    ttft 12.5 ms, decode 300.0 tok/s, cache_n 1\n"));
  EXPECT_THAT(text, HasSubstr("    failed: timeout: no answer\n"));
  EXPECT_THAT(text, Not(HasSubstr("\x1b"))) << "no terminal codes in a log";
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7) << "a line per call, result and note";
}

TEST(Progress, ATerminalGetsOneLineRedrawnWithFailuresAbove) {
  Captured out;
  {
    Progress p(3, {true, true, false}, out.get());
    three_calls(p);
  }
  const std::string text = out.text();
  EXPECT_THAT(text, HasSubstr("\r\x1b[K[1/3] block 0"));
  EXPECT_THAT(text, HasSubstr("| last: ttft 12.5 ms")) << "the last result on the line";
  EXPECT_THAT(text, HasSubstr("\r\x1b[Kcall 1: failed: timeout: no answer\n"));
  EXPECT_THAT(text, HasSubstr("\r\x1b[Kblock 0: a note\n"));
  EXPECT_THAT(text, HasSubstr("\r\x1b[K[3/3] done in"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3)
      << "newlines only for the failure, the note and the end";
  EXPECT_THAT(text, Not(HasSubstr("\x1b[3"))) << "no colour unless asked";
}

TEST(Progress, ColourOnlyWhenAskedFailuresRedFlagsYellow) {
  Captured out;
  {
    Progress p(3, {true, false, true}, out.get());
    const plan::Block b = block_of();
    plan::PlannedCall c;
    p.call_started(c, b);
    p.call_done(failed_record(0));
    CallRecord flagged = ok_record(1);
    flagged.flags = {"unexpected_cache_reuse"};
    p.call_done(flagged);
  }
  const std::string text = out.text();
  EXPECT_THAT(text, HasSubstr("\x1b[38;2;255;000;000mfailed: timeout"));
  EXPECT_THAT(text, HasSubstr("\x1b[38;2;255;255;000mflags: unexpected_cache_reuse"));
}

TEST(Progress, QuietWritesNothing) {
  Captured out;
  {
    Progress p(3, {false, true, true}, out.get());
    three_calls(p);
  }
  EXPECT_EQ(out.text(), "");
}

}  // namespace
}  // namespace kvbench::run
