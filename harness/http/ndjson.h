#pragma once
// Newline-delimited JSON framing, as Ollama streams /api/generate and /api/chat. Pure: bytes in,
// lines out; the lines are not parsed here.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/clock.h"

namespace kvbench::http {

struct NdjsonLine {
  std::string text;  // one line, without its "\n" or "\r\n"
  Nanos arrival{0};  // arrival time of the chunk holding the line's '\n'
  bool operator==(const NdjsonLine&) const = default;
};

// Cuts a byte stream, fed in chunks of any size, into lines ending in "\n" ("\r\n" tolerated).
// Blank lines (only spaces, tabs or '\r') are skipped and counted.
class NdjsonFramer {
 public:
  // Frames `chunk`, which arrived at `arrival`, and appends every line it completes to `out`.
  void feed(std::string_view chunk, Nanos arrival, std::vector<NdjsonLine>& out);

  // End of the stream: a non-blank last line without a '\n' is appended to `out` with the arrival
  // of the last chunk fed. The framer is then ready for a new stream.
  void finish(std::vector<NdjsonLine>& out);

  // Forgets any partial line and zeroes blank_line_count().
  void reset();

  // Blank lines skipped since construction or reset().
  std::uint64_t blank_line_count() const { return blank_lines_; }

 private:
  void emit(std::string_view line, Nanos arrival, std::vector<NdjsonLine>& out);

  std::string line_;  // the start of a line whose '\n' has not arrived yet
  Nanos last_arrival_{0};
  std::uint64_t blank_lines_ = 0;
};

}  // namespace kvbench::http
