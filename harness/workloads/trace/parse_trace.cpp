// Reading request traces: the format names, the checked field readers every format shares, and
// the two JSON Lines formats (Mooncake, Qwen-Bailian), one request per line.

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "harness/core/compressed.h"
#include "harness/core/error.h"
#include "harness/workloads/trace/parse_fields.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {

using nlohmann::json;

namespace {

constexpr int kMooncakeBlockTokens = 512;
constexpr int kBailianBlockTokens = 16;
constexpr std::int64_t kMaxTokens = std::numeric_limits<int>::max();

Request mooncake_request(const json& row, const detail::Place& at) {
  Request r;
  r.due_ms = detail::time_field(row, "timestamp", at);
  r.input_tokens = static_cast<int>(detail::integer_field(row, "input_length", 1, kMaxTokens, at));
  r.output_tokens =
      static_cast<int>(detail::integer_field(row, "output_length", 0, kMaxTokens, at));
  r.blocks = detail::id_list(row, "hash_ids", at);
  return r;
}

Request bailian_request(const json& row, const detail::Place& at) {
  constexpr std::int64_t kMaxId = std::numeric_limits<std::int64_t>::max();
  Request r;
  r.chat_id = detail::integer_field(row, "chat_id", 0, kMaxId, at);
  r.parent_chat_id = detail::integer_field(row, "parent_chat_id", -1, kMaxId, at);
  r.due_ms = detail::time_field(row, "timestamp", at) * 1000.0;
  r.input_tokens = static_cast<int>(detail::integer_field(row, "input_length", 1, kMaxTokens, at));
  r.output_tokens =
      static_cast<int>(detail::integer_field(row, "output_length", 0, kMaxTokens, at));
  r.type = detail::string_field(row, "type", at);
  r.turn = static_cast<int>(detail::integer_field(row, "turn", 0, kMaxTokens, at));
  r.blocks = detail::id_list(row, "hash_ids", at);
  return r;
}

// One request per line; blank lines are skipped. Timestamps must not decrease.
Trace read_lines(std::istream& in, Format format, const std::string& file,
                 std::optional<int> block_tokens) {
  Trace t;
  t.format = format;
  t.block_tokens = block_tokens.value_or(format == Format::mooncake ? kMooncakeBlockTokens
                                                                    : kBailianBlockTokens);
  std::string text;
  int line = 0;
  int previous_line = 0;
  std::string previous_stamp;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const detail::Place at{file, fmt::format("line {}", line)};
    json row;
    try {
      row = json::parse(text);
    } catch (const json::parse_error& e) {
      detail::fail(
          at, "",
          fmt::format("expected one JSON object, got text that is not JSON ({})", e.what()));
    }
    if (!row.is_object()) {
      detail::fail(at, "",
                   fmt::format("expected one JSON object, got {}", detail::describe_value(row)));
    }
    Request r = format == Format::mooncake ? mooncake_request(row, at) : bailian_request(row, at);
    r.origin = at.where;
    detail::check_block_count(t, r, "input_length", at);
    if (!t.requests.empty() && r.due_ms < t.requests.back().due_ms) {
      detail::fail(at, "timestamp",
                   fmt::format("expected timestamps in non-decreasing order, got {} after {} "
                               "on line {}",
                               row["timestamp"].dump(), previous_stamp, previous_line));
    }
    previous_line = line;
    previous_stamp = row["timestamp"].dump();
    t.requests.push_back(std::move(r));
  }
  return t;
}

}  // namespace

std::optional<Format> format_named(std::string_view name) {
  for (Format f : {Format::mooncake, Format::bailian, Format::weka}) {
    if (format_name(f) == name) {
      return f;
    }
  }
  return std::nullopt;
}

std::string_view format_name(Format f) {
  switch (f) {
    case Format::mooncake:
      return "mooncake";
    case Format::bailian:
      return "bailian";
    case Format::weka:
      return "weka";
  }
  return "mooncake";
}

std::size_t expected_blocks(const Trace& trace, long long input_tokens) {
  const auto block = static_cast<long long>(trace.block_tokens);
  const long long n =
      trace.partial_block_has_id ? (input_tokens + block - 1) / block : input_tokens / block;
  return static_cast<std::size_t>(std::max(0LL, n));
}

Trace read_trace(std::istream& in, Format format, const std::string& file,
                 std::optional<int> block_tokens) {
  if (block_tokens && format == Format::weka) {
    throw InputError(fmt::format(
        "trace '{}' (weka): a WEKA document states its block_size; no other block size is "
        "taken for it",
        file));
  }
  if (block_tokens && *block_tokens < 1) {
    throw InputError(fmt::format("trace '{}': block size: expected 1 token or more, got {}", file,
                                 *block_tokens));
  }
  Trace t = format == Format::weka ? detail::read_weka(in, file)
                                   : read_lines(in, format, file, block_tokens);
  if (t.requests.empty()) {
    throw InputError(fmt::format("trace '{}' ({}): no requests", file, format_name(format)));
  }
  return t;
}

Trace read_trace_file(const std::string& path, Format format, std::optional<int> block_tokens) {
  CompressedInput in(path, "trace");
  return read_trace(in.stream(), format, path, block_tokens);
}

namespace detail {

void fail(const Place& at, std::string_view field, std::string_view problem) {
  if (field.empty()) {
    throw InputError(fmt::format("trace '{}' {}: {}", at.file, at.where, problem));
  }
  throw InputError(fmt::format("trace '{}' {}: field '{}': {}", at.file, at.where, field, problem));
}

std::string describe_value(const json& v) {
  constexpr std::size_t kShown = 40;
  std::string text = v.dump();
  if (text.size() > kShown) {
    text = text.substr(0, kShown) + "...";
  }
  return text;
}

std::int64_t integer_field(const json& row, const char* field, std::int64_t min, std::int64_t max,
                           const Place& at) {
  if (!row.contains(field)) {
    fail(at, field, fmt::format("missing: expected an integer from {} to {}", min, max));
  }
  const json& v = row[field];
  constexpr auto kMaxSigned = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const bool fits =
      v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > kMaxSigned);
  if (!fits || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
    fail(at, field,
         fmt::format("expected an integer from {} to {}, got {}", min, max, describe_value(v)));
  }
  return v.get<std::int64_t>();
}

double time_field(const json& row, const char* field, const Place& at) {
  if (!row.contains(field)) {
    fail(at, field, "missing: expected a time, a number of at least 0");
  }
  const json& v = row[field];
  if (!v.is_number() || v.get<double>() < 0) {
    fail(at, field,
         fmt::format("expected a time, a number of at least 0, got {}", describe_value(v)));
  }
  return v.get<double>();
}

std::string string_field(const json& row, const char* field, const Place& at) {
  if (!row.contains(field) || !row[field].is_string()) {
    fail(at, field,
         fmt::format("expected a string, got {}",
                     row.contains(field) ? describe_value(row[field]) : std::string("nothing")));
  }
  return row[field].get<std::string>();
}

std::vector<std::uint64_t> id_list(const json& row, const char* field, const Place& at) {
  if (!row.contains(field) || !row[field].is_array()) {
    fail(at, field,
         fmt::format("expected a list of block ids (integers of at least 0), got {}",
                     row.contains(field) ? describe_value(row[field]) : std::string("nothing")));
  }
  const json& list = row[field];
  std::vector<std::uint64_t> ids;
  ids.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
      fail(at, field,
           fmt::format("item {}: expected a block id, an integer of at least 0, got {}", i,
                       describe_value(v)));
    }
    ids.push_back(v.get<std::uint64_t>());
  }
  return ids;
}

void check_block_count(const Trace& t, const Request& r, const char* input, const Place& at) {
  const std::size_t want = expected_blocks(t, r.input_tokens);
  if (r.blocks.size() != want) {
    fail(at, "hash_ids",
         fmt::format("expected {}({} {} / {}) = {} block ids, got {}",
                     t.partial_block_has_id ? "ceil" : "floor", input, r.input_tokens,
                     t.block_tokens, want, r.blocks.size()));
  }
}

}  // namespace detail

}  // namespace kvbench::workloads::trace
