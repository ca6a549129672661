#pragma once
// Field readers shared by the trace formats' readers: each takes one field of one request,
// checks it and, where it is wrong, throws InputError naming the file, the place in the file,
// the field and what was expected.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace::detail {

// A place in a trace file: the file's name and "line 12" or "requests[3]".
struct Place {
  const std::string& file;
  std::string where;
};

[[noreturn]] void fail(const Place& at, std::string_view field, std::string_view problem);

// `field` of `row` as an integer from `min` to `max`.
std::int64_t integer_field(const nlohmann::json& row, const char* field, std::int64_t min,
                           std::int64_t max, const Place& at);
// `field` of `row` as a number of at least 0 (a time).
double time_field(const nlohmann::json& row, const char* field, const Place& at);
// `field` of `row` as a string.
std::string string_field(const nlohmann::json& row, const char* field, const Place& at);
// `field` of `row` as a list of non-negative integer block ids.
std::vector<std::uint64_t> id_list(const nlohmann::json& row, const char* field, const Place& at);

// A value as error messages show it, cut to a readable length.
std::string describe_value(const nlohmann::json& v);

// Checks that `r` has as many block ids as its input length needs in `t`'s format (`input` names
// the input length's field).
void check_block_count(const Trace& t, const Request& r, const char* input, const Place& at);

// Reads a WEKA document (parse_weka.cpp).
Trace read_weka(std::istream& in, const std::string& file);

}  // namespace kvbench::workloads::trace::detail
