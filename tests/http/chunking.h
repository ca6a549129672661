#pragma once
// Test support for the framers: recorded streams, line-ending variants, and cutting a stream into
// chunks whose arrival time is their index (chunk i arrives at Nanos{i}).

#include <algorithm>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/clock.h"

namespace kvbench::http::test_support {

inline std::string read_recording(const std::string& name) {
  const std::string path = std::string(KVBENCH_TEST_DATA) + "/http/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot open " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

enum class LineEnding { lf, crlf, cr };

inline const char* to_string(LineEnding ending) {
  switch (ending) {
    case LineEnding::lf:
      return "lf";
    case LineEnding::crlf:
      return "crlf";
    case LineEnding::cr:
      return "cr";
  }
  return "?";
}

// `lf_text` with every '\n' replaced by the given line ending.
inline std::string with_line_ending(std::string_view lf_text, LineEnding ending) {
  std::string out;
  for (const char c : lf_text) {
    if (c != '\n' || ending == LineEnding::lf) {
      out.push_back(c);
    } else {
      out += ending == LineEnding::crlf ? "\r\n" : "\r";
    }
  }
  return out;
}

// Where byte `offset` of `lf_text` lands in with_line_ending(lf_text, ending); a '\n' maps to the
// first byte of its replacement.
inline std::size_t map_offset(std::string_view lf_text, std::size_t offset, LineEnding ending) {
  if (ending != LineEnding::crlf) {
    return offset;
  }
  return offset +
         static_cast<std::size_t>(std::count(
             lf_text.begin(), lf_text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// `text` cut before each offset in `cuts` (sorted, each in [0, size], repeats give empty chunks).
inline std::vector<std::string_view> cut(std::string_view text,
                                         const std::vector<std::size_t>& cuts) {
  std::vector<std::string_view> chunks;
  std::size_t begin = 0;
  for (const std::size_t at : cuts) {
    chunks.push_back(text.substr(begin, at - begin));
    begin = at;
  }
  chunks.push_back(text.substr(begin));
  return chunks;
}

// Index of the chunk holding byte `offset` when the text is cut at `cuts`.
inline long chunk_index(const std::vector<std::size_t>& cuts, std::size_t offset) {
  return static_cast<long>(std::upper_bound(cuts.begin(), cuts.end(), offset) - cuts.begin());
}

// Between 1 and 40 sorted cut offsets in [0, size], repeats allowed.
inline std::vector<std::size_t> random_cuts(std::size_t size, std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> count(1, 40);
  std::uniform_int_distribution<std::size_t> offset(0, size);
  std::vector<std::size_t> cuts(count(rng));
  for (auto& at : cuts) {
    at = offset(rng);
  }
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// Feeds `chunks` to a fresh framer, chunk i arriving at Nanos{i}, then calls finish().
template <typename Framer, typename Item>
std::vector<Item> frame(const std::vector<std::string_view>& chunks) {
  Framer framer;
  std::vector<Item> out;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    framer.feed(chunks[i], Nanos{static_cast<long>(i)}, out);
  }
  framer.finish(out);
  return out;
}

// One recorded stream in one line-ending form: the parameter of the recording tests.
struct RecordingCase {
  const char* file;
  LineEnding ending;
};

inline void PrintTo(const RecordingCase& c, std::ostream* os) {
  *os << c.file << "/" << to_string(c.ending);
}

}  // namespace kvbench::http::test_support
