#include "harness/http/curl_transport.h"

#include <array>
#include <exception>

#include "harness/http/curl_common.h"

namespace kvbench::http {

using namespace curl_detail;

class CurlTransport::Easy {
 public:
  Easy() : handle_(curl_easy_init()) {
    if (!handle_) {
      throw Error("libcurl could not create an easy handle");
    }
  }
  CURL* get() const { return handle_.get(); }
  char* error_buffer() { return error_buffer_.data(); }

 private:
  EasyPtr handle_;
  std::array<char, CURL_ERROR_SIZE> error_buffer_{};
};

CurlTransport::CurlTransport(const Clock& clock) : clock_(clock) {
  init_curl_once();
  easy_ = std::make_unique<Easy>();
}

CurlTransport::~CurlTransport() = default;

Result CurlTransport::stream(const Request& req, const ChunkSink& sink) {
  return perform(req, &sink);
}

Result CurlTransport::fetch(const Request& req) {
  return perform(req, nullptr);
}

Result CurlTransport::perform(const Request& req, const ChunkSink* sink) {
  CURL* easy = easy_->get();
  char* error_buffer = easy_->error_buffer();
  Result result;
  CallState state;
  state.clock = &clock_;
  state.easy = easy;
  state.sink = sink;
  state.result = &result;
  const SlistPtr headers = build_headers(req);
  set_options(easy, error_buffer, req, headers.get(), state);
  error_buffer[0] = '\0';

  result.started = clock_.now();
  const CURLcode code = curl_easy_perform(easy);
  result.finished = clock_.now();

  if (state.sink_exception) {
    std::rethrow_exception(state.sink_exception);
  }
  finish_result(easy, code, state, error_buffer);
  return result;
}

}  // namespace kvbench::http
