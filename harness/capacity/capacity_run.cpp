#include "harness/capacity/capacity_run.h"

#include <map>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/load/block_stats.h"
#include "harness/local/local_run.h"
#include "harness/process/signals.h"
#include "harness/results/results.h"
#include "harness/scenario/kinds.h"

namespace kvbench::capacity {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void check_request(const CapacityRequest& r) {
  std::vector<std::string> problems;
  if (!(r.ttft_p90_ms > 0)) {
    problems.emplace_back("kvbench capacity: --ttft-p90-ms: expected a limit above 0 ms");
  }
  if (r.max < 1 || r.max > 256) {
    problems.emplace_back("kvbench capacity: --max: expected a level from 1 to 256");
  }
  if (r.rounds < 1) {
    problems.emplace_back("kvbench capacity: --rounds: expected at least 1");
  }
  if (r.replicates < 0 || r.replicates > 10) {
    problems.emplace_back("kvbench capacity: --replicates: expected 0 to 10");
  }
  if (const auto kind = scenario::kind_named(r.kind); !kind) {
    problems.push_back(fmt::format("kvbench capacity: --kind: expected {}, got '{}'",
                                   scenario::kind_list(), r.kind));
  } else {
    scenario::ServerSpec spec;
    spec.kind = *kind;
    spec.model = r.model;
    if (const auto why = scenario::model_problem(spec)) {
      problems.push_back(fmt::format("kvbench capacity: --model: {}", *why));
    }
  }
  if (r.prompt_tokens + r.max_tokens > r.ctx) {
    problems.push_back(fmt::format(
        "kvbench capacity: --prompt-tokens: {} prompt tokens and {} generated do not fit a "
        "context of {} (--ctx)",
        r.prompt_tokens, r.max_tokens, r.ctx));
  }
  if (!problems.empty()) {
    throw InputError(problems);
  }
}

// One level: its scenario run into `dir`, its block statistics from the records.
struct LevelRun {
  load::LevelMeasurement measured;
  json entry;
};

json block_facts(const results::RunManifest& run) {
  json out = json::object();
  if (run.blocks.empty()) {
    return out;
  }
  const results::BlockInfo& b = run.blocks.front();
  if (b.slots) {
    out["slots"] = *b.slots;
  }
  const json written = b;
  for (const char* key : {"slot_ctx", "num_parallel", "kv_bytes_logged", "peak_rss_bytes",
                          "memory_after_load", "gpu_memory_at_end_bytes", "server_queue"}) {
    if (written.contains(key)) {
      out[key] = written[key];
    }
  }
  // Ollama: the memory of the runner /api/ps reports after the load.
  if (b.api_ps_after_load && b.api_ps_after_load->size_bytes) {
    out["ps_size_bytes"] = *b.api_ps_after_load->size_bytes;
  }
  return out;
}

LevelRun run_level(const CapacityRequest& request, int level, const fs::path& dir,
                   const run::RunOptions& options) {
  run::RunOptions o = options;
  o.results_root = dir;
  const run::RunSummary summary =
      local::run_scenario(run::with_overrides(capacity_level_scenario(request, level), options), o);
  if (process::stop_requested()) {
    throw Error(
        fmt::format("kvbench capacity: interrupted at {} conversations; the levels "
                    "measured so far are in {}",
                    level, dir.string()));
  }
  const results::LoadedRun loaded = results::load_run(summary.run_dir);
  const results::ConcurrencyStats stats = load::block_stats(loaded.calls);
  LevelRun out;
  out.measured.not_ok = stats.calls - stats.ok;
  if (stats.ttft_ms) {
    out.measured.ttft_p90_ms = stats.ttft_ms->p90;
  }
  for (const auto& c : loaded.calls) {
    if (c.kind == CallKind::timed && c.ok() && c.client.ttft_ms) {
      out.measured.ttft_ms.push_back(*c.client.ttft_ms);
    }
  }
  out.entry = {{"level", level},
               {"run_dir", summary.run_dir.filename().string()},
               {"complete", summary.complete},
               {"concurrency", stats},
               {"block", block_facts(loaded.run)}};
  if (!loaded.run.model.is_null()) {
    out.entry["model"] = loaded.run.model;
  }
  return out;
}

json request_json(const CapacityRequest& r) {
  return {{"kind", r.kind},
          {"ctx", r.ctx},
          {"cache_type", r.cache_type},
          {"prompt_tokens", r.prompt_tokens},
          {"ttft_p90_ms", r.ttft_p90_ms},
          {"max", r.max},
          {"rounds", r.rounds},
          {"replicates", r.replicates},
          {"max_tokens", r.max_tokens},
          {"model", r.model},
          {"seed", r.seed}};
}

}  // namespace

scenario::Scenario capacity_level_scenario(const CapacityRequest& request, int level) {
  check_request(request);
  const json j = {{"name", fmt::format("capacity-n{}", level)},
                  {"server", {{"kind", request.kind}, {"model", request.model}}},
                  {"factors",
                   {{"prompt_tokens", {request.prompt_tokens}},
                    {"num_ctx", {request.ctx}},
                    {"cache_type", {request.cache_type}}}},
                  {"concurrency", {{"streams", {level}}}},
                  {"repeats", request.rounds * level},
                  {"warmup", 1},
                  {"max_tokens", request.max_tokens},
                  {"seed", request.seed}};
  return scenario::parse_scenario(j.dump(), "kvbench capacity");
}

CapacityRun run_capacity(const CapacityRequest& request, const run::RunOptions& options) {
  if (!options.url.empty()) {
    throw InputError(
        "kvbench capacity: --url: the search starts its own server per level; it cannot attach "
        "to a running one");
  }
  run::with_overrides(capacity_level_scenario(request, 1), options);  // checks before any folder
  results::check_writable_folder(options.results_root, "--results");
  CapacityRun out;
  const bool root_existed = fs::exists(options.results_root);
  out.dir = results::create_run_dir(options.results_root, "capacity");
  out.summary = {{"schema", "kvbench.capacity"}, {"schema_version", 1},
                 {"kind", "capacity"},           {"request", request_json(request)},
                 {"status", "running"},          {"levels", json::array()}};
  std::map<int, std::vector<double>> samples;  // every TTFT of each level, replicates pooled
  const auto measure = [&](int level) {
    LevelRun lr = run_level(request, level, out.dir, options);
    if (!out.summary.contains("model") && lr.entry.contains("model")) {
      out.summary["model"] = lr.entry["model"];
    }
    lr.entry.erase("model");
    out.summary["levels"].push_back(lr.entry);
    results::write_json_atomic(out.dir / "capacity.json", out.summary);
    auto& s = samples[level];
    s.insert(s.end(), lr.measured.ttft_ms.begin(), lr.measured.ttft_ms.end());
    return lr.measured;
  };
  try {
    out.result = load::search_capacity(request.max, request.ttft_p90_ms, measure);
  } catch (const InputError&) {
    // Bad input the first level's setup found (a cache type the model cannot take, a missing
    // model): leave no empty folders behind.
    if (out.summary["levels"].empty()) {
      std::error_code ec;
      fs::remove(out.dir, ec);
      if (!root_existed) {
        fs::remove(options.results_root, ec);
      }
    }
    throw;
  }
  auto& levels = out.summary["levels"];
  for (std::size_t i = 0; i < out.result.probes.size(); ++i) {
    levels[i]["passed"] = out.result.probes[i].passed;
    levels[i]["verdict"] = load::describe_probe(out.result.probes[i], request.ttft_p90_ms);
  }
  // Replicates where the answer is decided: the last level that passed and the first that
  // failed, measured again and pooled with their first measurement.
  std::vector<int> near;
  if (out.result.answer >= 1) {
    near.push_back(out.result.answer);
  }
  if (out.result.first_failed) {
    near.push_back(*out.result.first_failed);
  }
  for (int rep = 0; rep < request.replicates && !near.empty(); ++rep) {
    for (const int level : near) {
      const auto m = measure(level);
      load::CapacityProbe probe{level, m, load::level_passes(m, request.ttft_p90_ms)};
      levels.back()["replicate"] = rep + 1;
      levels.back()["passed"] = probe.passed;
      levels.back()["verdict"] = load::describe_probe(probe, request.ttft_p90_ms);
    }
  }
  std::vector<load::LevelSamples> pooled;
  for (const auto& [level, ttfts] : samples) {
    pooled.push_back({level, ttfts});
  }
  out.boundary = load::estimate_boundary(pooled, request.ttft_p90_ms, request.seed);
  out.summary["boundary"] = out.boundary;
  out.summary["answer"] = out.result.answer;
  out.summary["at_max"] = out.result.at_max;
  out.summary["first_failed"] =
      out.result.first_failed ? json(*out.result.first_failed) : json(nullptr);
  out.summary["status"] = "complete";
  results::write_json_atomic(out.dir / "capacity.json", out.summary);
  return out;
}

}  // namespace kvbench::capacity
