#pragma once
// Small text helpers shared by the parsers of tool and /proc output and the tables.

#include <cstdint>
#include <string>
#include <string_view>

namespace kvbench {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines (a file in
// /sys or /proc ends with one).
std::string_view trim(std::string_view text);

// The 64-bit FNV-1a hash of `text`: run.json's scenario_hash, a history's digest of a run's calls.
std::uint64_t fnv1a64(std::string_view text);

// `n` with its digits grouped by commas: 36864 -> "36,864".
std::string grouped(std::uint64_t n);

// XML (and HTML) text with &, <, >, " and ' escaped.
std::string xml_escape(std::string_view s);

}  // namespace kvbench
