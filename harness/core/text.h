#pragma once
// Small text helpers shared by the parsers of tool and /proc output.

#include <string_view>

namespace kvbench {

// `text` without leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view text);

}  // namespace kvbench
