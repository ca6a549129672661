// The trace workload in the scenario layer: its settings, the trace read, chosen and scaled while
// the scenario is parsed (so a bad trace is a bad scenario: exit 2 before any server starts), its
// rules against the rest of the scenario, and what run.json records of it.

#include <filesystem>
#include <map>

#include "harness/core/error.h"
#include "harness/scenario/parse_detail.h"
#include "harness/workloads/trace/reuse.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

using nlohmann::json;
using scenario::detail::Checker;

namespace {

// A number in [lo, hi] at `path`, or nullopt with the problem named.
std::optional<double> number(Checker& c, const json& v, const std::string& path, double lo,
                             double hi, const char* what) {
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi) {
    c.problem(path, fmt::format("expected {}, got {}", what, Checker::describe(v)));
    return std::nullopt;
  }
  return v.get<double>();
}

bool object_at(Checker& c, const json& v, const std::string& path, const char* example) {
  if (!v.is_object()) {
    c.problem(path,
              fmt::format("expected an object like {}, got {}", example, Checker::describe(v)));
    return false;
  }
  return true;
}

void parse_window(Checker& c, const json& v, const std::string& path, trace::Window& w) {
  if (!object_at(c, v, path, "{\"first\": 0, \"count\": 200}")) {
    return;
  }
  c.keys(v, path, {"first", "count"});
  if (v.contains("first")) {
    w.first = static_cast<std::size_t>(
        c.integer(v["first"], Checker::join(path, "first"), 0, 100000000).value_or(0));
  }
  if (v.contains("count")) {
    if (const auto n = c.integer(v["count"], Checker::join(path, "count"), 1, 100000000)) {
      w.count = static_cast<std::size_t>(*n);
    }
  }
}

void parse_sample(Checker& c, const json& v, const std::string& path,
                  std::optional<trace::Sample>& out) {
  if (!object_at(c, v, path, "{\"families\": 20, \"seed\": 1}")) {
    return;
  }
  c.keys(v, path, {"families", "seed"});
  trace::Sample s;
  if (!v.contains("families")) {
    c.problem(Checker::join(path, "families"),
              "missing: how many prefix families (requests sharing their first two blocks) "
              "to replay");
    return;
  }
  s.families = static_cast<std::size_t>(
      c.integer(v["families"], Checker::join(path, "families"), 1, 1000000).value_or(1));
  if (v.contains("seed")) {
    s.seed = static_cast<std::uint64_t>(
        c.integer(v["seed"], Checker::join(path, "seed"), 0, 2147483647).value_or(1));
  }
  out = s;
}

void parse_scale(Checker& c, const json& v, const std::string& path, trace::Scale& s) {
  if (!object_at(c, v, path, "{\"tokens\": 0.0625, \"time\": 10}")) {
    return;
  }
  c.keys(v, path, {"tokens", "time"});
  if (v.contains("tokens")) {
    s.tokens = number(c, v["tokens"], Checker::join(path, "tokens"), 1e-6, 64,
                      "a factor in (0, 64] for the block size and the lengths")
                   .value_or(1);
  }
  if (v.contains("time")) {
    s.time = number(c, v["time"], Checker::join(path, "time"), 1e-6, 1e6,
                    "a factor > 0 that divides the gaps between arrivals")
                 .value_or(1);
  }
}

void parse_timing(Checker& c, const json& v, const std::string& path, TraceReplay& t) {
  const auto s = c.string(v, path, false);
  if (!s) {
    return;
  }
  if (*s != "schedule" && *s != "closed") {
    c.problem(path, fmt::format("'{}': expected \"schedule\" (each request at its arrival time) "
                                "or \"closed\" (the next as soon as a stream is free)",
                                *s));
    return;
  }
  t.closed = *s == "closed";
}

// The trace read from disk, its requests chosen and scaled; problems name `path`.file, but for a
// `recorded` run's scenario, which reads without its file (TraceReplay::unread).
void load(Checker& c, const std::string& path, TraceReplay& t, bool recorded) {
  std::filesystem::path file(t.file);
  if (file.is_relative()) {
    file = std::filesystem::path(c.source()).parent_path() / file;
  }
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(file, ec);
  t.path = (ec ? file : absolute).lexically_normal().string();
  try {
    auto whole =
        std::make_shared<trace::Trace>(trace::read_trace_file(t.path, t.format, t.block_tokens));
    // The families are sampled over the whole trace, whose reuse is far apart; the window then
    // keeps a stretch of what was chosen.
    trace::Trace chosen = t.sample ? trace::sample_families(*whole, *t.sample) : *whole;
    trace::Window window = t.window;
    if (t.sample && window.count && window.first < chosen.requests.size()) {
      // At most `count` of the sample's requests: its size is the sample's, not the user's.
      window.count = std::min(*window.count, chosen.requests.size() - window.first);
    }
    chosen = trace::take_window(chosen, window);
    t.requests = std::make_shared<const trace::Trace>(trace::scale_trace(chosen, t.scale));
    t.whole = std::move(whole);
  } catch (const InputError& e) {
    if (recorded) {  // a run's own scenario, read on a machine without the file
      t.unread = e.what();
      return;
    }
    c.problem(Checker::join(path, "file"), e.what());
  }
}

}  // namespace

void shard(TraceReplay& t, int index, int count) {
  if (count < 1 || index < 0 || index >= count) {
    throw InputError(fmt::format(
        "--trace-shard {}/{}: expected K/N with N >= 1 and K from 0 to N - 1", index, count));
  }
  if (!t.all) {
    t.all = t.requests;
  }
  // Families by first arrival: a request of fewer than two blocks is a family of its own.
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> family;
  auto kept = std::make_shared<trace::Trace>(*t.all);
  kept->requests.clear();
  t.indices.clear();
  int families = 0;
  for (std::size_t i = 0; i < t.all->requests.size(); ++i) {
    const auto& r = t.all->requests[i];
    int f = 0;
    if (const auto key = trace::family_key(r)) {
      f = family.try_emplace(*key, families).first->second;
      families += f == families ? 1 : 0;
    } else {
      f = families++;
    }
    if (f % count == index) {
      kept->requests.push_back(r);
      t.indices.push_back(static_cast<int>(i));
    }
  }
  t.requests = std::move(kept);
  t.shard_index = index;
  t.shard_count = count;
}

void parse(Checker& c, const json& v, const std::string& path, TraceReplay& t) {
  if (!object_at(c, v, path, "{\"file\": \"trace.jsonl\", \"format\": \"mooncake\"}")) {
    return;
  }
  c.keys(v, path,
         {"file", "format", "block_tokens", "window", "sample", "scale", "timing", "concurrency",
          "slots", "capacity_blocks", "shard", "whole_trace"});
  const auto at = [&](const char* key) { return Checker::join(path, key); };
  if (!v.contains("file")) {
    c.problem(at("file"), "missing: the trace file, relative to the scenario file");
    return;
  }
  t.file = c.string(v["file"], at("file"), false).value_or("");
  if (v.contains("format")) {
    const auto name = c.string(v["format"], at("format"), false).value_or("");
    if (const auto f = trace::format_named(name)) {
      t.format = *f;
    } else if (!name.empty()) {
      c.problem(at("format"),
                fmt::format("'{}': expected \"mooncake\", \"bailian\" or \"weka\"", name));
    }
  }
  if (v.contains("block_tokens")) {
    t.block_tokens = c.integer(v["block_tokens"], at("block_tokens"), 1, 1 << 20);
  }
  if (v.contains("window")) {
    parse_window(c, v["window"], at("window"), t.window);
  }
  if (v.contains("sample")) {
    parse_sample(c, v["sample"], at("sample"), t.sample);
  }
  if (v.contains("scale")) {
    parse_scale(c, v["scale"], at("scale"), t.scale);
  }
  if (v.contains("timing")) {
    parse_timing(c, v["timing"], at("timing"), t);
  }
  if (v.contains("concurrency")) {
    t.concurrency = c.integer(v["concurrency"], at("concurrency"), 1, 256).value_or(1);
  }
  if (v.contains("slots")) {
    t.slots = c.integer(v["slots"], at("slots"), 1, 64).value_or(1);
  }
  if (v.contains("capacity_blocks")) {
    if (const auto n = c.integer(v["capacity_blocks"], at("capacity_blocks"), 1, 1000000000)) {
      t.capacity_blocks = static_cast<std::size_t>(*n);
    }
  }
  if (v.contains("whole_trace")) {
    t.whole_trace_json = v["whole_trace"].dump();
  }
  if (c.ok() && !t.file.empty() && c.reads_files()) {
    load(c, path, t, v.contains("whole_trace"));
  }
  if (v.contains("shard") && t.requests) {  // as run.json records a shard of a trace
    const json& sh = v["shard"];
    const int index = sh.is_object() && sh.contains("index")
                          ? c.integer(sh["index"], at("shard.index"), 0, 1 << 20).value_or(-1)
                          : -1;
    const int count = sh.is_object() && sh.contains("count")
                          ? c.integer(sh["count"], at("shard.count"), 1, 1 << 20).value_or(0)
                          : 0;
    if (index >= 0 && index < count) {
      shard(t, index, count);
    } else {
      c.problem(at("shard"), "expected {\"index\": K, \"count\": N} with K < N");
    }
  }
}

void check(Checker& c, const scenario::Scenario& s, const TraceReplay& t) {
  if (!t.requests) {
    return;
  }
  const std::string path = c.workload_path();
  if (s.server.kind == scenario::ServerKind::ollama) {
    c.problem("server.kind",
              "a trace's prompts must read as their planned blocks, checked with the server's "
              "tokenizer, and Ollama has no tokenizer endpoint: use kind \"llama-server\", "
              "\"openai\" or \"anthropic\"");
  }
  if (s.server.managed() && t.concurrency > t.slots) {
    c.problem(path + ".concurrency",
              fmt::format("{} requests in flight over {} slot{}: the server would queue what "
                          "kvbench cannot place; give slots >= concurrency",
                          t.concurrency, t.slots, t.slots == 1 ? "" : "s"));
  }
  if (t.capacity_blocks && !s.server.managed() && s.server.cache_rule.step < 2) {
    c.problem(path + ".capacity_blocks",
              "a pool in blocks needs the server's block size: give server.cache_rule.step (vLLM: "
              "16)");
  }
  if (t.capacity_blocks && s.server.managed()) {
    c.problem(path + ".capacity_blocks",
              "a block pool's size is for an attached block-cache server (vLLM, SGLang): a "
              "managed llama-server's capacity is its slots and --cache-ram");
  }
  int longest = 0;
  for (const auto& r : t.requests->requests) {
    longest = std::max(longest, r.input_tokens + r.output_tokens);
  }
  for (const int ctx : s.factors.num_ctx) {
    if (longest > ctx) {
      c.problem(path + ".scale.tokens",
                fmt::format("the longest request and its answer are {} tokens, more than "
                            "num_ctx {}: scale the tokens down or raise num_ctx",
                            longest, ctx));
      break;
    }
  }
}

// The file is recorded where it was read (absolute), so a resumed run reads the same trace.
void add_to_json(const TraceReplay& t, json& resolved) {
  resolved.erase("repeats");
  resolved.erase("max_tokens");
  json spec = {{"file", t.path},
               {"format", trace::format_name(t.format)},
               {"window", {{"first", t.window.first}}},
               {"scale", {{"tokens", t.scale.tokens}, {"time", t.scale.time}}},
               {"timing", t.closed ? "closed" : "schedule"},
               {"concurrency", t.concurrency},
               {"slots", t.slots}};
  if (t.window.count) {
    spec["window"]["count"] = *t.window.count;
  }
  if (t.sample) {
    spec["sample"] = {{"families", t.sample->families}, {"seed", t.sample->seed}};
  }
  if (t.block_tokens) {
    spec["block_tokens"] = *t.block_tokens;
  }
  if (t.capacity_blocks) {
    spec["capacity_blocks"] = *t.capacity_blocks;
  }
  if (t.shard_count > 1) {
    spec["shard"] = {{"index", t.shard_index}, {"count", t.shard_count}};
  }
  // What the report states beside the replayed requests' rates (read again from the file on a
  // resume, where this key is ignored).
  if (!t.whole && !t.whole_trace_json.empty()) {  // a recorded run read without its file
    spec["whole_trace"] = json::parse(t.whole_trace_json);
  } else if (t.whole) {
    const auto rates = trace::hit_rates(*t.whole, trace::infinite_reuse(*t.whole));
    spec["whole_trace"] = {{"requests", t.whole->requests.size()},
                           {"infinite_hit_rate",
                            {{"tokens", rates.tokens.rate},
                             {"blocks", rates.blocks.rate},
                             {"per_request_mean", rates.per_request_mean.rate}}}};
  }
  resolved["workload"] = {{"trace", std::move(spec)}};
}

}  // namespace kvbench::workloads
