#pragma once
// A start-to-start component: how far one effect moved from one server start to the next on a
// machine, beyond what each run's own interval held (the DerSimonian-Laird tau of `kvbench
// repeat`), measured under a machine class, a server build and a model. A run whose effect rests
// on too few starts to see it adds it to that effect's interval; run.json keeps the ones a run
// was given (`start_tau`), so the report stays a function of the run's own files.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::results {

struct StartTau {
  std::string metric;  // "decode_tps"
  std::string term;    // "prompt_ktokens", "prompt_ktokens@cache_type=q8_0", ...
  bool relative = false;
  double tau = 0;        // in the effect's units (per cent for a relative effect)
  double df = 0;         // of tau^2: the repeated runs less one
  std::size_t runs = 0;  // the runs it was measured over
  double starts = 1;     // server starts per setting the effect rested on in each of those runs
  std::string measured;  // when (RFC 3339)
  std::string host_class;
  std::string server;  // the server's build, its version's first line
  std::string model;
};

void to_json(nlohmann::json& j, const StartTau& t);
void from_json(const nlohmann::json& j, StartTau& t);

}  // namespace kvbench::results
