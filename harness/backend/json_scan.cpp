#include "harness/backend/json_scan.h"

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::backend {
namespace {

using nlohmann::json;
using Kind = ScannedMember::Kind;

// The SAX handler: `depth_` counts open containers, so the top-level object's members are the
// values at depth 1 and the elements of a wanted array are the values at depth 2.
class MemberScanner {
 public:
  MemberScanner(std::span<const std::string_view> keys, std::span<ScannedMember> out)
      : keys_(keys), out_(out) {}

  bool null() { return scalar(Kind::null); }
  bool boolean(bool b) {
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = Kind::boolean;
      target_->boolean = b;
    }
    return true;
  }
  bool number_integer(json::number_integer_t v) { return number(static_cast<double>(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return number(static_cast<double>(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return number(v); }
  bool string(json::string_t& s) {
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = Kind::string;
      target_->size = s.size();
    }
    return true;
  }
  bool binary(json::binary_t& /*bytes*/) { return false; }  // not in JSON text

  bool start_object(std::size_t /*elements*/) {
    if (depth_ == 0) {
      depth_ = 1;  // the top-level object
      return true;
    }
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = Kind::object;
    }
    ++depth_;
    return true;
  }
  bool key(json::string_t& k) {
    if (depth_ != 1) {
      return true;
    }
    member_ = nullptr;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == k) {
        if (out_[i].kind != Kind::absent) {
          return false;  // named twice
        }
        member_ = &out_[i];
        break;
      }
    }
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = Kind::array;
      array_ = target_;
    }
    ++depth_;
    return true;
  }
  bool end_array() {
    if (--depth_ == 1) {
      array_ = nullptr;
    }
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const json::exception& /*error*/) {
    return false;
  }

 private:
  // Places the value that starts now: sets target_ to the member it is the value of, or to
  // nullptr for a value that is skipped; counts an element of a wanted array. False for a
  // top-level value that is not an object.
  bool value() {
    target_ = nullptr;
    if (depth_ == 1) {
      target_ = member_;
      member_ = nullptr;
    } else if (depth_ == 2 && array_ != nullptr) {
      ++array_->size;
    }
    return depth_ != 0;
  }
  bool scalar(Kind kind) {
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = kind;
    }
    return true;
  }
  bool number(double v) {
    if (!value()) {
      return false;
    }
    if (target_ != nullptr) {
      target_->kind = Kind::number;
      target_->number = v;
    }
    return true;
  }

  std::span<const std::string_view> keys_;
  std::span<ScannedMember> out_;
  std::size_t depth_ = 0;
  ScannedMember* member_ = nullptr;  // the wanted member whose key came last, awaiting its value
  ScannedMember* target_ = nullptr;  // the wanted member the current value belongs to
  ScannedMember* array_ = nullptr;   // the wanted member whose array is open at depth 2
};

}  // namespace

bool scan_members(std::string_view text, std::span<const std::string_view> keys,
                  std::span<ScannedMember> out) {
  for (auto& m : out) {
    m = ScannedMember{};
  }
  MemberScanner scanner(keys, out);
  try {
    return json::sax_parse(text, &scanner);
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace kvbench::backend
