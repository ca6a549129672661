// libFuzzer target for the OpenAI- and Anthropic-compatible stream decoders. The input is a
// response body, fed to each decoder whole (one chunk) and in chunks derived from the input:
// both readings must agree (outcome, error, token counts, reasoning, the server's reported
// figures), nothing may throw, and every message must be recordable as JSON.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/backend/anthropic.h"
#include "harness/backend/openai.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kvbench::backend::CallResult;
using kvbench::backend::StreamDecoder;
using kvbench::fuzz::check;
using kvbench::fuzz::recordable;

CallResult read(StreamDecoder& d, std::string_view text, bool whole) {
  kvbench::Nanos t{1};
  if (whole) {
    d.feed(text, t);
  } else {
    for (const std::string_view chunk :
         kvbench::fuzz::random_chunks(text, kvbench::fuzz::hash(text, 7))) {
      t += kvbench::Nanos{1};
      if (!d.feed(chunk, t)) {
        break;
      }
    }
  }
  kvbench::http::Result res;
  res.http_status = 200;
  res.finished = t + kvbench::Nanos{1};
  return d.finish(res);
}

template <typename Decoder>
void check_decoder(std::string_view text) {
  Decoder whole_d;
  Decoder split_d;
  const CallResult whole = read(whole_d, text, true);
  const CallResult split = read(split_d, text, false);
  for (const CallResult* r : {&whole, &split}) {
    check((r->outcome == kvbench::Outcome::ok) == r->error.empty(),
          "a failed call, and only one, has a message");
    check(recordable(r->error), "a call's error message is valid UTF-8");
    check(r->trace.token_arrivals.size() == r->trace.token_counts.size(), "one count per arrival");
    check(r->trace.reasoning_tokens >= 0, "no negative reasoning count");
    check(!r->server.cache_n || *r->server.cache_n >= 0, "no negative cache_n");
    check(!r->server.prompt_n || *r->server.prompt_n >= 0, "no negative prompt_n");
    static_cast<void>(r->server.raw.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  // Both readings end at the first error event: the split one stops feeding, the whole one
  // ignores what follows it.
  check(whole.outcome == split.outcome && whole.error == split.error,
        "split and whole readings end alike");
  if (whole.outcome == kvbench::Outcome::ok) {
    int wt = 0;
    int st = 0;
    for (const int n : whole.trace.token_counts) {
      wt += n;
    }
    for (const int n : split.trace.token_counts) {
      st += n;
    }
    check(wt == st, "split and whole readings count the same tokens");
    check(whole.trace.reasoning_tokens == split.trace.reasoning_tokens,
          "split and whole readings count the same reasoning tokens");
    check(whole.server.cache_n == split.server.cache_n &&
              whole.server.prompt_n == split.server.prompt_n &&
              whole.server.predicted_n == split.server.predicted_n,
          "split and whole readings report the same server figures");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kvbench::fuzz::as_text(data, size);
  check_decoder<kvbench::backend::OpenAiStream>(text);
  check_decoder<kvbench::backend::AnthropicStream>(text);
  const auto e = kvbench::backend::decode_openai_event("message", text);
  check((e.type == kvbench::backend::OpenAiEvent::Type::error) == !e.error.empty(),
        "an OpenAI error event, and only one, has a message");
  const auto a = kvbench::backend::decode_anthropic_event("message", text);
  check((a.type == kvbench::backend::AnthropicEvent::Type::error) == !a.error.empty(),
        "an Anthropic error event, and only one, has a message");
  return 0;
}
