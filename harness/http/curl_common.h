#pragma once
// What the libcurl transports share: option setting, request headers, the write callback that
// stamps every chunk's arrival, and how a finished transfer becomes a Result. Only the curl_*
// files of this folder include this header.

#include <exception>
#include <memory>
#include <string>

#include <curl/curl.h>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/http/transport.h"

namespace kvbench::http::curl_detail {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

// Runs curl_global_init once per process. Throws kvbench::Error when it fails.
void init_curl_once();

// curl_easy_setopt that throws kvbench::Error when libcurl rejects the option.
template <typename Value>
void set_option(CURL* easy, CURLoption option, Value value) {
  const CURLcode code = curl_easy_setopt(easy, option, value);
  if (code != CURLE_OK) {
    throw Error(std::string("libcurl rejected an option: ") + curl_easy_strerror(code));
  }
}

// curl_easy_getinfo, or a value-initialised Value when libcurl has none.
template <typename Value>
Value get_info(CURL* easy, CURLINFO info) {
  Value value{};
  if (curl_easy_getinfo(easy, info, &value) != CURLE_OK) {
    return Value{};
  }
  return value;
}

// The request's headers plus a JSON Content-Type for a body without one and an empty Expect.
SlistPtr build_headers(const Request& req);

// The socket an event loop is handing to libcurl and the time its wait returned with that socket
// ready: the bytes libcurl then reads from it had arrived by then.
struct ReadyStamp {
  curl_socket_t socket = CURL_SOCKET_BAD;  // CURL_SOCKET_BAD: none
  Nanos at{0};
};

// What one transfer shares with the write callback.
struct CallState {
  const Clock* clock = nullptr;
  // The event loop's stamp (MultiTransport), or null. A chunk read from its socket is stamped with
  // its time rather than the callback's, so the time spent on other sockets ready in the same
  // wake-up does not count against this one.
  const ReadyStamp* ready = nullptr;
  CURL* easy = nullptr;
  const ChunkSink* sink = nullptr;  // null: collect the whole body
  Result* result = nullptr;
  bool saw_body = false;
  bool collect = false;  // decided at the first body byte, once the status is known
  bool sink_stopped = false;
  bool interrupted = false;  // the interrupt check ended the call (set_interrupt_check)
  std::exception_ptr sink_exception;
};

// The CURLOPT_WRITEFUNCTION: stamps the chunk's arrival first, then hands it to the sink (2xx) or
// keeps it as the error body.
std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user);

// Resets `easy` and sets every option of one call: URL, method, body, headers, timeouts, no proxy,
// no Nagle, and on_body with `state`.
void set_options(CURL* easy, char* error_buffer, const Request& req, const curl_slist* headers,
                 CallState& state);

// Fills *state.result from a finished transfer: status, phase times, outcome and error text.
void finish_result(CURL* easy, CURLcode code, const CallState& state, const char* error_buffer);

}  // namespace kvbench::http::curl_detail
