// `kvbench trace merge`: the shards of a trace replayed on many hosts (kvbench run --trace-shard
// K/N), joined into one per-request table with its hit rates, and what crossed shards: blocks
// that families on different hosts share, and the infinite-cache reuse one host would have had
// from them.

#include "harness/cli/trace_merge.h"

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/scenario_workload.h"
#include "harness/workloads/trace/report_trace.h"
#include "harness/workloads/trace/reuse.h"

namespace kvbench::cli {

namespace {

namespace wt = workloads::trace;
using nlohmann::json;
using workloads::replay_record;

struct Shard {
  std::string run_dir;
  workloads::TraceReplay trace;
  std::vector<CallRecord> calls;  // its replayed requests
};

Shard read_shard(const std::string& run_dir) {
  auto loaded = results::load_run(run_dir);
  const auto s = scenario::parse_scenario(loaded.run.scenario.dump(),
                                          (std::filesystem::path(run_dir) / "run.json").string());
  const auto* t = workloads::as<workloads::TraceReplay>(s);
  if (t == nullptr) {
    throw InputError(
        fmt::format("{}: not a trace replay (its scenario's workload is no trace)", run_dir));
  }
  Shard out{run_dir, *t, {}};
  for (auto& c : loaded.calls) {
    if (replay_record(c) != nullptr && c.block == 0) {  // the first server block of each shard
      out.calls.push_back(std::move(c));
    }
  }
  return out;
}

// The scenario's trace settings but the shard, and the file by its name (hosts keep it in
// folders of their own): what every shard must share. The trace's own figures (whole_trace) stay.
json without_shard(const json& scenario) {
  json t = scenario.value("workload", json::object()).value("trace", json::object());
  t.erase("shard");
  t["file"] = std::filesystem::path(t.value("file", "")).filename().string();
  return t;
}

void check_shards(const std::vector<Shard>& shards, const std::vector<json>& specs) {
  std::set<int> seen;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& t = shards[i].trace;
    if (specs[i] != specs[0]) {
      throw InputError(
          fmt::format("{}: another trace replay than {} (file, selection, scale or "
                      "timing differ)",
                      shards[i].run_dir, shards[0].run_dir));
    }
    if (t.shard_count != shards[0].trace.shard_count) {
      throw InputError(fmt::format("{}: shard {} of {}, where {} is of {}", shards[i].run_dir,
                                   t.shard_index, t.shard_count, shards[0].run_dir,
                                   shards[0].trace.shard_count));
    }
    if (!seen.insert(t.shard_index).second) {
      throw InputError(
          fmt::format("{}: shard {} is given twice", shards[i].run_dir, t.shard_index));
    }
  }
}

json rates_of(const std::optional<report::TraceRates>& r) {
  return r ? json{{"tokens", r->tokens},
                  {"blocks", r->blocks},
                  {"per_request_mean", r->per_request_mean}}
           : json(nullptr);
}

// The one-host replay's rows, each from its shard's record; `crossed` and `one_host_tokens` sum
// the crossed and the one-host infinite tokens, `missing` counts the rows no shard had.
json merged_rows(const wt::Trace& all, const std::vector<wt::Reuse>& one_host,
                 const std::vector<int>& shard_of,
                 const std::map<int, const CallRecord*>& record_of, long long& crossed,
                 long long& one_host_tokens, int& missing) {
  json rows = json::array();
  for (std::size_t i = 0; i < all.requests.size(); ++i) {
    const auto it = record_of.find(static_cast<int>(i));
    one_host_tokens += one_host[i].tokens;
    if (it == record_of.end()) {
      ++missing;
      continue;
    }
    const CallRecord& c = *it->second;
    const long long x = one_host[i].tokens - replay_record(c)->infinite_tokens;
    crossed += x;
    const auto optional = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    rows.push_back(
        {{"index", i},
         {"shard", shard_of[i]},
         {"due_ms", all.requests[i].due_ms},
         {"sent_ms", optional(replay_record(c)->sent_ms)},
         {"input_tokens", replay_record(c)->input_tokens},
         {"one_host_infinite_tokens", one_host[i].tokens},
         {"predicted_infinite_tokens", replay_record(c)->infinite_tokens},
         {"crossed_tokens", x},
         {"predicted_tokens", optional(report::predicted_reuse(*replay_record(c)))},
         {"reused_tokens", optional(report::reported_reuse(c))},
         {"loss", replay_record(c)->loss.empty() ? json(nullptr) : json(replay_record(c)->loss)},
         {"mismatch",
          replay_record(c)->mismatch.empty() ? json(nullptr) : json(replay_record(c)->mismatch)}});
  }
  return rows;
}

}  // namespace

json merge_trace_shards(const std::vector<std::string>& run_dirs) {
  if (run_dirs.empty()) {
    throw InputError("kvbench trace merge: give the run folders of the shards");
  }
  std::vector<Shard> shards;
  std::vector<json> specs;
  for (const auto& d : run_dirs) {
    shards.push_back(read_shard(d));
    specs.push_back(without_shard(results::load_run(d).run.scenario));
  }
  check_shards(shards, specs);
  const wt::Trace& all = *(shards[0].trace.all ? shards[0].trace.all : shards[0].trace.requests);
  const auto one_host = wt::infinite_reuse(all);
  // Each request's shard, and each block's shards.
  std::vector<int> shard_of(all.requests.size(), -1);
  std::map<int, const CallRecord*> record_of;
  std::vector<const CallRecord*> merged;
  for (const auto& sh : shards) {
    for (std::size_t i = 0; i < sh.trace.requests->requests.size(); ++i) {
      shard_of[static_cast<std::size_t>(sh.trace.index_of(i))] = sh.trace.shard_index;
    }
    for (const auto& c : sh.calls) {
      record_of[replay_record(c)->index] = &c;
      merged.push_back(&c);
    }
  }
  std::map<std::uint64_t, std::set<int>> block_shards;
  for (std::size_t i = 0; i < all.requests.size(); ++i) {
    for (const auto b : all.requests[i].blocks) {
      if (shard_of[i] >= 0) {
        block_shards[b].insert(shard_of[i]);
      }
    }
  }
  long long shared_blocks = 0;
  for (const auto& [b, in] : block_shards) {
    shared_blocks += in.size() > 1 ? 1 : 0;
  }
  long long crossed_tokens = 0;
  long long one_host_tokens = 0;
  int missing = 0;
  const json rows =
      merged_rows(all, one_host, shard_of, record_of, crossed_tokens, one_host_tokens, missing);
  const auto whole = wt::hit_rates(all, one_host);
  json out = {
      {"schema", "kvbench.trace-merge"},
      {"schema_version", 1},
      {"runs", run_dirs},
      {"shard_count", shards[0].trace.shard_count},
      {"shards_given", shards.size()},
      {"requests", all.requests.size()},
      {"requests_missing", missing},
      {"hit_rate",
       {{"one_host_infinite",
         {{"tokens", whole.tokens.rate},
          {"blocks", whole.blocks.rate},
          {"per_request_mean", whole.per_request_mean.rate}}},
        {"infinite", rates_of(report::trace_rates(merged, report::TraceReuseKind::infinite))},
        {"predicted", rates_of(report::trace_rates(merged, report::TraceReuseKind::predicted))},
        {"actual", rates_of(report::trace_rates(merged, report::TraceReuseKind::actual))}}},
      {"crossed",
       {{"shared_blocks", shared_blocks},
        {"tokens", crossed_tokens},
        {"share_of_one_host_reuse",
         one_host_tokens == 0
             ? 0.0
             : static_cast<double>(crossed_tokens) / static_cast<double>(one_host_tokens)}}},
      {"rows", rows}};
  return out;
}

void write_trace_merge_markdown(std::ostream& out, const json& m) {
  out << fmt::format("# Trace merge: {} of {} shards\n\n{} requests", m["shards_given"].get<int>(),
                     m["shard_count"].get<int>(), m["requests"].get<int>());
  if (m["requests_missing"].get<int>() > 0) {
    out << fmt::format(", {} of them in no shard given", m["requests_missing"].get<int>());
  }
  out << ".\n\n| hit rate | by tokens | by blocks | per-request mean |\n|---|---:|---:|---:|\n";
  const auto row = [&](const char* name, const json& r) {
    if (r.is_null()) {
      out << fmt::format("| {} | - | - | - |\n", name);
      return;
    }
    out << fmt::format("| {} | {:.1f} % | {:.1f} % | {:.1f} % |\n", name,
                       100 * r["tokens"].get<double>(), 100 * r["blocks"].get<double>(),
                       100 * r["per_request_mean"].get<double>());
  };
  const json& h = m["hit_rate"];
  row("infinite cache, one host", h["one_host_infinite"]);
  row("infinite cache, each shard on its own", h["infinite"]);
  row("the servers' policy (predicted)", h["predicted"]);
  row("the servers' report (actual)", h["actual"]);
  out << "\n- by tokens: reused tokens / input tokens; by blocks: reused blocks / blocks sent; "
         "per-request mean: the mean over requests of each request's reused blocks / its "
         "blocks\n";
  const json& x = m["crossed"];
  out << fmt::format(
      "\nWhat crossed shards: {} block(s) shared by families on different hosts; one host "
      "would have reused {} more tokens from them ({:.1f} % of its infinite-cache reuse).\n",
      x["shared_blocks"].get<long long>(), x["tokens"].get<long long>(),
      100 * x["share_of_one_host_reuse"].get<double>());
  out << "\n| index | shard | due ms | input | one host infinite | shard infinite | crossed | "
         "predicted | reused | loss | mismatch |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
         "---|---|\n";
  const auto cell = [](const json& v) {
    return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
  };
  for (const auto& r : m["rows"]) {
    out << fmt::format("| {} | {} | {:.0f} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       cell(r["index"]), cell(r["shard"]), r["due_ms"].get<double>(),
                       cell(r["input_tokens"]), cell(r["one_host_infinite_tokens"]),
                       cell(r["predicted_infinite_tokens"]), cell(r["crossed_tokens"]),
                       cell(r["predicted_tokens"]), cell(r["reused_tokens"]), cell(r["loss"]),
                       cell(r["mismatch"]));
  }
}

void add_trace_merge(CLI::App& trace) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto* merge = trace.add_subcommand(
      "merge",
      "The shards of a trace replayed on many hosts (kvbench run --trace-shard K/N) as one "
      "per-request table with its hit rates, and what crossed shards");
  merge->footer("Example:\n  kvbench trace merge results/*-shard0 results/*-shard1 -o merged.md\n");
  merge->add_option("runs", *dirs, "The shards' run folders")->required()->type_name("RUN_DIR");
  auto out = std::make_shared<OutputOptions>();
  add_output_options(merge, *out, {"md", "json"});
  merge->callback([dirs, out] {
    const auto targets = resolve_outputs(*out, {"md", "json"}, "trace merge");
    const json m = merge_trace_shards(*dirs);
    write_outputs(targets, [&](std::ostream& stream, const std::string& format) {
      if (format == "json") {
        stream << m.dump(2) << "\n";
      } else {
        write_trace_merge_markdown(stream, m);
      }
    });
  });
}

}  // namespace kvbench::cli
