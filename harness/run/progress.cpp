#include "harness/run/progress.h"

#include <cstdio>

#include <fmt/format.h>

namespace kvbench::run {

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) {
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  }
  if (s >= 60) {
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  }
  return fmt::format("{}s", s);
}

Progress::Progress(std::size_t total_calls, bool enabled)
    : total_(total_calls), enabled_(enabled) {}

void Progress::call_started(const plan::PlannedCall& call, const plan::Block& block) {
  if (!enabled_) {
    return;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "?";
  if (done_ > 0) {
    eta =
        format_duration(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  }
  fmt::print(stderr, "[{}/{}] block {} ({}) {} prompt_tokens={}  elapsed {}, ~{} left\n", done_ + 1,
             total_, block.index, block.config.label(), to_string(call.kind), call.prompt_tokens,
             format_duration(elapsed), eta);
}

void Progress::call_done(const CallRecord& r) {
  ++done_;
  if (!enabled_) {
    return;
  }
  if (!r.ok()) {
    fmt::print(stderr, "    failed: {}: {}\n", to_string(r.outcome), r.error);
  } else {
    fmt::print(stderr, "    ttft {:.1f} ms, decode {:.1f} tok/s, cache_n {}{}\n",
               r.client.ttft_ms.value_or(0), r.client.decode_tps.value_or(0),
               r.server.cache_n ? std::to_string(*r.server.cache_n) : "-",
               r.flags.empty() ? "" : fmt::format("  flags: {}", fmt::join(r.flags, ",")));
  }
}

void Progress::note(const std::string& message) {
  if (enabled_) {
    fmt::print(stderr, "{}\n", message);
  }
}

}  // namespace kvbench::run
