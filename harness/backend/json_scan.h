#pragma once
// Reads a few members of a JSON object's top level without building a document: the decoders'
// fast path for the token events of a stream, which need two or three members each.

#include <cstddef>
#include <span>
#include <string_view>

namespace kvbench::backend {

// One top-level member as scan_members saw it.
struct ScannedMember {
  enum class Kind { absent, null, boolean, number, string, array, object };
  Kind kind = Kind::absent;
  bool boolean = false;  // a boolean's value
  double number = 0;     // a number as nlohmann::json's get<double>() gives it
  std::size_t size = 0;  // a string's bytes (decoded) or an array's elements (its top level)
};

// Parses `text` with nlohmann::json's SAX interface and fills out[i] for the top-level member
// named keys[i] (keys.size() == out.size()); every other member, and everything nested, is
// skipped without being stored. Returns false, leaving `out` unspecified, when `text` is not one
// valid JSON object or names one of `keys` twice (a document keeps the last; the caller then
// parses one). Never throws.
bool scan_members(std::string_view text, std::span<const std::string_view> keys,
                  std::span<ScannedMember> out);

}  // namespace kvbench::backend
