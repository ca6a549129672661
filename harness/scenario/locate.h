#pragma once
// Where things are in a JSON text: the line of every value, by its path ("server.url",
// "factors.prompt_tokens[2]"), so that messages can point at the line to fix.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::scenario {

// Maps the path of every value in `text` (JSON, with // and /* */ comments allowed) to its
// 1-based line. The root is "". Stops quietly at the first syntax error, keeping what it found.
std::map<std::string, int> value_lines(std::string_view text);

// A key that appears twice in one object (JSON parsers keep the last silently).
struct DuplicateKey {
  std::string path;  // e.g. "factors.prompt_tokens"
  int first_line = 0;
  int second_line = 0;
};

// Every key given twice in one object of `text` (valid JSON with comments allowed), in order.
std::vector<DuplicateKey> duplicate_keys(std::string_view text);

}  // namespace kvbench::scenario
