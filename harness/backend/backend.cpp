#include "harness/backend/backend.h"

namespace kvbench::backend {

std::vector<std::pair<std::string, std::string>> bearer_header(const std::string& api_key) {
  if (api_key.empty()) {
    return {};
  }
  return {{"Authorization", "Bearer " + api_key}};
}

CallResult stream_call(Backend& be, http::Transport& transport, const CompletionSpec& spec) {
  const auto decoder = be.open_stream(spec);
  const auto res = transport.stream(
      be.stream_request(spec),
      [&](std::string_view chunk, Nanos arrival) { return decoder->feed(chunk, arrival); });
  return decoder->finish(res);
}

}  // namespace kvbench::backend
