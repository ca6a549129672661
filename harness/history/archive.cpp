#include "harness/history/archive.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/text.h"
#include "harness/results/manifest.h"
#include "harness/session/host.h"

namespace kvbench::history {

namespace {

std::string text_at(const nlohmann::json& j, const char* key, const std::string& where,
                    bool required = true) {
  if (j.contains(key) && j[key].is_string()) {
    return j[key].get<std::string>();
  }
  if (!required && !j.contains(key)) {
    return "";
  }
  throw InputError(fmt::format("{}: {}: expected a string", where, key));
}

std::int64_t int_at(const nlohmann::json& j, const char* key, const std::string& where) {
  if (j.contains(key) && j[key].is_number_integer()) {
    return j[key].get<std::int64_t>();
  }
  throw InputError(fmt::format("{}: {}: expected an integer", where, key));
}

}  // namespace

nlohmann::json to_export_line(const Session& s) {
  const auto& i = s.info;
  nlohmann::json values = nlohmann::json::array();
  for (const auto& v : s.values) {
    values.push_back({{"metric", v.metric},
                      {"condition", v.condition},
                      {"variant", v.variant},
                      {"value", v.value},
                      {"ref_prompt_tokens", v.ref_prompt_tokens},
                      {"ref_num_ctx", v.ref_num_ctx},
                      {"n", v.n}});
  }
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& c : s.calls) {
    calls.push_back(to_json(c));
  }
  return {{"schema", kExportSchema},
          {"schema_version", kExportVersion},
          {"session",
           {{"run_id", i.run_id},
            {"recorded_at", i.recorded_at},
            {"label", i.label},
            {"scenario_name", i.scenario_name},
            {"scenario_hash", i.scenario_hash},
            {"git_revision", i.git_revision},
            {"machine", i.machine},
            {"run_dir", i.run_dir},
            {"run_labels", i.run_labels},
            {"host_class", i.host_class},
            {"host", i.host},
            {"calls_digest", i.calls_digest}}},
          {"values", values},
          {"calls", calls}};
}

Session from_export_line(const nlohmann::json& line, const std::string& where) {
  if (!line.is_object()) {
    throw InputError(fmt::format("{}: expected a JSON object (a {} line)", where, kExportSchema));
  }
  if (line.value("schema", "") != kExportSchema) {
    throw InputError(fmt::format("{}: schema: expected \"{}\"", where, kExportSchema));
  }
  const auto version = int_at(line, "schema_version", where);
  if (version > kExportVersion || version < 1) {
    throw InputError(fmt::format("{}: schema_version: {} is not one this kvbench reads (1 to {})",
                                 where, version, kExportVersion));
  }
  if (!line.contains("session") || !line["session"].is_object()) {
    throw InputError(fmt::format("{}: session: expected an object", where));
  }
  const auto& j = line["session"];
  Session s;
  auto& i = s.info;
  i.run_id = text_at(j, "run_id", where);
  i.recorded_at = text_at(j, "recorded_at", where);
  i.label = text_at(j, "label", where, false);
  i.scenario_name = text_at(j, "scenario_name", where);
  i.scenario_hash = text_at(j, "scenario_hash", where);
  i.git_revision = text_at(j, "git_revision", where, false);
  i.machine = text_at(j, "machine", where, false);
  i.run_dir = text_at(j, "run_dir", where, false);
  i.run_labels = text_at(j, "run_labels", where, false);
  i.calls_digest = text_at(j, "calls_digest", where, false);
  if (i.run_id.empty() || i.scenario_hash.empty()) {
    throw InputError(fmt::format("{}: session: no run_id or scenario_hash", where));
  }
  if (j.contains("host") && j["host"].is_object()) {
    i.host = j["host"].get<session::HostFingerprint>();
  }
  i.host_class = text_at(j, "host_class", where, false);
  if (!line.contains("values") || !line["values"].is_array()) {
    throw InputError(fmt::format("{}: values: expected an array", where));
  }
  for (std::size_t k = 0; k < line["values"].size(); ++k) {
    const auto& v = line["values"][k];
    const auto at = fmt::format("{}: values[{}]", where, k);
    if (!v.is_object() || !v.contains("value") || !v["value"].is_number()) {
      throw InputError(fmt::format("{}: expected an object with a numeric value", at));
    }
    s.values.push_back({text_at(v, "metric", at), text_at(v, "condition", at),
                        text_at(v, "variant", at), v["value"].get<double>(),
                        static_cast<int>(int_at(v, "ref_prompt_tokens", at)),
                        static_cast<int>(int_at(v, "ref_num_ctx", at)), int_at(v, "n", at)});
  }
  if (!line.contains("calls") || !line["calls"].is_array()) {
    throw InputError(fmt::format("{}: calls: expected an array", where));
  }
  for (std::size_t k = 0; k < line["calls"].size(); ++k) {
    const auto& c = line["calls"][k];
    try {
      auto record = record_from_json(c);
      if (record.version > kRecordVersion) {
        throw InputError(fmt::format("{}: calls[{}].version: {} is newer than this kvbench reads",
                                     where, k, record.version));
      }
      s.calls.push_back(std::move(record));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: calls[{}]: not a call record: {}", where, k, e.what()));
    }
  }
  if (!i.calls_digest.empty() && session::calls_digest(s.calls) != i.calls_digest) {
    throw InputError(fmt::format(
        "{}: calls: they do not match the session's calls_digest {} (the line was changed)", where,
        i.calls_digest));
  }
  return s;
}

std::vector<Session> read_export(std::istream& in, const std::string& name) {
  std::vector<Session> out;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (trim(text).empty()) {
      continue;
    }
    const auto where = fmt::format("{}:{}", name, n);
    nlohmann::json line;
    try {
      line = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}: not JSON: {}", where, e.what()));
    }
    out.push_back(from_export_line(line, where));
  }
  return out;
}

void check_ingestible(const session::RunInputs& run) {
  const auto file = (run.dir / "run.json").string();
  const auto& m = run.loaded.run;
  if (m.status != "complete") {
    throw InputError(fmt::format(
        "{}: status: \"{}\", expected \"complete\": finish the run first (kvbench run --resume {})",
        file, m.status, run.dir.string()));
  }
  const auto hash = results::first_scenario_hash(m);
  if (hash != m.scenario_hash) {
    throw InputError(
        fmt::format("{}: scenario_hash: {} does not match its scenario ({}): the file was changed",
                    file, m.scenario_hash, hash));
  }
  const auto& h = run.session.host;
  if (h.cpu_model.empty() || h.logical_cores <= 0 || h.memory_bytes == 0) {
    throw InputError(fmt::format(
        "{}: machine: expected cpu_model, logical_cores and total_memory_bytes, which tell the "
        "run's host",
        file));
  }
  for (const auto& c : run.loaded.calls) {
    if (c.version > kRecordVersion) {
      throw InputError(
          fmt::format("{}: call {}: record version {} is newer than this kvbench reads",
                      (run.dir / "calls.jsonl").string(), c.seq, c.version));
    }
  }
}

}  // namespace kvbench::history
