#pragma once
// A call's part in its workload (a conversation's turn, a replayed request): the workload's own
// type, which the call record writes under the workload's key. Read back from calls.jsonl it is
// that JSON, which the workload reads with its own type when asked (get<T>), so the record's core
// knows no workload. T names its key (T::kKey) and describes its fields (core/describe.h):
//   static const std::vector<describe::Field<T>>& fields();

#include <any>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "harness/core/describe.h"

namespace kvbench {

class RecordPart {
 public:
  RecordPart() = default;

  template <typename T>
  static RecordPart of(T value) {
    RecordPart p;
    p.key_ = T::kKey;
    p.typed_ = std::move(value);
    p.write_ = &write<T>;
    return p;
  }
  // A part as a record file holds it, under `key`.
  static RecordPart read(std::string key, nlohmann::json j) {
    RecordPart p;
    p.key_ = std::move(key);
    p.json_ = std::move(j);
    return p;
  }

  bool empty() const { return key_.empty(); }
  // The workload's key ("" when none).
  const std::string& key() const { return key_; }
  // Its JSON: as read, or as its type writes it once made or changed.
  nlohmann::json json() const { return json_.is_null() && write_ ? write_(typed_) : json_; }
  // The part as T; nullptr when it is another workload's, or none.
  template <typename T>
  const T* get() const {
    if (key_ != T::kKey) {
      return nullptr;
    }
    if (!typed_.has_value()) {
      T value;
      describe::from_json(T::fields(), json_, value);
      typed_ = std::move(value);
      write_ = &write<T>;
    }
    return std::any_cast<T>(&typed_);
  }
  // To change it (its JSON is then written from T).
  template <typename T>
  T* get() {
    const T* p = std::as_const(*this).get<T>();
    if (p != nullptr) {
      json_ = nullptr;
    }
    return const_cast<T*>(p);
  }

 private:
  template <typename T>
  static nlohmann::json write(const std::any& a) {
    return describe::to_json(T::fields(), std::any_cast<const T&>(a));
  }

  std::string key_;
  nlohmann::json json_;
  // The typed value, made on the first get() of a part read from a file.
  mutable std::any typed_;
  mutable nlohmann::json (*write_)(const std::any&) = nullptr;
};

}  // namespace kvbench
