#pragma once
// A workload's own part of a planned call (a conversation's turn, a trace's request), held by
// value as the workload's own type, which the plan does not know. The plan copies it, compares it,
// writes it into the call's JSON and its listing, and hands it to the workload, which reads it as
// its type (as<T>()). A type T is a part where these are found for it (by argument-dependent
// lookup, where the workload constructs the part): write_part(const T&, json& call) adds its
// fields to the call's JSON; describe_part(const T&, int prompt_tokens) is the plan listing's text
// of the call after its seq, kind and round; record_part(const T&, CallRecord&) fills what the
// call's record carries of it (also on a call that is never sent); and T == T.

#include <any>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace kvbench {
struct CallRecord;
}  // namespace kvbench

namespace kvbench::plan {

class CallPart {
 public:
  CallPart() = default;
  template <typename T>
  explicit CallPart(T part) : value_(std::move(part)), ops_(&kOps<T>) {}

  explicit operator bool() const { return ops_ != nullptr; }
  // The part as T, or nullptr when it is none or another workload's.
  template <typename T>
  const T* as() const {
    return std::any_cast<T>(&value_);
  }
  void write(nlohmann::json& call) const {
    if (ops_ != nullptr) {
      ops_->write(value_, call);
    }
  }
  std::string describe(int prompt_tokens) const {
    return ops_ != nullptr ? ops_->describe(value_, prompt_tokens) : std::string();
  }
  void start_record(CallRecord& r) const {
    if (ops_ != nullptr) {
      ops_->record(value_, r);
    }
  }
  bool operator==(const CallPart& o) const {
    return ops_ == o.ops_ && (ops_ == nullptr || ops_->equal(value_, o.value_));
  }

 private:
  struct Ops {
    void (*write)(const std::any&, nlohmann::json&);
    std::string (*describe)(const std::any&, int);
    void (*record)(const std::any&, CallRecord&);
    bool (*equal)(const std::any&, const std::any&);
  };
  template <typename T>
  static constexpr Ops kOps = {
      [](const std::any& v, nlohmann::json& call) { write_part(std::any_cast<const T&>(v), call); },
      [](const std::any& v, int prompt_tokens) {
        return describe_part(std::any_cast<const T&>(v), prompt_tokens);
      },
      [](const std::any& v, CallRecord& r) { record_part(std::any_cast<const T&>(v), r); },
      [](const std::any& a, const std::any& b) {
        return std::any_cast<const T&>(a) == std::any_cast<const T&>(b);
      }};

  std::any value_;
  const Ops* ops_ = nullptr;
};

}  // namespace kvbench::plan
