// libFuzzer target for the SSE framer: any byte stream, fed whole, byte by byte and in chunks
// derived from the input, gives the same events as a plain reference reading of the standard;
// each event carries the arrival of the chunk that completed it.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/http/sse.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kvbench::Nanos;
using kvbench::fuzz::check;
using kvbench::http::SseEvent;
using kvbench::http::SseFramer;

struct Expected {
  std::vector<std::pair<std::string, std::string>> events;  // name, data
  std::uint64_t comments = 0;
};

// The lines of `text`, each ended by "\r\n", "\n" or "\r"; a last line without an ending counts.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\r' && text[i] != '\n') {
      ++i;
      continue;
    }
    lines.push_back(text.substr(start, i - start));
    i += (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
    start = i;
  }
  if (start < text.size()) {
    lines.push_back(text.substr(start));
  }
  return lines;
}

// The events of a whole stream, read line by line as the header of sse.h describes.
Expected reference(std::string_view text) {
  Expected out;
  std::string name;
  std::vector<std::string> data;
  const auto dispatch = [&] {
    std::string joined;
    for (std::size_t i = 0; i < data.size(); ++i) {
      joined += (i == 0 ? "" : "\n") + data[i];
    }
    out.events.emplace_back(name.empty() ? "message" : name, joined);
  };
  for (const std::string_view line : lines_of(text)) {
    if (line.empty()) {
      if (!data.empty()) {
        dispatch();
      }
      name.clear();
      data.clear();
      continue;
    }
    if (line[0] == ':') {
      ++out.comments;
      continue;
    }
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') {
      value.remove_prefix(1);
    }
    if (field == "data" || field == "error") {
      name = field == "error" ? "error" : name;
      data.emplace_back(value);
    } else if (field == "event") {
      name = value;
    }
  }
  if (!data.empty()) {
    dispatch();
  }
  return out;
}

// Feeds `chunks` (chunk i arrives at i + 1) and finishes; checks each event's arrival.
std::vector<SseEvent> frame(SseFramer& framer, const std::vector<std::string_view>& chunks) {
  std::vector<SseEvent> events;
  Nanos last{0};
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Nanos arrival{static_cast<std::int64_t>(i + 1)};
    const std::size_t before = events.size();
    framer.feed(chunks[i], arrival, events);
    for (std::size_t e = before; e < events.size(); ++e) {
      check(events[e].arrival == arrival, "an event carries the arrival of its last chunk");
    }
    last = chunks[i].empty() ? last : arrival;
  }
  const std::size_t before = events.size();
  framer.finish(events);
  for (std::size_t e = before; e < events.size(); ++e) {
    check(events[e].arrival == last, "an event completed by finish() has the last arrival");
  }
  return events;
}

void check_same(const std::vector<SseEvent>& got, const Expected& want) {
  check(got.size() == want.events.size(), "as many events as the reference reading");
  for (std::size_t i = 0; i < got.size(); ++i) {
    check(got[i].event == want.events[i].first, "event names match the reference reading");
    check(got[i].data == want.events[i].second, "event data match the reference reading");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kvbench::fuzz::as_text(data, size);
  const Expected want = reference(text);

  SseFramer framer;  // one framer for every feeding: finish() must leave it ready for the next
  check_same(frame(framer, {text}), want);
  check(framer.comment_count() == want.comments, "comments counted once each");
  check_same(frame(framer, kvbench::fuzz::byte_chunks(text)), want);
  check_same(frame(framer, kvbench::fuzz::random_chunks(text, kvbench::fuzz::hash(text, 1))), want);
  check_same(frame(framer, kvbench::fuzz::random_chunks(text, kvbench::fuzz::hash(text, 2))), want);
  check(framer.comment_count() == 4 * want.comments, "comment count accumulates over streams");

  framer.reset();
  check(framer.comment_count() == 0, "reset() zeroes the comment count");
  return 0;
}
