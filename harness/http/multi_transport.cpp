#include "harness/http/multi_transport.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
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

template <typename Value>
void set_multi_option(CURLM* multi, CURLMoption option, Value value) {
  check(curl_multi_setopt(multi, option, value), "setopt");
}

}  // namespace

// The CURLM handle driven through libcurl's socket interface: libcurl names the sockets it waits
// on and the timeout it needs; an epoll set watches exactly those, so one wake-up costs the
// sockets that are ready, not every call in flight.
class MultiTransport::Multi {
 public:
  explicit Multi(const Clock& clock) : clock_(clock), handle_(curl_multi_init()) {
    if (!handle_) {
      throw Error("libcurl could not create a multi handle");
    }
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) {
      throw Error("epoll_create1 failed");
    }
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event wake_ev{};
    wake_ev.events = EPOLLIN;
    wake_ev.data.fd = wake_;
    if (wake_ < 0 || ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &wake_ev) != 0) {
      ::close(epoll_);
      if (wake_ >= 0) {
        ::close(wake_);
      }
      throw Error("the wake-up eventfd could not be set up");
    }
    set_multi_option(get(), CURLMOPT_SOCKETFUNCTION, &Multi::on_socket);
    set_multi_option(get(), CURLMOPT_SOCKETDATA, static_cast<void*>(this));
    set_multi_option(get(), CURLMOPT_TIMERFUNCTION, &Multi::on_timer);
    set_multi_option(get(), CURLMOPT_TIMERDATA, static_cast<void*>(this));
  }
  ~Multi() {
    handle_.reset();  // libcurl reports its sockets removed while they are still ours
    ::close(epoll_);
    ::close(wake_);
  }
  Multi(const Multi&) = delete;
  Multi& operator=(const Multi&) = delete;

  CURLM* get() const { return handle_.get(); }

  // Ends a wait_and_act on another thread.
  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n =
        ::write(wake_, &one, sizeof one);  // full counter: awake already
  }

  // Runs libcurl for every ready socket, waiting at most `max_wait` (less when libcurl's own
  // timer is due sooner), then for the timer when it is due.
  void wait_and_act(std::chrono::milliseconds max_wait) {
    int wait_ms = static_cast<int>(max_wait.count());
    if (timer_armed_) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::ceil<std::chrono::milliseconds>(timer_due_ - clock_.now()));
      wait_ms = std::clamp(static_cast<int>(until.count()), 0, wait_ms);
    }
    const int ready =
        ::epoll_wait(epoll_, events_.data(), static_cast<int>(events_.size()), wait_ms);
    if (ready < 0 && errno != EINTR) {
      throw Error("epoll_wait failed");
    }
    const Nanos woke = clock_.now();
    for (int i = 0; i < ready; ++i) {
      const epoll_event& ev = events_[static_cast<std::size_t>(i)];
      if (ev.data.fd == wake_) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto n = ::read(wake_, &count, sizeof count);
        continue;
      }
      int mask = 0;
      mask |= (ev.events & EPOLLIN) != 0 ? CURL_CSELECT_IN : 0;
      mask |= (ev.events & EPOLLOUT) != 0 ? CURL_CSELECT_OUT : 0;
      mask |= (ev.events & (EPOLLERR | EPOLLHUP)) != 0 ? CURL_CSELECT_ERR : 0;
      ready_ = {static_cast<curl_socket_t>(ev.data.fd), woke};
      act(ready_.socket, mask);
      ready_ = {};
    }
    act_on_timer();
  }

  // What the write callbacks read while a ready socket is handed to libcurl.
  const curl_detail::ReadyStamp& ready() const { return ready_; }

  // Runs libcurl's timeout action when its timer is due (a new call is due at once).
  void act_on_timer() {
    if (timer_armed_ && clock_.now() >= timer_due_) {
      timer_armed_ = false;
      act(CURL_SOCKET_TIMEOUT, 0);
    }
  }

 private:
  void act(curl_socket_t socket, int mask) {
    int running = 0;
    check(curl_multi_socket_action(get(), socket, mask, &running), "socket action");
  }

  static int on_socket(CURL* /*easy*/, curl_socket_t socket, int what, void* self_ptr,
                       void* socket_ptr) {
    auto& self = *static_cast<Multi*>(self_ptr);
    if (what == CURL_POLL_REMOVE) {
      ::epoll_ctl(self.epoll_, EPOLL_CTL_DEL, socket, nullptr);  // it may be closed already
      return 0;
    }
    epoll_event ev{};
    ev.events = (what == CURL_POLL_IN || what == CURL_POLL_INOUT ? EPOLLIN : 0U) |
                (what == CURL_POLL_OUT || what == CURL_POLL_INOUT ? EPOLLOUT : 0U);
    ev.data.fd = socket;
    const bool known = socket_ptr != nullptr;
    if (::epoll_ctl(self.epoll_, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, &ev) != 0) {
      // libcurl may hand a socket number back after closing it: add or modify, whichever holds.
      if (::epoll_ctl(self.epoll_, known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, socket, &ev) != 0) {
        return -1;
      }
    }
    if (!known) {
      curl_multi_assign(self.get(), socket, &self);
    }
    return 0;
  }

  static int on_timer(CURLM* /*multi*/, long timeout_ms, void* self_ptr) {
    auto& self = *static_cast<Multi*>(self_ptr);
    self.timer_armed_ = timeout_ms >= 0;
    if (self.timer_armed_) {
      self.timer_due_ = self.clock_.now() + std::chrono::milliseconds(timeout_ms);
    }
    return 0;
  }

  const Clock& clock_;
  MultiPtr handle_;
  int epoll_ = -1;
  int wake_ = -1;  // eventfd: another thread's wake()
  bool timer_armed_ = false;
  Nanos timer_due_{0};
  curl_detail::ReadyStamp ready_;
  std::array<epoll_event, 1024> events_{};  // all of a burst from hundreds of streams at once
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
  multi_ = std::make_unique<Multi>(clock_);
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
  t->state.ready = &multi_->ready();
  t->state.easy = t->easy.get();
  t->state.sink = &t->sink;
  t->state.result = &t->result;
  t->headers = curl_detail::build_headers(t->request);
  curl_detail::set_options(t->easy.get(), t->error_buffer.data(), t->request, t->headers.get(),
                           t->state);
  curl_detail::set_option(t->easy.get(), CURLOPT_PRIVATE, static_cast<void*>(t.get()));
  t->error_buffer[0] = '\0';
  t->result.started = clock_.now();
  check(curl_multi_add_handle(multi_->get(), t->easy.get()), "add");
  busy_.push_back(std::move(t));
  ++active_;
  // Send it now rather than after whatever else this wake-up has to do (other calls ending and
  // starting), which would otherwise count in this call's TTFT; then read what other calls
  // received meanwhile, so a burst of starts does not delay their stamps. Calls that end here
  // are reported by the next poll().
  multi_->act_on_timer();
  multi_->wait_and_act(std::chrono::milliseconds(0));
  started_in_callback_ = true;
}

void MultiTransport::wake() {
  multi_->wake();
}

std::size_t MultiTransport::poll(std::chrono::milliseconds max_wait) {
  act_and_finish();
  if (active_ == 0) {
    return 0;
  }
  multi_->wait_and_act(max_wait);
  finish_ended();
  act_and_finish();
  if (active_ > 0 && interrupted()) {
    interrupt_all();
  }
  return active_;
}

// Every call still in flight ends now, as aborted: its handle leaves the multi handle (closing its
// connection mid-response) and its Done callback hears "interrupted".
void MultiTransport::interrupt_all() {
  std::vector<std::unique_ptr<Transfer>> ending = std::move(busy_);
  busy_.clear();
  const Nanos finished = clock_.now();
  std::vector<std::pair<Result, Done>> ended;
  for (auto& t : ending) {
    t->state.interrupted = true;  // as if its progress callback had stopped it
    ended.push_back(retire(std::move(t), CURLE_ABORTED_BY_CALLBACK, finished));
  }
  for (auto& [result, done] : ended) {
    done(std::move(result));
  }
}

// The call's handle leaves the multi handle and is kept for reuse; its Result is filled as any
// finished transfer's is. Returns the Result and the Done callback to hand it to.
std::pair<Result, MultiTransport::Done> MultiTransport::retire(std::unique_ptr<Transfer> t,
                                                               int code, Nanos finished) {
  curl_multi_remove_handle(multi_->get(), t->easy.get());
  --active_;
  t->result.finished = finished;
  curl_detail::finish_result(t->easy.get(), static_cast<CURLcode>(code), t->state,
                             t->error_buffer.data());
  std::pair<Result, Done> out{std::move(t->result), std::move(t->done)};
  t->sink = nullptr;
  idle_.push_back(std::move(t));
  return out;
}

void MultiTransport::act_and_finish() {
  do {
    started_in_callback_ = false;
    multi_->act_on_timer();
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
    Transfer* owner = curl_detail::get_info<Transfer*>(easy, CURLINFO_PRIVATE);
    auto it =
        std::find_if(busy_.begin(), busy_.end(), [&](const auto& t) { return t.get() == owner; });
    if (it == busy_.end()) {
      continue;
    }
    std::unique_ptr<Transfer> t = std::move(*it);
    *it = std::move(busy_.back());
    busy_.pop_back();
    const std::exception_ptr sink_exception = t->state.sink_exception;
    auto [result, done] = retire(std::move(t), code, finished);
    if (sink_exception) {
      std::rethrow_exception(sink_exception);
    }
    done(std::move(result));
  }
}

}  // namespace kvbench::http
