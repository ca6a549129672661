#include "harness/http/ndjson.h"

namespace kvbench::http {

void NdjsonFramer::feed(std::string_view chunk, Nanos arrival, std::vector<NdjsonLine>& out) {
  if (chunk.empty()) {
    return;
  }
  last_arrival_ = arrival;
  std::size_t pos = 0;
  while (pos < chunk.size()) {
    const std::size_t end = chunk.find('\n', pos);
    if (end == std::string_view::npos) {
      line_.append(chunk.substr(pos));
      return;
    }
    const std::string_view piece = chunk.substr(pos, end - pos);
    if (line_.empty()) {
      emit(piece, arrival, out);
    } else {
      line_.append(piece);
      emit(line_, arrival, out);
      line_.clear();
    }
    pos = end + 1;
  }
}

void NdjsonFramer::finish(std::vector<NdjsonLine>& out) {
  if (!line_.empty()) {
    emit(line_, last_arrival_, out);
    line_.clear();
  }
}

void NdjsonFramer::reset() {
  line_.clear();
  last_arrival_ = Nanos{0};
  blank_lines_ = 0;
}

void NdjsonFramer::emit(std::string_view line, Nanos arrival, std::vector<NdjsonLine>& out) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    ++blank_lines_;
    return;
  }
  out.push_back(NdjsonLine{std::string(line), arrival});
}

}  // namespace kvbench::http
