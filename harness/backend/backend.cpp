#include "harness/backend/backend.h"

namespace kvbench::backend {

std::vector<std::pair<std::string, std::string>> bearer_header(const std::string& api_key) {
  if (api_key.empty()) {
    return {};
  }
  return {{"Authorization", "Bearer " + api_key}};
}

bool WatchedStream::feed(std::string_view chunk, Nanos arrival) {
  if (!decoder_->feed(chunk, arrival)) {
    return false;
  }
  if (!watch_) {
    return true;
  }
  const CallTrace& t = decoder_->trace();
  for (; told_ < t.token_arrivals.size(); ++told_) {
    const int n = told_ < t.token_counts.size() ? t.token_counts[told_] : 1;
    if (!watch_(t.token_arrivals[told_], n)) {
      ended_ = true;
      ++told_;
      return false;
    }
  }
  return true;
}

CallResult WatchedStream::finish(const http::Result& res) {
  CallResult r = decoder_->finish(res);
  if (ended_ && r.outcome == Outcome::aborted) {
    r.outcome = Outcome::ok;
    r.error.clear();
    r.ended = true;
  }
  return r;
}

CallResult stream_call(Backend& be, http::Transport& transport, const CompletionSpec& spec) {
  WatchedStream stream(be.open_stream(spec), spec.watch);
  const auto res = transport.stream(
      be.stream_request(spec),
      [&](std::string_view chunk, Nanos arrival) { return stream.feed(chunk, arrival); });
  return stream.finish(res);
}

}  // namespace kvbench::backend
