#pragma once
// What happened to a run after it started, as run.json records it: each resume and extension,
// the totals when it ended, and the precision checks of a run that stops when precise enough.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::results {

// One `kvbench run --resume`: when, how many calls were already recorded, and what the session
// found this time (server and model as found, kept as found).
struct Resumed {
  std::string at;
  std::size_t calls_recorded = 0;
  nlohmann::json server;
  nlohmann::json model;
};

// One `kvbench run --extend` (or a precision pass): the sets added, and the run before it.
struct Extended {
  std::string at;
  int sets = 0;
  int sets_before = 0;
  std::size_t blocks_before = 0;
  std::size_t calls_recorded = 0;
};

// The calls written when the run ended, and how many failed or were flagged.
struct RunTotals {
  int calls = 0;
  int failed = 0;
  int flagged = 0;
};

// One check of a run with a precision target: the effect's estimate and interval after `sets`
// sets, its relative half-width, or why it is not estimable, and what was decided.
struct PrecisionStatus {
  std::string metric;
  std::string effect;
  double target_half_width = 0;
  int max_calls = 0;
  int sets = 0;
  std::size_t calls = 0;
  std::string at;
  std::optional<double> estimate;
  std::optional<std::array<double, 2>> ci;
  std::optional<double> half_width;
  std::optional<std::string> why;
  std::string status;  // continuing, precise, budget spent, ...
};

// run.json's "precision": the last check, with every check in order.
struct PrecisionRecord {
  PrecisionStatus last;
  std::vector<PrecisionStatus> checks;
};

void to_json(nlohmann::json& j, const Resumed& r);
void from_json(const nlohmann::json& j, Resumed& r);
void to_json(nlohmann::json& j, const Extended& e);
void from_json(const nlohmann::json& j, Extended& e);
void to_json(nlohmann::json& j, const RunTotals& t);
void from_json(const nlohmann::json& j, RunTotals& t);
void to_json(nlohmann::json& j, const PrecisionStatus& c);
void from_json(const nlohmann::json& j, PrecisionStatus& c);
void to_json(nlohmann::json& j, const PrecisionRecord& p);
void from_json(const nlohmann::json& j, PrecisionRecord& p);

}  // namespace kvbench::results
