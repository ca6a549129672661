#pragma once
// run.json, typed: what ran (scenario, plan), where and on what (server, model, machine), and
// one BlockInfo per block that ran. The file carries manifest_version; a file without one is
// version 1, whose layout version 2 keeps (version 2 only records its number), and a file of a
// newer version than this build reads is refused. Fields this build does not know are kept as
// read and written back unchanged.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gguf/model_shape.h"
#include "harness/results/block_facts.h"
#include "harness/results/machine_info.h"
#include "harness/results/run_events.h"
#include "harness/results/start_tau.h"

namespace kvbench::results {

inline constexpr int kManifestVersion = 2;

// A server that died during a block, and what restarting it gave.
struct ServerRestart {
  int after_seq = 0;  // the call after which it was found dead
  std::string exit;   // how it ended ("exit code 1", "signal 9")
  std::string at;     // when (RFC 3339)
  std::string url;    // where it answered again
  std::string error;  // why it did not start again
  bool gave_up = false;
};

void to_json(nlohmann::json& j, const ServerRestart& r);
void from_json(const nlohmann::json& j, ServerRestart& r);

// One block of run.json. The fields below are what every block has, whatever the server kind;
// BlockFacts types what a kind or the block's driver measured besides (memory, counters, the
// machine's state, concurrency statistics); `other` keeps what the server answered as it came
// (llama-server's /props, a compatible server's description, Ollama's load) and fields this
// version does not know. run.json writes all of them flat in one object.
struct BlockInfo : BlockFacts {
  // What the runner records.
  int index = 0;
  int replica = 0;
  int num_ctx = 0;
  std::string cache_type;
  std::string variant;       // empty without variants
  std::optional<int> slots;  // concurrent blocks: the server's slots
  // The server's batch and micro-batch sizes where the scenario set them (as the server was
  // started, or Ollama's num_batch per request).
  std::optional<int> batch_size;
  std::optional<int> ubatch_size;
  std::optional<std::string> error;  // the server did not start or answer
  std::vector<ServerRestart> restarts;
  // Where the block's server ran, as its Servers (run/servers.h) recorded it.
  std::string url;
  std::string log;                // the server's log, a file in the run folder (managed)
  std::vector<std::string> argv;  // how it was started (managed)
  std::optional<std::int64_t> pid;
  std::vector<std::string> memory_notes;  // why a memory figure is missing
  nlohmann::json other = nlohmann::json::object();
};

void to_json(nlohmann::json& j, const BlockInfo& b);
void from_json(const nlohmann::json& j, BlockInfo& b);

struct BuildInfo {
  std::string version;
  std::string git_revision;
  int record_version = 0;
};

struct RunManifest {
  int manifest_version = kManifestVersion;
  BuildInfo kvbench;
  std::string run_id;
  std::string status;  // running, complete, incomplete
  std::string started;
  std::string finished;  // empty until the run ends
  std::string scenario_file;
  nlohmann::json scenario = nlohmann::json::object();  // the resolved scenario
  std::string scenario_hash;
  nlohmann::json plan;
  nlohmann::json server;               // what the session found: kind, mode, binary, version or url
  nlohmann::json model;                // the model's file and shape, or its name
  std::optional<MachineInfo> machine;  // CPU, memory, OS; null in run.json when not read
  nlohmann::json variants;  // the resolved variants with what preparing them found; null without
  std::vector<BlockInfo> blocks;
  std::optional<double> first_call_epoch_s;
  std::vector<Resumed> resumed;              // one entry per resume
  std::vector<Extended> extended;            // one entry per extension
  std::optional<RunTotals> summary;          // absent until the run ends
  std::optional<PrecisionRecord> precision;  // a run with a precision target: its checks
  // The user's own labels (`kvbench run --label k=v`): name to value, in name order.
  std::map<std::string, std::string> labels;
  // The start-to-start components the run was given (`run --history`): what an effect resting on
  // too few server starts adds to its interval.
  std::vector<StartTau> start_tau;
  nlohmann::json other = nlohmann::json::object();  // fields this version does not know

  // The model's shape, when run.json records one with the fields the KV arithmetic needs.
  std::optional<gguf::ModelShape> shape() const;
  // The plan's seed (the scenario's), 1 when absent.
  std::uint64_t seed() const;
};

void to_json(nlohmann::json& j, const RunManifest& m);

// The digest that names a scenario ("fnv1a64:" and the hash of its resolved JSON).
std::string scenario_hash(const nlohmann::json& scenario);
// The digest of the scenario a run was started with: an extension (more block sets) changes
// run.json's scenario but not what it is a run of, so its first block_repeats is put back.
std::string first_scenario_hash(const RunManifest& m);

// The KV-relevant shape in a run.json "model" object (model.shape); std::nullopt when absent or
// missing a field the KV arithmetic needs.
std::optional<gguf::ModelShape> model_shape(const nlohmann::json& model);
// Throws InputError (naming `source`) for a version newer than kManifestVersion or a field of
// the wrong type.
RunManifest manifest_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace kvbench::results
