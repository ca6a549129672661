#include "harness/results/block_facts.h"

#include <string>
#include <string_view>
#include <vector>

#include "harness/core/optional_json.h"

namespace kvbench::results {

using nlohmann::json;

namespace {

json flag_json(const FlagValue& v) {
  if (const auto* n = std::get_if<long long>(&v)) {
    return *n;
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  return nullptr;
}

FlagValue flag_from(const json& j) {
  if (j.is_number_integer()) {
    return j.get<long long>();
  }
  if (j.is_string()) {
    return j.get<std::string>();
  }
  if (j.is_null()) {
    return std::monostate{};
  }
  throw json::type_error::create(302, "a flag is a number, a text or null", &j);
}

json api_ps_json(const ApiPsMemory& m, const char* process_key) {
  json j = json::object();
  if (!m.ps.is_null()) {
    j["ps"] = m.ps;
  }
  put_optional(j, "error", m.error);
  put_optional(j, "size_bytes", m.size_bytes);
  put_optional(j, "size_vram_bytes", m.size_vram_bytes);
  put_optional(j, "context_length", m.context_length);
  put_optional(j, process_key, m.process);
  return j;
}

ApiPsMemory api_ps_from(const json& j, const char* process_key) {
  if (!j.is_object()) {
    throw json::type_error::create(302, "/api/ps memory is an object", &j);
  }
  ApiPsMemory m;
  m.ps = j.value("ps", json());
  m.error = optional_at<std::string>(j, "error");
  m.size_bytes = optional_at<std::uint64_t>(j, "size_bytes");
  m.size_vram_bytes = optional_at<std::uint64_t>(j, "size_vram_bytes");
  m.context_length = optional_at<std::int64_t>(j, "context_length");
  m.process = optional_at<TreeMemory>(j, process_key);
  return m;
}

using Reader = void (*)(const json&, BlockFacts&);

// One reader per key; each parses the whole value before it sets anything, so a value of another
// shape throws and is kept as read.
const std::map<std::string_view, Reader>& readers() {
  static const std::map<std::string_view, Reader> table = {
      {"memory_after_load",
       [](const json& v, BlockFacts& f) { f.memory.after_load = v.get<TreeMemory>(); }},
      {"memory_after_longest_prompt",
       [](const json& v, BlockFacts& f) {
         auto m = v.get<TreeMemory>();
         f.memory.longest_prompt_tokens = optional_at<int>(v, "prompt_tokens");
         f.memory.after_longest_prompt = std::move(m);
       }},
      {"memory_at_end",
       [](const json& v, BlockFacts& f) {
         if (v.is_object() && v.contains("rss_bytes")) {
           f.memory.at_end = v.get<TreeMemory>();
         } else {
           f.api_ps_at_end = api_ps_from(v, "process");
         }
       }},
      {"peak_rss_bytes",
       [](const json& v, BlockFacts& f) { f.memory.peak_rss_bytes = v.get<std::uint64_t>(); }},
      {"gpu_memory_after_load_bytes",
       [](const json& v, BlockFacts& f) {
         f.memory.gpu_after_load_bytes =
             v.is_null() ? std::nullopt : std::optional(v.get<std::uint64_t>());
         f.memory.gpu_read = true;
       }},
      {"gpu_memory_at_end_bytes",
       [](const json& v, BlockFacts& f) {
         f.memory.gpu_at_end_bytes =
             v.is_null() ? std::nullopt : std::optional(v.get<std::uint64_t>());
         f.memory.gpu_read = true;
       }},
      {"server_log_memory",
       [](const json& v, BlockFacts& f) { f.memory.server_log = v.get<kv::ServerLogMemory>(); }},
      {"kv_bytes_logged",
       [](const json& v, BlockFacts& f) { f.memory.kv_bytes_logged = v.get<std::uint64_t>(); }},
      {"memory", [](const json& v,
                    BlockFacts& f) { f.api_ps_after_load = api_ps_from(v, "process_after_load"); }},
      {"server_counters",
       [](const json& v, BlockFacts& f) { f.server_counters = v.get<ServerCounters>(); }},
      {"machine_state",
       [](const json& v, BlockFacts& f) { f.machine_state = v.get<BlockMachineState>(); }},
      {"prompt_cache",
       [](const json& v, BlockFacts& f) { f.prompt_cache = v.get<PromptCacheSettings>(); }},
      {"concurrency",
       [](const json& v, BlockFacts& f) { f.concurrency = v.get<ConcurrencyStats>(); }},
      {"server_queue", [](const json& v, BlockFacts& f) { f.server_queue = v.get<ServerQueue>(); }},
      {"deferred", [](const json& v, BlockFacts& f) { f.deferred = v.get<int>(); }},
      {"slot_ctx", [](const json& v, BlockFacts& f) { f.slot_ctx = v.get<int>(); }},
      {"port_retries", [](const json& v, BlockFacts& f) { f.port_retries = v.get<int>(); }},
      {"num_parallel",
       [](const json& v, BlockFacts& f) {
         f.num_parallel = v.is_null() ? std::nullopt : std::optional(v.get<int>());
         f.num_parallel_unknown = v.is_null();
       }},
  };
  return table;
}

}  // namespace

void read_block_facts(const json& block, BlockFacts& facts, json& rest) {
  const auto& table = readers();
  std::vector<std::string> typed;
  for (const auto& [key, value] : block.items()) {
    const auto it = table.find(key);
    bool read = false;
    if (it != table.end()) {
      try {
        it->second(value, facts);
        read = true;
      } catch (const json::exception&) {
        read = false;  // another type: kept as read
      }
    }
    if (read) {
      typed.push_back(key);
    } else {
      rest[key] = value;
    }
  }
  // A fact that would not write back as it was read (a field this version does not know inside
  // it, a partial object, a number of another type) is also kept as read, and written in place of
  // the typed value: a block is not changed once recorded.
  json back = json::object();
  write_block_facts(back, facts);
  for (const auto& key : typed) {
    const auto it = back.find(key);
    if (it == back.end() || it->dump() != block[key].dump()) {
      rest[key] = block[key];
    }
  }
}

void write_block_facts(json& j, const BlockFacts& f) {
  const ServerMemory& m = f.memory;
  put_optional(j, "memory_after_load", m.after_load);
  if (m.after_longest_prompt) {
    json& longest = j["memory_after_longest_prompt"] = *m.after_longest_prompt;
    put_optional(longest, "prompt_tokens", m.longest_prompt_tokens);
  }
  put_optional(j, "memory_at_end", m.at_end);
  put_optional(j, "peak_rss_bytes", m.peak_rss_bytes);
  if (m.gpu_read) {
    j["gpu_memory_after_load_bytes"] = or_null(m.gpu_after_load_bytes);
    j["gpu_memory_at_end_bytes"] = or_null(m.gpu_at_end_bytes);
  }
  put_optional(j, "server_log_memory", m.server_log);
  put_optional(j, "kv_bytes_logged", m.kv_bytes_logged);
  if (f.api_ps_after_load) {
    j["memory"] = api_ps_json(*f.api_ps_after_load, "process_after_load");
  }
  if (f.api_ps_at_end) {
    j["memory_at_end"] = api_ps_json(*f.api_ps_at_end, "process");
  }
  put_optional(j, "server_counters", f.server_counters);
  put_optional(j, "machine_state", f.machine_state);
  put_optional(j, "prompt_cache", f.prompt_cache);
  put_optional(j, "concurrency", f.concurrency);
  put_optional(j, "server_queue", f.server_queue);
  put_optional(j, "deferred", f.deferred);
  put_optional(j, "slot_ctx", f.slot_ctx);
  put_optional(j, "port_retries", f.port_retries);
  if (f.num_parallel || f.num_parallel_unknown) {
    j["num_parallel"] = or_null(f.num_parallel);
  }
}

void to_json(json& j, const TreeMemory& m) {
  j = json{{"process_count", m.pids.size()},   {"pids", m.pids},
           {"rss_bytes", m.rss_bytes},         {"peak_rss_bytes", m.peak_rss_bytes},
           {"virtual_bytes", m.virtual_bytes}, {"swap_bytes", m.swap_bytes}};
}

void from_json(const json& j, TreeMemory& m) {
  m.pids = j.value("pids", std::vector<pid_t>{});
  m.rss_bytes = j.value("rss_bytes", std::uint64_t{0});
  m.peak_rss_bytes = j.value("peak_rss_bytes", std::uint64_t{0});
  m.virtual_bytes = j.value("virtual_bytes", std::uint64_t{0});
  m.swap_bytes = j.value("swap_bytes", std::uint64_t{0});
}

void to_json(json& j, const MachineState& s) {
  j = json::object();
  j["governor"] = s.governor.empty() ? json(nullptr) : json(s.governor);
  if (s.driver_recorded) {
    j["driver"] = s.driver.empty() ? json(nullptr) : json(s.driver);
  }
  j["cpu_mhz"] = or_null(s.cpu_mhz);
  j["cpu_max_mhz"] = or_null(s.cpu_max_mhz);
  j["load_average"] = or_null(s.load_average);
  json gpus = json::array();
  for (const auto& g : s.gpus) {
    gpus.push_back({{"index", g.index},
                    {"sm_clock_mhz", or_null(g.sm_clock_mhz)},
                    {"temperature_c", or_null(g.temperature_c)}});
  }
  j["gpus"] = gpus;
}

void from_json(const json& j, MachineState& s) {
  s = MachineState{};
  s.governor = optional_at<std::string>(j, "governor").value_or("");
  s.driver = optional_at<std::string>(j, "driver").value_or("");
  s.driver_recorded = j.contains("driver");
  s.cpu_mhz = optional_at<double>(j, "cpu_mhz");
  s.cpu_max_mhz = optional_at<double>(j, "cpu_max_mhz");
  s.load_average = optional_at<std::array<double, 3>>(j, "load_average");
  for (const auto& g : j.value("gpus", json::array())) {
    s.gpus.push_back({g.value("index", 0), optional_at<double>(g, "sm_clock_mhz"),
                      optional_at<double>(g, "temperature_c")});
  }
}

void to_json(json& j, const BlockMachineState& s) {
  j = {{"start", s.start}, {"end", s.end}, {"warnings", s.warnings}};
  put_optional(j, "steal_share", s.steal_share);
  put_optional(j, "busy_share", s.busy_share);
}

void from_json(const json& j, BlockMachineState& s) {
  s.start = j.value("start", json::object()).get<MachineState>();
  s.end = j.value("end", json::object()).get<MachineState>();
  s.steal_share = optional_at<double>(j, "steal_share");
  s.busy_share = optional_at<double>(j, "busy_share");
  s.warnings = j.value("warnings", std::vector<std::string>{});
}

void to_json(json& j, const MetricsScrape& m) {
  j = m.error ? json{{"error", *m.error}} : json{{"samples", m.samples}};
}

void from_json(const json& j, MetricsScrape& m) {
  m = MetricsScrape{};
  m.error = optional_at<std::string>(j, "error");
  if (!m.error) {
    m.samples = j.value("samples", std::map<std::string, double>{});
  }
}

void to_json(json& j, const ServerCounters& c) {
  j = {{"at_start", c.at_start}, {"at_end", c.at_end}};
}

void from_json(const json& j, ServerCounters& c) {
  c = {j.value("at_start", json::object()).get<MetricsScrape>(),
       j.value("at_end", json::object()).get<MetricsScrape>()};
}

void to_json(json& j, const PromptCacheSettings& s) {
  j = {{"cache_reuse", flag_json(s.cache_reuse)}, {"cache_ram_mib", flag_json(s.cache_ram_mib)}};
}

void from_json(const json& j, PromptCacheSettings& s) {
  s = {flag_from(j.value("cache_reuse", json())), flag_from(j.value("cache_ram_mib", json()))};
}

void to_json(json& j, const Percentiles& p) {
  j = {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"n", p.n}};
}

void from_json(const json& j, Percentiles& p) {
  p = {j.value("p50", 0.0), j.value("p90", 0.0), j.value("p99", 0.0), j.value("n", std::size_t{0})};
}

void to_json(json& j, const ConcurrencyStats& s) {
  j = {{"calls", s.calls},   {"ok", s.ok},         {"refused", s.refused},
       {"failed", s.failed}, {"span_s", s.span_s}, {"max_in_flight", s.max_in_flight}};
  put_optional(j, "prompt_tok_per_s", s.prompt_tok_per_s);
  put_optional(j, "decode_tok_per_s", s.decode_tok_per_s);
  put_optional(j, "ttft_ms", s.ttft_ms);
  put_optional(j, "itl_ms", s.itl_ms);
}

void from_json(const json& j, ConcurrencyStats& s) {
  s.calls = j.value("calls", 0);
  s.ok = j.value("ok", 0);
  s.refused = j.value("refused", 0);
  s.failed = j.value("failed", 0);
  s.span_s = j.value("span_s", 0.0);
  s.max_in_flight = j.value("max_in_flight", 0);
  s.prompt_tok_per_s = optional_at<double>(j, "prompt_tok_per_s");
  s.decode_tok_per_s = optional_at<double>(j, "decode_tok_per_s");
  s.ttft_ms = optional_at<Percentiles>(j, "ttft_ms");
  s.itl_ms = optional_at<Percentiles>(j, "itl_ms");
}

void to_json(json& j, const ServerQueue& q) {
  j = {{"calls", q.calls}};
  if (!q.waits) {
    return;
  }
  const ServerQueue::Waits& w = *q.waits;
  j["service_ms_p50"] = w.service_ms_p50;
  j["waited"] = w.waited;
  j["max_in_flight"] = w.max_in_flight;
  j["served_at_once"] = w.served_at_once;
  j["load_duration_reported"] = w.load_duration_reported;
  put_optional(j, "wait_ms", w.wait_ms);
  put_optional(j, "waited_ms", w.waited_ms);
  put_optional(j, "load_duration_ms", w.load_duration_ms);
}

void from_json(const json& j, ServerQueue& q) {
  q = ServerQueue{j.value("calls", 0), std::nullopt};
  if (!j.contains("waited")) {
    return;
  }
  q.waits = ServerQueue::Waits{j.value("service_ms_p50", 0.0),
                               j.at("waited").get<std::size_t>(),
                               j.value("max_in_flight", 0),
                               j.value("served_at_once", 0),
                               j.value("load_duration_reported", std::size_t{0}),
                               optional_at<Percentiles>(j, "wait_ms"),
                               optional_at<Percentiles>(j, "waited_ms"),
                               optional_at<Percentiles>(j, "load_duration_ms")};
}

}  // namespace kvbench::results
