#include "harness/http/sse.h"

#include <utility>

namespace kvbench::http {
namespace {

// The first '\r' or '\n' at or after `pos`, or npos. Two memchr-style scans beat one
// find_first_of, which tests each byte against the set.
std::size_t find_line_end(std::string_view text, std::size_t pos) {
  const std::size_t lf = text.find('\n', pos);
  const std::string_view before_lf = text.substr(pos, lf == std::string_view::npos ? lf : lf - pos);
  const std::size_t cr = before_lf.find('\r');
  return cr == std::string_view::npos ? lf : pos + cr;
}

}  // namespace

SseFramer::EventFn SseFramer::appender(std::vector<SseEvent>& out) {
  return [&out](const SseEventView& e) {
    out.push_back(SseEvent{std::string(e.event), std::string(e.data), e.arrival});
  };
}

void SseFramer::feed(std::string_view chunk, Nanos arrival, std::vector<SseEvent>& out) {
  feed(chunk, arrival, appender(out));
}

void SseFramer::finish(std::vector<SseEvent>& out) {
  finish(appender(out));
}

void SseFramer::feed(std::string_view chunk, Nanos arrival, const EventFn& on_event) {
  if (chunk.empty()) {
    return;
  }
  last_arrival_ = arrival;
  std::size_t pos = 0;
  if (skip_lf_) {
    skip_lf_ = false;
    pos = chunk.front() == '\n' ? 1 : 0;
  }
  while (pos < chunk.size()) {
    const std::size_t end = find_line_end(chunk, pos);
    if (end == std::string_view::npos) {
      line_.append(chunk.substr(pos));
      return;
    }
    const std::string_view piece = chunk.substr(pos, end - pos);
    if (line_.empty()) {
      process_line(piece, arrival, on_event);
    } else {
      line_.append(piece);
      process_line(line_, arrival, on_event);
      line_.clear();
    }
    pos = end + 1;
    if (chunk[end] == '\r') {
      if (pos == chunk.size()) {
        skip_lf_ = true;
      } else if (chunk[pos] == '\n') {
        ++pos;
      }
    }
  }
}

void SseFramer::finish(const EventFn& on_event) {
  if (!line_.empty()) {
    process_line(line_, last_arrival_, on_event);
    line_.clear();
  }
  if (!data_.empty()) {
    dispatch(last_arrival_, on_event);
  }
  event_.clear();
  skip_lf_ = false;
}

void SseFramer::reset() {
  line_.clear();
  event_.clear();
  data_.clear();
  skip_lf_ = false;
  last_arrival_ = Nanos{0};
  comments_ = 0;
}

void SseFramer::process_line(std::string_view line, Nanos arrival, const EventFn& on_event) {
  if (line.empty()) {
    if (data_.empty()) {
      event_.clear();  // an event without data is dropped
    } else {
      dispatch(arrival, on_event);
    }
    return;
  }
  if (line.front() == ':') {
    ++comments_;
    return;
  }
  const std::size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  if (field == "data" || field == "error") {
    if (field == "error") {
      event_ = "error";
    }
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    event_.assign(value);
  }
}

void SseFramer::dispatch(Nanos arrival, const EventFn& on_event) {
  data_.pop_back();  // the '\n' after the last data line
  // The event is spent even if the callback throws: the framer stays ready for the next one.
  struct Spend {
    SseFramer& framer;
    ~Spend() {
      framer.event_.clear();
      framer.data_.clear();
    }
  } spend{*this};
  on_event(SseEventView{event_.empty() ? std::string_view("message") : std::string_view(event_),
                        data_, arrival});
}

}  // namespace kvbench::http
