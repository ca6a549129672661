#include "harness/run/progress.h"

#include <fmt/color.h>
#include <fmt/format.h>

namespace kvbench::run {

namespace {

constexpr const char* kClearLine = "\r\x1b[K";

}  // namespace

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

Progress::Progress(std::size_t total_calls, ProgressStyle style, std::FILE* out)
    : total_(total_calls), style_(style), out_(out) {}

Progress::~Progress() {
  if (style_.enabled && style_.live && drawn_) {
    fmt::print(out_, "{}[{}/{}] done in {}\n", kClearLine, done_, total_,
               format_duration(elapsed_s()));
    std::fflush(out_);
  }
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::eta() const {
  if (done_ == 0) {
    return "?";
  }
  return format_duration(elapsed_s() / static_cast<double>(done_) *
                         static_cast<double>(total_ - std::min(done_, total_)));
}

void Progress::print_line(const std::string& text) {
  if (style_.live) {
    fmt::print(out_, "{}{}\n", kClearLine, text);
    drawn_ = false;
    redraw();
  } else {
    fmt::print(out_, "{}\n", text);
  }
  std::fflush(out_);
}

void Progress::redraw() {
  std::string line = fmt::format("[{}/{}] {}  elapsed {}, ~{} left", std::min(done_ + 1, total_),
                                 total_, current_, format_duration(elapsed_s()), eta());
  if (!last_.empty()) {
    line += "  | last: " + last_;
  }
  fmt::print(out_, "{}{}", kClearLine, line);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::call_started(const plan::PlannedCall& call, const plan::Block& block) {
  if (!style_.enabled) {
    return;
  }
  current_ = fmt::format("block {} ({}) {} prompt_tokens={}", block.index, block.config.label(),
                         to_string(call.kind), call.prompt_tokens);
  started_ = true;
  if (style_.live) {
    redraw();
    return;
  }
  fmt::print(out_, "[{}/{}] {}  elapsed {}, ~{} left\n", done_ + 1, total_, current_,
             format_duration(elapsed_s()), eta());
  std::fflush(out_);
}

void Progress::call_done(const CallRecord& r) {
  ++done_;
  if (!style_.enabled) {
    return;
  }
  const auto paint = [&](fmt::color c, const std::string& text) {
    return style_.color ? fmt::format(fmt::fg(c), "{}", text) : text;
  };
  if (!r.ok()) {
    const std::string failed = fmt::format("failed: {}: {}", to_string(r.outcome), r.error);
    print_line((style_.live ? fmt::format("call {}: ", r.seq) : std::string("    ")) +
               paint(fmt::color::red, failed));
    last_ = paint(fmt::color::red, "failed");
    return;
  }
  std::string result = fmt::format("ttft {:.1f} ms, decode {:.1f} tok/s, cache_n {}",
                                   r.client.ttft_ms.value_or(0), r.client.decode_tps.value_or(0),
                                   r.server.cache_n ? std::to_string(*r.server.cache_n) : "-");
  if (!r.flags.empty()) {
    result += "  " + paint(fmt::color::yellow, fmt::format("flags: {}", fmt::join(r.flags, ",")));
  }
  if (style_.live) {
    if (!started_) {
      // Calls in flight at once are not announced one by one: name the block and what ended.
      current_ =
          fmt::format("block {} ({})", r.block,
                      together_.empty() ? fmt::format("{} calls in flight", r.in_flight.value_or(1))
                                        : together_);
    }
    started_ = false;
    last_ = std::move(result);
    redraw();
  } else {
    fmt::print(out_, "    {}\n", result);
    std::fflush(out_);
  }
}

void Progress::together(std::string what) {
  together_ = std::move(what);
}

void Progress::note(const std::string& message) {
  if (style_.enabled) {
    print_line(message);
  }
}

}  // namespace kvbench::run
