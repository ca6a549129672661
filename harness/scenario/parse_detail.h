#pragma once
// Internal to the scenario parser: the checker that collects every problem with its file, line
// and path, and the parts of the parser that the variant and gate sections share with it.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/scenario/locate.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/suggest.h"

namespace kvbench::scenario::detail {

using nlohmann::json;

// Collects every problem with its path, then throws them together.
class Checker {
 public:
  Checker(std::string source, std::string_view text)
      : source_(std::move(source)), lines_(value_lines(text)) {}
  // The file the scenario came from, as messages name it.
  const std::string& source() const { return source_; }
  // "<file>:<line>: <path>: <what>"; the line is that of the value at `path`, or of its nearest
  // enclosing value when the path is missing.
  void problem(const std::string& path, const std::string& what) {
    problems_.push_back(fmt::format("{}{}: {}: {}", source_, line_suffix(path),
                                    path.empty() ? "(top level)" : path, what));
  }
  void throw_if_any() const {
    if (!problems_.empty()) {
      throw InputError(problems_);
    }
  }
  bool ok() const { return problems_.empty(); }
  // Where the scenario gave its workload ("workload.<name>", or "conversation" in earlier files),
  // for the workload's own messages.
  const std::string& workload_path() const { return workload_path_; }
  void set_workload_path(std::string path) { workload_path_ = std::move(path); }
  // Whether the files a scenario names (a trace) are read: not where settings are read back from
  // a run's record for its report, which reads the run's own files only.
  bool reads_files() const { return reads_files_; }
  void skip_files() { reads_files_ = false; }

  // Unknown keys, with a suggestion for the nearest known one.
  void keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string near = nearest(key, allowed);
        problem(join(path, key), near.empty()
                                     ? "unknown key"
                                     : fmt::format("unknown key (did you mean '{}'?)", near));
      }
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::optional<int> integer(const json& v, const std::string& path, long long lo, long long hi) {
    if (!v.is_number_integer()) {
      problem(path, fmt::format("expected an integer, got {}", describe(v)));
      return std::nullopt;
    }
    const auto x = v.get<long long>();
    if (x < lo || x > hi) {
      problem(path, fmt::format("{} is out of range: expected {} to {}", x, lo, hi));
      return std::nullopt;
    }
    return static_cast<int>(x);
  }

  std::optional<std::string> string(const json& v, const std::string& path, bool allow_empty) {
    if (!v.is_string()) {
      problem(path, fmt::format("expected a string, got {}", describe(v)));
      return std::nullopt;
    }
    auto s = v.get<std::string>();
    if (!allow_empty && s.empty()) {
      problem(path, "expected a non-empty string");
      return std::nullopt;
    }
    if (!allow_empty && s.find_first_not_of(" \t\r\n\f\v") == std::string::npos) {
      problem(path, "expected a non-blank string, got only white space");
      return std::nullopt;
    }
    return s;
  }

  static std::string describe(const json& v) {
    if (v.is_string()) {
      return fmt::format("the string {}", v.dump());
    }
    if (v.is_array()) {
      return "an array";
    }
    if (v.is_object()) {
      return "an object";
    }
    if (v.is_null()) {
      return "null";
    }
    if (v.is_boolean()) {
      return fmt::format("the boolean {}", v.dump());
    }
    return fmt::format("the number {}", v.dump());
  }

 private:
  std::string line_suffix(std::string_view path) const {
    while (true) {
      if (auto it = lines_.find(std::string(path)); it != lines_.end()) {
        return fmt::format(":{}", it->second);
      }
      if (path.empty()) {
        return {};
      }
      const auto cut = path.find_last_of(".[");
      path = cut == std::string_view::npos ? std::string_view() : path.substr(0, cut);
    }
  }

  std::string source_;
  std::map<std::string, int> lines_;
  std::vector<std::string> problems_;
  std::string workload_path_;
  bool reads_files_ = true;
};

// Parses a server object at `path` ("server", "variants[1].server") over `s`: the fields it
// names replace those of `s` (args as a whole); the rest stay. Problems go to `c`.
void parse_server(Checker& c, const json& v, const std::string& path, ServerSpec& s);

// The largest prompt and context a scenario may plan.
inline constexpr int kMaxPromptTokens = 1 << 20;
inline constexpr int kMaxCtx = 1 << 21;
// factors: prompt_tokens, num_ctx, cache_type (or cache_type_k and _v, crossed), edit_position.
void parse_factors(Checker& c, const json& v, Factors& f);

// A server spec as run.json's scenario records it, every default explicit.
json server_to_json(const ServerSpec& s);
// The batch sizes' rules once the scenario parsed: a setting given as a field and as a factor,
// a micro-batch above its batch, a server that cannot take them.
void check_batch(Checker& c, const Scenario& s);

// The "precision" and "answers" sections, and their rules against the rest of the scenario
// (once parsed): precision names an effect of this scenario's headline model and runs without
// variants; answers compare cache types on servers kvbench starts, each against the reference.
void parse_precision(Checker& c, const json& v, Precision& p);
void parse_answers(Checker& c, const json& v, Answers& a);
void check_precision(Checker& c, const Scenario& s);
void check_answers(Checker& c, const Scenario& s);

// The "variants" section: names, and each variant's server over the scenario's `s.server`.
void parse_variants(Checker& c, const json& v, Scenario& s);

// The "gate" section into s.gate; needs s.factors and s.variants parsed first.
void parse_gate(Checker& c, const json& v, Scenario& s);

// Cross-field rules for variants and the gate, once everything parsed (defaults filled).
void check_variants_and_gate(Checker& c, Scenario& s, bool gate_given);

// The scenario's workload, reached through the table of workloads (defined with it, in
// workloads/composition.cpp).
// Parses it: "workload": {"<name>": {...}} with exactly one name, the top-level key of earlier
// files (kEarlierWorkloadKey), or the prompt sweep when neither is given.
void parse_workload(Checker& c, const json& doc, Scenario& s);

// The top-level key by which earlier scenario files give their workload ("conversation").
extern const std::string_view kEarlierWorkloadKey;

// The table of the scenario's parts that compose with a workload (factors, repeats, probes,
// concurrency, precision, answers, ...): what each workload requires, accepts or refuses, each
// refusal with its reason. Checked on every parse, whatever else is wrong.
void check_composition(Checker& c, const json& doc, const Scenario& s);

// The workload's own rules, once the scenario parsed.
void check_workload(Checker& c, const Scenario& s);

// Adds what run.json records of the workload to `resolved`.
void add_workload_json(const Scenario& s, json& resolved);

// Adds "variants" (when there are any) and "gate" (when there are variants or it is not the
// default) to a resolved scenario.
void add_variants_and_gate(const Scenario& s, json& resolved);

}  // namespace kvbench::scenario::detail
