#include "harness/http/curl_common.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <string>

#include "harness/core/error.h"

namespace kvbench::http::curl_detail {

namespace {

// An error response body is kept for its message; more than this is not worth holding.
constexpr std::size_t kMaxErrorBodyBytes = 64 * 1024;

}  // namespace

// curl_global_init is not thread-safe, so it runs once, inside a function-local static.
void init_curl_once() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    throw Error(std::string("libcurl initialisation failed: ") + curl_easy_strerror(code));
  }
}

namespace {

bool is_success_status(long status) {
  return status >= 200 && status <= 299;
}

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

void append_header(SlistPtr& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (grown == nullptr) {
    throw Error("libcurl could not allocate a request header");
  }
  static_cast<void>(list.release());  // `grown` now owns the old list
  list.reset(grown);
}

bool sends_body(const Request& req) {
  return req.method != "GET" && req.method != "HEAD";
}

}  // namespace

SlistPtr build_headers(const Request& req) {
  SlistPtr list;
  bool has_content_type = false;
  for (const auto& [name, value] : req.headers) {
    has_content_type = has_content_type || iequals(name, "Content-Type");
    append_header(list, name + ": " + value);
  }
  if (sends_body(req) && !req.body.empty() && !has_content_type) {
    append_header(list, "Content-Type: application/json");
  }
  append_header(list, "Expect:");  // never wait for a 100-continue before sending the body
  return list;
}

namespace {

bool deliver(CallState& state, std::string_view chunk, Nanos arrival) {
  try {
    if ((*state.sink)(chunk, arrival)) {
      return true;
    }
  } catch (...) {
    state.sink_exception = std::current_exception();
  }
  state.sink_stopped = true;
  return false;
}

}  // namespace

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& state = *static_cast<CallState*>(user);
  Nanos arrival = state.clock->now();  // first: the time these bytes reached us
  if (state.ready != nullptr && state.ready->socket != CURL_SOCKET_BAD &&
      get_info<curl_socket_t>(state.easy, CURLINFO_ACTIVESOCKET) == state.ready->socket) {
    arrival = state.ready->at;  // earlier: when the loop learned they were there
  }
  const std::size_t length = size * count;
  if (length == 0) {
    return 0;
  }
  Result& result = *state.result;
  if (!state.saw_body) {
    state.saw_body = true;
    result.first_byte = arrival;
    const long status = get_info<long>(state.easy, CURLINFO_RESPONSE_CODE);
    state.collect = state.sink == nullptr || !is_success_status(status);
  }
  result.bytes_received += length;
  const std::string_view chunk(data, length);
  if (state.collect) {
    const bool capped = state.sink != nullptr;
    const std::size_t room =
        capped ? kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, result.body.size()) : length;
    result.body.append(chunk.substr(0, room));
    return length;
  }
  return deliver(state, chunk, arrival) ? length : 0;  // 0 makes libcurl stop: CURLE_WRITE_ERROR
}

namespace {

// CURLOPT_HEADERFUNCTION: one response header line at a time; only Retry-After is kept.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& state = *static_cast<CallState*>(user);
  const std::size_t length = size * count;
  std::string_view line(data, length);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() && iequals(line.substr(0, kName.size()), kName)) {
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())) != 0) {
      value.remove_prefix(1);
    }
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())) != 0) {
      value.remove_suffix(1);
    }
    state.result->retry_after.assign(value.substr(0, 64));
  }
  return length;
}

// CURLOPT_PREREQFUNCTION: the connection is ready and the request is about to be written.
int on_request_out(void* user, char* /*primary_ip*/, char* /*local_ip*/, int /*primary_port*/,
                   int /*local_port*/) {
  auto& state = *static_cast<CallState*>(user);
  state.result->request_out = state.clock->now();
  return CURL_PREREQFUNC_OK;
}

// CURLOPT_XFERINFOFUNCTION: libcurl calls it while a transfer waits or moves (at least about
// once a second); a non-zero answer ends the transfer with CURLE_ABORTED_BY_CALLBACK.
int on_progress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
                curl_off_t /*ulnow*/) {
  auto& state = *static_cast<CallState*>(user);
  if (interrupted()) {
    state.interrupted = true;
    return 1;
  }
  return 0;
}

// A failure before the request went out means no usable connection was made; after it, the
// response was late (timeout) or broken (stream_error).
Outcome classify(CURLcode code, long status, bool sink_stopped, bool request_sent) {
  if (sink_stopped || code == CURLE_ABORTED_BY_CALLBACK) {
    return Outcome::aborted;
  }
  if (status != 0 && !is_success_status(status)) {
    return Outcome::http_error;
  }
  if (code == CURLE_OK) {
    return Outcome::ok;
  }
  if (!request_sent) {
    return Outcome::connect_error;
  }
  return code == CURLE_OPERATION_TIMEDOUT ? Outcome::timeout : Outcome::stream_error;
}

TransferTimes read_times(CURL* easy) {
  TransferTimes times;
  times.connect_us = get_info<curl_off_t>(easy, CURLINFO_CONNECT_TIME_T);
  times.pretransfer_us = get_info<curl_off_t>(easy, CURLINFO_PRETRANSFER_TIME_T);
  times.starttransfer_us = get_info<curl_off_t>(easy, CURLINFO_STARTTRANSFER_TIME_T);
  times.total_us = get_info<curl_off_t>(easy, CURLINFO_TOTAL_TIME_T);
  return times;
}

void set_method(CURL* easy, const Request& req) {
  if (req.method == "GET") {
    set_option(easy, CURLOPT_HTTPGET, 1L);
    return;
  }
  if (req.method == "HEAD") {
    set_option(easy, CURLOPT_NOBODY, 1L);
    return;
  }
  set_option(easy, CURLOPT_POST, 1L);
  set_option(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  set_option(easy, CURLOPT_POSTFIELDS, req.body.c_str());
  if (req.method != "POST") {
    set_option(easy, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
}

}  // namespace

// Options are set afresh on every call; curl_easy_reset keeps the open connections.
void set_options(CURL* easy, char* error_buffer, const Request& req, const curl_slist* headers,
                 CallState& state) {
  curl_easy_reset(easy);
  set_option(easy, CURLOPT_URL, req.url.c_str());
  set_option(easy, CURLOPT_NOSIGNAL, 1L);
  set_option(easy, CURLOPT_TCP_NODELAY, 1L);
  set_option(easy, CURLOPT_PROXY, "");  // an empty proxy also overrides the environment
  set_option(easy, CURLOPT_NOPROXY, "*");
  // https: the server's certificate and name are checked (libcurl's defaults, kept on purpose).
  set_option(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  set_option(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  set_option(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout.count()));
  set_option(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  set_option(easy, CURLOPT_ERRORBUFFER, error_buffer);
  set_option(easy, CURLOPT_HTTPHEADER, headers);
  set_option(easy, CURLOPT_WRITEFUNCTION, static_cast<curl_write_callback>(&on_body));
  set_option(easy, CURLOPT_WRITEDATA, static_cast<void*>(&state));
  set_option(easy, CURLOPT_HEADERFUNCTION, static_cast<curl_write_callback>(&on_header));
  set_option(easy, CURLOPT_HEADERDATA, static_cast<void*>(&state));
  set_option(easy, CURLOPT_PREREQFUNCTION, static_cast<curl_prereq_callback>(&on_request_out));
  set_option(easy, CURLOPT_PREREQDATA, static_cast<void*>(&state));
  set_option(easy, CURLOPT_NOPROGRESS, 0L);
  set_option(easy, CURLOPT_XFERINFOFUNCTION, static_cast<curl_xferinfo_callback>(&on_progress));
  set_option(easy, CURLOPT_XFERINFODATA, static_cast<void*>(&state));
  set_method(easy, req);
}

namespace {

std::string failure_message(Outcome outcome, const CallState& state, CURLcode code,
                            const char* error_buffer) {
  const Result& result = *state.result;
  switch (outcome) {
    case Outcome::ok:
      return {};
    case Outcome::aborted:
      return state.interrupted ? std::string(kInterruptedError) : "stopped by the chunk sink";
    case Outcome::http_error:
      return error_message_from_body(result.http_status, result.body);
    default:
      return error_buffer[0] != '\0' ? std::string(error_buffer) : curl_easy_strerror(code);
  }
}

}  // namespace

void finish_result(CURL* easy, CURLcode code, const CallState& state, const char* error_buffer) {
  Result& result = *state.result;
  result.http_status = get_info<long>(easy, CURLINFO_RESPONSE_CODE);
  result.connections_opened = get_info<long>(easy, CURLINFO_NUM_CONNECTS);
  result.times = read_times(easy);
  const bool request_sent = get_info<long>(easy, CURLINFO_REQUEST_SIZE) > 0;
  result.outcome = classify(code, result.http_status, state.sink_stopped, request_sent);
  result.error = failure_message(result.outcome, state, code, error_buffer);
}

}  // namespace kvbench::http::curl_detail
