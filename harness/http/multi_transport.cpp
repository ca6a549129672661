#include "harness/http/multi_transport.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "harness/http/curl_common.h"

namespace kvbench::http {

using curl_detail::CallState;
using curl_detail::EasyPtr;
using curl_detail::SlistPtr;

namespace {

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;

void check(CURLMcode code, const char* what) {
  if (code != CURLM_OK) {
    throw Error(std::string("libcurl multi ") + what + " failed: " + curl_multi_strerror(code));
  }
}

}  // namespace

class MultiTransport::Multi {
 public:
  Multi() : handle_(curl_multi_init()) {
    if (!handle_) {
      throw Error("libcurl could not create a multi handle");
    }
  }
  CURLM* get() const { return handle_.get(); }

 private:
  MultiPtr handle_;
};

// One call: its easy handle (kept for reuse), the request it owns (libcurl points into its body),
// and what the write callback shares.
struct MultiTransport::Transfer {
  Transfer() : easy(curl_easy_init()) {
    if (!easy) {
      throw Error("libcurl could not create an easy handle");
    }
  }
  EasyPtr easy;
  std::array<char, CURL_ERROR_SIZE> error_buffer{};
  Request request;
  SlistPtr headers;
  ChunkSink sink;
  Done done;
  Result result;
  CallState state;
};

MultiTransport::MultiTransport(const Clock& clock) : clock_(clock) {
  curl_detail::init_curl_once();
  multi_ = std::make_unique<Multi>();
}

MultiTransport::~MultiTransport() {
  for (const auto& t : busy_) {
    curl_multi_remove_handle(multi_->get(), t->easy.get());
  }
}

void MultiTransport::start(Request req, ChunkSink sink, Done done) {
  std::unique_ptr<Transfer> t;
  if (idle_.empty()) {
    t = std::make_unique<Transfer>();
  } else {
    t = std::move(idle_.back());
    idle_.pop_back();
  }
  t->request = std::move(req);
  t->sink = std::move(sink);
  t->done = std::move(done);
  t->result = Result{};
  t->state = CallState{};
  t->state.clock = &clock_;
  t->state.easy = t->easy.get();
  t->state.sink = &t->sink;
  t->state.result = &t->result;
  t->headers = curl_detail::build_headers(t->request);
  curl_detail::set_options(t->easy.get(), t->error_buffer.data(), t->request, t->headers.get(),
                           t->state);
  t->error_buffer[0] = '\0';
  t->result.started = clock_.now();
  check(curl_multi_add_handle(multi_->get(), t->easy.get()), "add");
  busy_.push_back(std::move(t));
  ++active_;
  started_in_callback_ = true;
}

std::size_t MultiTransport::poll(std::chrono::milliseconds max_wait) {
  perform_and_finish();
  if (active_ == 0) {
    return 0;
  }
  check(curl_multi_poll(multi_->get(), nullptr, 0, static_cast<int>(max_wait.count()), nullptr),
        "poll");
  perform_and_finish();
  return active_;
}

void MultiTransport::perform_and_finish() {
  do {
    started_in_callback_ = false;
    int running = 0;
    check(curl_multi_perform(multi_->get(), &running), "perform");
    finish_ended();
  } while (started_in_callback_);  // a Done callback started a call: send it now
}

void MultiTransport::finish_ended() {
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_->get(), &queued)) {
    if (msg->msg != CURLMSG_DONE) {
      continue;
    }
    CURL* easy = msg->easy_handle;
    const CURLcode code = msg->data.result;
    const Nanos finished = clock_.now();
    auto it = std::find_if(busy_.begin(), busy_.end(),
                           [&](const auto& t) { return t->easy.get() == easy; });
    if (it == busy_.end()) {
      continue;
    }
    std::unique_ptr<Transfer> t = std::move(*it);
    busy_.erase(it);
    curl_multi_remove_handle(multi_->get(), easy);
    --active_;
    t->result.finished = finished;
    curl_detail::finish_result(easy, code, t->state, t->error_buffer.data());
    const std::exception_ptr sink_exception = t->state.sink_exception;
    Result result = std::move(t->result);
    Done done = std::move(t->done);
    t->sink = nullptr;
    idle_.push_back(std::move(t));
    if (sink_exception) {
      std::rethrow_exception(sink_exception);
    }
    done(std::move(result));
  }
}

}  // namespace kvbench::http
