#include "harness/run/pair_prompt.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/prompt/edit.h"

namespace kvbench::run {

namespace {

using Kind = scenario::EditPosition::Kind;

constexpr int kTimestampCandidates = 30;

std::vector<std::string> later_timestamps(std::int64_t unix_s) {
  std::vector<std::string> out;
  for (int k = 1; k <= kTimestampCandidates; ++k) {
    out.push_back(prompt::timestamp_line(unix_s + k));
  }
  return out;
}

}  // namespace

PairPrompt PairPrompts::next(const plan::PlannedCall& call, CallRecord& r, const std::string& nonce,
                             std::uint64_t filler_seed, std::int64_t now_unix_s,
                             backend::Backend& be) {
  r.pair_id = call.pair;
  r.pair_role = std::string(plan::to_string(call.role));
  r.edit_position = call.edit ? call.edit->label() : "";
  if (call.role == plan::PairRole::cold) {
    pending_.reset();
    return cold(call, nonce, filler_seed, now_unix_s, be);
  }
  if (!pending_ || pending_->pair != call.pair) {
    throw Error(
        fmt::format("pair {}: no cold prompt to resend (its cold read was not built)", call.pair));
  }
  PairPrompt p = edited(call, r, be);
  pending_.reset();
  return p;
}

PairPrompt PairPrompts::cold(const plan::PlannedCall& call, const std::string& nonce,
                             std::uint64_t filler_seed, std::int64_t now_unix_s,
                             backend::Backend& be) {
  const prompt::CountFn count = [&](std::string_view t) { return be.count_tokens(t); };
  Pending p;
  p.pair = call.pair;
  p.nonce = nonce;
  const Kind kind = call.edit ? call.edit->kind : Kind::none;
  std::string last_line;
  if (kind == Kind::question) {
    last_line = prompt::question_line("river");
    p.span_len = std::string_view("river").size();
    p.span_candidates = prompt::substitute_words();
  } else if (kind == Kind::timestamp_last) {
    last_line = prompt::timestamp_line(now_unix_s);
    p.span_len = last_line.size();
    p.span_candidates = later_timestamps(now_unix_s);
  }
  if (kind == Kind::timestamp_first) {
    const std::string line = prompt::timestamp_line(now_unix_s);
    p.prompt.built =
        prompt::build_prompt(call.prompt_tokens, nonce + "\n" + line, filler_seed, count);
    p.span_pos = nonce.size() + 1;
    p.span_len = line.size();
    p.span_candidates = later_timestamps(now_unix_s);
  } else if (!last_line.empty()) {
    p.prompt.built = prompt::build_prompt_with_last_line(call.prompt_tokens, nonce, last_line,
                                                         filler_seed, count);
    const std::size_t line_pos = p.prompt.built.text.size() - last_line.size();
    p.span_pos = kind == Kind::question ? p.prompt.built.text.rfind("river") : line_pos;
  } else {
    p.prompt.built = prompt::build_prompt(call.prompt_tokens, nonce, filler_seed, count);
  }
  p.prompt.ids = be.tokenize(p.prompt.built.text);
  pending_ = p;
  return p.prompt;
}

PairPrompt PairPrompts::edited(const plan::PlannedCall& call, CallRecord& r, backend::Backend& be) {
  const Pending& p = *pending_;
  const prompt::TokenizeFn tokenize = [&](std::string_view t) { return be.tokenize(t); };
  const std::string& text = p.prompt.built.text;
  const Kind kind = call.edit ? call.edit->kind : Kind::none;
  PairPrompt out = p.prompt;
  r.nonce = p.nonce;
  if (kind == Kind::none) {
    r.edit_first_diff = static_cast<int>(p.prompt.ids.size());
    r.edit = "unchanged";
    return out;
  }
  const prompt::Edit e =
      kind == Kind::fraction
          ? prompt::edit_word_at(text, p.prompt.ids, call.edit->fraction, tokenize)
          : prompt::replace_span(text, p.prompt.ids, p.span_pos, p.span_len, p.span_candidates,
                                 tokenize);
  out.built.text = e.text;
  out.built.tokens = static_cast<int>(e.ids.size());
  out.built.exact = p.prompt.built.exact && e.same_count;
  out.ids = e.ids;
  out.same_count = e.same_count;
  r.edit_first_diff = e.first_diff;
  r.edit = fmt::format("'{}' -> '{}'", e.replaced, e.replacement);
  return out;
}

}  // namespace kvbench::run
