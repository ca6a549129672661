#include "harness/results/manifest.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/text.h"

namespace kvbench::results {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 15> kBlockFields = {
    "index", "replica",  "num_ctx", "cache_type", "variant", "slots", "batch_size",  "ubatch_size",
    "error", "restarts", "url",     "log",        "argv",    "pid",   "memory_notes"};

constexpr std::array<std::string_view, 23> kRunFields = {"schema",
                                                         "manifest_version",
                                                         "kvbench",
                                                         "run_id",
                                                         "status",
                                                         "started",
                                                         "finished",
                                                         "scenario_file",
                                                         "scenario",
                                                         "scenario_hash",
                                                         "plan",
                                                         "server",
                                                         "model",
                                                         "machine",
                                                         "variants",
                                                         "blocks",
                                                         "first_call_epoch_s",
                                                         "resumed",
                                                         "extended",
                                                         "summary",
                                                         "precision",
                                                         "labels",
                                                         "start_tau"};

template <std::size_t N>
bool known(const std::array<std::string_view, N>& fields, const std::string& key) {
  for (const auto f : fields) {
    if (f == key) {
      return true;
    }
  }
  return false;
}

// Reads j[key] into `out` when present and not null.
template <typename T>
void read(const json& j, const char* key, T& out) {
  const auto it = j.find(key);
  if (it != j.end() && !it->is_null()) {
    out = it->get<T>();
  }
}

template <typename T>
void read(const json& j, const char* key, std::optional<T>& out) {
  const auto it = j.find(key);
  if (it != j.end() && !it->is_null()) {
    out = it->get<T>();
  }
}

// Reads j[key] into `out` as read() does; a value of another shape (a hand-edited file) is kept
// as read in `other` instead, and `out` left empty: what kvbench itself records after the run
// started is never a reason to refuse the whole file.
template <typename T>
void read_or_keep(const json& j, const char* key, T& out, json& other) {
  try {
    read(j, key, out);
  } catch (const json::exception&) {
    out = T{};
    other[key] = j[key];
  }
}

void put_nonempty(json& j, const char* key, const std::string& s) {
  if (!s.empty()) {
    j[key] = s;
  }
}

void put_present(json& j, const char* key, const json& v) {
  if (!v.is_null()) {
    j[key] = v;
  }
}

}  // namespace

void to_json(json& j, const ServerRestart& r) {
  j = {{"after_seq", r.after_seq}};
  put_nonempty(j, "exit", r.exit);
  put_nonempty(j, "at", r.at);
  put_nonempty(j, "url", r.url);
  put_nonempty(j, "error", r.error);
  if (r.gave_up) {
    j["gave_up"] = true;
  }
}

void from_json(const json& j, ServerRestart& r) {
  r = ServerRestart{};
  read(j, "after_seq", r.after_seq);
  read(j, "exit", r.exit);
  read(j, "at", r.at);
  read(j, "url", r.url);
  read(j, "error", r.error);
  read(j, "gave_up", r.gave_up);
}

void to_json(json& j, const BlockInfo& b) {
  j = json::object();
  write_block_facts(j, b);
  if (b.other.is_object()) {
    // What was kept as read wins over a fact written beside it (the second of the GPU pair).
    for (const auto& [key, value] : b.other.items()) {
      j[key] = value;
    }
  }
  j["index"] = b.index;
  j["replica"] = b.replica;
  j["num_ctx"] = b.num_ctx;
  j["cache_type"] = b.cache_type;
  put_nonempty(j, "variant", b.variant);
  if (b.slots) {
    j["slots"] = *b.slots;
  }
  if (b.batch_size) {
    j["batch_size"] = *b.batch_size;
  }
  if (b.ubatch_size) {
    j["ubatch_size"] = *b.ubatch_size;
  }
  if (b.error) {
    j["error"] = *b.error;
  }
  if (!b.restarts.empty()) {
    j["restarts"] = b.restarts;
  }
  put_nonempty(j, "url", b.url);
  put_nonempty(j, "log", b.log);
  if (!b.argv.empty()) {
    j["argv"] = b.argv;
  }
  if (b.pid) {
    j["pid"] = *b.pid;
  }
  if (!b.memory_notes.empty()) {
    j["memory_notes"] = b.memory_notes;
  }
}

void from_json(const json& j, BlockInfo& b) {
  b = BlockInfo{};
  read(j, "index", b.index);
  read(j, "replica", b.replica);
  read(j, "num_ctx", b.num_ctx);
  read(j, "cache_type", b.cache_type);
  read(j, "variant", b.variant);
  read(j, "slots", b.slots);
  read(j, "batch_size", b.batch_size);
  read(j, "ubatch_size", b.ubatch_size);
  read(j, "error", b.error);
  read(j, "restarts", b.restarts);
  read(j, "url", b.url);
  read(j, "log", b.log);
  read(j, "argv", b.argv);
  read(j, "pid", b.pid);
  read(j, "memory_notes", b.memory_notes);
  json rest = json::object();
  for (const auto& [key, value] : j.items()) {
    if (!known(kBlockFields, key)) {
      rest[key] = value;
    }
  }
  read_block_facts(rest, b, b.other);
}

std::optional<gguf::ModelShape> RunManifest::shape() const {
  return model_shape(model);
}

std::optional<gguf::ModelShape> model_shape(const json& model) {
  if (!model.is_object() || !model.contains("shape")) {
    return std::nullopt;
  }
  const auto s = model["shape"].get<gguf::ModelShape>();
  if (s.n_layer == 0 || s.n_head_kv == 0 || s.head_dim_k == 0) {
    return std::nullopt;
  }
  return s;
}

std::uint64_t RunManifest::seed() const {
  return scenario.is_object() ? scenario.value("seed", std::uint64_t{1}) : 1;
}

void to_json(json& j, const RunManifest& m) {
  j = m.other.is_object() ? m.other : json::object();
  j["schema"] = "kvbench.run";  // its version: manifest_version
  j["manifest_version"] = m.manifest_version;
  j["kvbench"] = {{"version", m.kvbench.version},
                  {"git_revision", m.kvbench.git_revision},
                  {"record_version", m.kvbench.record_version}};
  j["run_id"] = m.run_id;
  j["status"] = m.status;
  j["started"] = m.started;
  put_nonempty(j, "finished", m.finished);
  j["scenario_file"] = m.scenario_file;
  j["scenario"] = m.scenario;
  j["scenario_hash"] = m.scenario_hash;
  j["plan"] = m.plan;
  j["server"] = m.server;
  j["model"] = m.model;
  if (m.machine) {
    j["machine"] = *m.machine;
  } else if (!j.contains("machine")) {  // kept as read when of another shape
    j["machine"] = nullptr;
  }
  put_present(j, "variants", m.variants);
  j["blocks"] = m.blocks;
  if (m.first_call_epoch_s) {
    j["first_call_epoch_s"] = *m.first_call_epoch_s;
  }
  if (!m.resumed.empty()) {
    j["resumed"] = m.resumed;
  }
  if (!m.extended.empty()) {
    j["extended"] = m.extended;
  }
  if (m.summary) {
    j["summary"] = *m.summary;
  }
  if (m.precision) {
    j["precision"] = *m.precision;
  }
  if (!m.labels.empty()) {
    j["labels"] = m.labels;
  }
  if (!m.start_tau.empty()) {
    j["start_tau"] = m.start_tau;
  }
}

RunManifest manifest_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) {
    throw InputError(fmt::format("{}: expected a JSON object", source));
  }
  RunManifest m;
  m.manifest_version = 1;  // written before the version was recorded
  const char* field = "manifest_version";
  try {
    read(j, field, m.manifest_version);
    if (m.manifest_version < 1 || m.manifest_version > kManifestVersion) {
      throw InputError(fmt::format(
          "{}: manifest_version {}: this kvbench reads versions 1 to {} (a newer kvbench wrote "
          "it?)",
          source, m.manifest_version, kManifestVersion));
    }
    if (j.contains("kvbench")) {
      field = "kvbench";
      const json& k = j["kvbench"];
      read(k, "version", m.kvbench.version);
      read(k, "git_revision", m.kvbench.git_revision);
      read(k, "record_version", m.kvbench.record_version);
    }
    field = "run_id";
    read(j, field, m.run_id);
    field = "status";
    read(j, field, m.status);
    field = "started";
    read(j, field, m.started);
    field = "finished";
    read(j, field, m.finished);
    field = "scenario_file";
    read(j, field, m.scenario_file);
    field = "scenario";
    read(j, field, m.scenario);
    field = "scenario_hash";
    read(j, field, m.scenario_hash);
    field = "plan";
    read(j, field, m.plan);
    field = "server";
    read(j, field, m.server);
    field = "model";
    read(j, field, m.model);
    field = "machine";
    read_or_keep(j, field, m.machine, m.other);
    field = "variants";
    read(j, field, m.variants);
    field = "blocks";
    read(j, field, m.blocks);
    field = "first_call_epoch_s";
    read(j, field, m.first_call_epoch_s);
    field = "resumed";
    read_or_keep(j, field, m.resumed, m.other);
    field = "extended";
    read_or_keep(j, field, m.extended, m.other);
    field = "summary";
    read_or_keep(j, field, m.summary, m.other);
    field = "precision";
    read_or_keep(j, field, m.precision, m.other);
    field = "labels";
    read(j, field, m.labels);
    field = "start_tau";
    read(j, field, m.start_tau);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: field \"{}\": {}", source, field, e.what()));
  }
  for (const auto& [key, value] : j.items()) {
    if (!known(kRunFields, key)) {
      m.other[key] = value;
    }
  }
  return m;
}

std::string scenario_hash(const nlohmann::json& scenario) {
  return fmt::format("fnv1a64:{:016x}", fnv1a64(scenario.dump()));
}

std::string first_scenario_hash(const RunManifest& m) {
  if (m.extended.empty() || !m.scenario.is_object()) {
    return scenario_hash(m.scenario);
  }
  nlohmann::json first = m.scenario;
  first["block_repeats"] = m.extended[0].sets_before;
  return scenario_hash(first);
}

}  // namespace kvbench::results
