#include "harness/run/pair_prompt.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/prompt/edit.h"
#include "harness/prompt/text_edit.h"

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
  r.pair_role = call.role;
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
  if (p.prompt.ids.empty()) {
    return edited_by_text(call, r, be);
  }
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

PairPrompt PairPrompts::edited_by_text(const plan::PlannedCall& call, CallRecord& r,
                                       backend::Backend& be) {
  const Pending& p = *pending_;
  const prompt::CountFn count = [&](std::string_view t) { return be.count_tokens(t); };
  const std::string& text = p.prompt.built.text;
  const Kind kind = call.edit ? call.edit->kind : Kind::none;
  r.nonce = p.nonce;
  const prompt::TextEdit e =
      kind == Kind::none ? prompt::unchanged_text(text, count)
      : kind == Kind::fraction
          ? prompt::edit_word_by_text(text, call.edit->fraction, count)
          : prompt::replace_span_by_text(text, p.span_pos, p.span_len, p.span_candidates, count);
  PairPrompt out = p.prompt;
  out.built.text = e.text;
  out.built.exact = p.prompt.built.exact && e.same_length;
  out.same_count = e.same_length;
  r.edit_first_diff = e.first_diff_tokens;
  r.edit_text_fraction = e.text_fraction();
  r.edit =
      kind == Kind::none ? "unchanged" : fmt::format("'{}' -> '{}'", e.replaced, e.replacement);
  return out;
}

void PairPrompts::check_reported_count(const plan::PlannedCall& call, CallRecord& r) {
  if (!call.edit) {
    return;
  }
  if (call.role == plan::PairRole::cold) {
    cold_reported_.reset();
    if (r.ok() && r.server.prompt_n) {
      cold_reported_ = std::pair(call.pair, *r.server.prompt_n);
    }
    return;
  }
  if (r.edit_text_fraction && r.server.prompt_n && cold_reported_ &&
      cold_reported_->first == call.pair && cold_reported_->second != *r.server.prompt_n &&
      std::find(r.flags.begin(), r.flags.end(), "edit_changed_token_count") == r.flags.end()) {
    r.flags.emplace_back("edit_changed_token_count");
  }
  cold_reported_.reset();
}

}  // namespace kvbench::run
