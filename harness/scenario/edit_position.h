#pragma once
// The edit_position factor of the prefix-reuse experiment. Each level makes a trial a pair on one
// server: a cold read of a fresh prompt, then the same prompt sent again with one change.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::scenario {

struct EditPosition {
  enum class Kind {
    fraction,         // one word replaced at `fraction` of the prompt's tokens
    none,             // resent unchanged
    question,         // only a final question line changes
    timestamp_first,  // a timestamp line right after the unique first line changes
    timestamp_last,   // a timestamp line at the end changes
  };
  Kind kind = Kind::none;
  double fraction = 0;  // in [0, 1]; meaningful for Kind::fraction only

  // "0.25", "none", "question", "timestamp_first", "timestamp_last".
  std::string label() const;
  // The level as it is written in a scenario: a number or one of the special strings.
  nlohmann::json to_json() const;
  bool operator==(const EditPosition&) const = default;
};

// Parses one level: a number in [0, 1] or a special string. On failure returns nullopt and sets
// `why` to what was expected.
std::optional<EditPosition> parse_edit_position(const nlohmann::json& v, std::string& why);

// The inverse of label(); nullopt for anything else.
std::optional<EditPosition> edit_position_from_label(const std::string& label);

}  // namespace kvbench::scenario
