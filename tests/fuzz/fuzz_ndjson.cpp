// libFuzzer target for the NDJSON framer: any byte stream, fed whole, byte by byte and in chunks
// derived from the input, gives the same lines as a plain reference reading; each line carries
// the arrival of the chunk holding its '\n'. Each line, and the whole input, is also decoded as an
// Ollama /api/generate line: decode_generate_line must give what decode_generate_line_dom gives.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/ollama.h"
#include "harness/http/ndjson.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kvbench::Nanos;
using kvbench::backend::GenerateEvent;
using kvbench::fuzz::check;
using kvbench::http::NdjsonFramer;
using kvbench::http::NdjsonLine;

struct Expected {
  std::vector<std::string> lines;
  std::uint64_t blank = 0;
};

// Lines end in '\n' (one '\r' before it is dropped); a last line without one counts as well.
// Lines of only spaces, tabs and '\r' are blank.
Expected reference(std::string_view text) {
  Expected out;
  const auto take = [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      ++out.blank;
    } else {
      out.lines.emplace_back(line);
    }
  };
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string_view::npos;
       nl = text.find('\n', start)) {
    take(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < text.size()) {
    take(text.substr(start));
  }
  return out;
}

// Feeds `chunks` (chunk i arrives at i + 1) and finishes; checks each line's arrival.
std::vector<NdjsonLine> frame(NdjsonFramer& framer, const std::vector<std::string_view>& chunks) {
  std::vector<NdjsonLine> lines;
  Nanos last{0};
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Nanos arrival{static_cast<std::int64_t>(i + 1)};
    const std::size_t before = lines.size();
    framer.feed(chunks[i], arrival, lines);
    for (std::size_t l = before; l < lines.size(); ++l) {
      check(lines[l].arrival == arrival, "a line carries the arrival of the chunk with its '\\n'");
    }
    last = chunks[i].empty() ? last : arrival;
  }
  const std::size_t before = lines.size();
  framer.finish(lines);
  check(lines.size() <= before + 1, "finish() completes at most one line");
  for (std::size_t l = before; l < lines.size(); ++l) {
    check(lines[l].arrival == last, "the last unterminated line has the last arrival");
  }
  return lines;
}

void check_same(const std::vector<NdjsonLine>& got, const Expected& want) {
  check(got.size() == want.lines.size(), "as many lines as the reference reading");
  for (std::size_t i = 0; i < got.size(); ++i) {
    check(got[i].text == want.lines[i], "lines match the reference reading");
  }
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void check_decoded(std::string_view line) {
  const GenerateEvent ev = kvbench::backend::decode_generate_line(line);
  const GenerateEvent dom = kvbench::backend::decode_generate_line_dom(line);
  check(ev.type == dom.type && ev.has_token == dom.has_token && ev.error == dom.error &&
            dump(ev.message) == dump(dom.message),
        "decode_generate_line gives what a whole document gives");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kvbench::fuzz::as_text(data, size);
  const Expected want = reference(text);

  for (const auto& line : want.lines) {
    check_decoded(line);
  }
  check_decoded(text);

  NdjsonFramer framer;  // one framer for every feeding: finish() must leave it ready for the next
  check_same(frame(framer, {text}), want);
  check(framer.blank_line_count() == want.blank, "blank lines counted once each");
  check_same(frame(framer, kvbench::fuzz::byte_chunks(text)), want);
  check_same(frame(framer, kvbench::fuzz::random_chunks(text, kvbench::fuzz::hash(text, 1))), want);
  check(framer.blank_line_count() == 3 * want.blank, "blank line count accumulates");

  framer.reset();
  check(framer.blank_line_count() == 0, "reset() zeroes the blank line count");
  return 0;
}
