#pragma once
// Server-sent events framing (the WHATWG event-stream format), as llama-server and
// OpenAI-compatible servers stream it. Pure: bytes in, events out, no I/O and no JSON.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/clock.h"

namespace kvbench::http {

struct SseEvent {
  std::string event;  // the `event:` field, or "message" when the stream named none
  std::string data;   // the event's data lines joined with '\n' ("[DONE]" is passed through)
  Nanos arrival{0};   // arrival time of the chunk that completed the event
  bool operator==(const SseEvent&) const = default;
};

// An event as the framer hands it to a callback: views valid only during the call.
struct SseEventView {
  std::string_view event;  // "message" when the stream named none
  std::string_view data;
  Nanos arrival{0};
};

// Cuts a byte stream, fed in chunks of any size, into events. Lines may end in "\n", "\r\n" or
// "\r", and a chunk may end anywhere, even between the '\r' and '\n' of one line ending. Fields:
// `data:` (one leading space dropped) appends a data line; `event:` names the event; `error:`
// names the event "error" and appends its value as data (older llama-server builds sent
// "error: {...}"); `id:`, `retry:` and unknown fields are ignored; lines starting with ':' are
// comments (keep-alive pings), counted and otherwise ignored. A blank line completes an event;
// one with no data line is dropped, as the standard says.
class SseFramer {
 public:
  // Frames `chunk`, which arrived at `arrival`, and appends every event it completes to `out`.
  void feed(std::string_view chunk, Nanos arrival, std::vector<SseEvent>& out);

  // The same, handing each completed event to `on_event` without copying it (the framer's
  // buffers keep their capacity, so a stream allocates nothing once they have grown).
  using EventFn = std::function<void(const SseEventView&)>;
  void feed(std::string_view chunk, Nanos arrival, const EventFn& on_event);

  // End of the stream: a last line without a line ending is processed, and an event not yet
  // followed by a blank line is appended to `out` with the arrival of the last chunk fed. The
  // framer is then ready for a new stream (the comment count is kept).
  void finish(std::vector<SseEvent>& out);
  void finish(const EventFn& on_event);

  // Forgets any partial stream and zeroes comment_count().
  void reset();

  // Comment lines seen since construction or reset().
  std::uint64_t comment_count() const { return comments_; }

 private:
  void process_line(std::string_view line, Nanos arrival, const EventFn& on_event);
  void dispatch(Nanos arrival, const EventFn& on_event);
  static EventFn appender(std::vector<SseEvent>& out);

  std::string line_;  // the start of a line whose ending has not arrived yet
  std::string event_;
  std::string data_;      // every data line so far, each followed by '\n'
  bool skip_lf_ = false;  // the last chunk ended in '\r': a '\n' opening the next one belongs to it
  Nanos last_arrival_{0};
  std::uint64_t comments_ = 0;
};

}  // namespace kvbench::http
