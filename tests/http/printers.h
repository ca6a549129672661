#pragma once
// Readable GoogleTest output for framed events.

#include <ostream>

#include "harness/http/ndjson.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"

namespace kvbench::http {

inline void PrintTo(const SseEvent& e, std::ostream* os) {
  *os << "{event=" << e.event << " data=" << e.data << " arrival=" << e.arrival.count() << "}";
}

inline void PrintTo(const NdjsonLine& line, std::ostream* os) {
  *os << "{text=" << line.text << " arrival=" << line.arrival.count() << "}";
}

inline void PrintTo(Outcome outcome, std::ostream* os) {
  *os << to_string(outcome);
}

}  // namespace kvbench::http
