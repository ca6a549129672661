#include "harness/backend/backend.h"

namespace kvbench::backend {

CallResult stream_call(Backend& be, http::Transport& transport, const CompletionSpec& spec) {
  const auto decoder = be.open_stream(spec);
  const auto res = transport.stream(
      be.stream_request(spec),
      [&](std::string_view chunk, Nanos arrival) { return decoder->feed(chunk, arrival); });
  return decoder->finish(res);
}

}  // namespace kvbench::backend
