// `kvbench trace analyze`: a trace's reuse arithmetic (harness/workloads/trace) gathered into one
// JSON document and rendered as Markdown, with each hit rate's definition beside its number.

#include "harness/cli/trace_cmd.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "harness/cli/output.h"
#include "harness/cli/trace_merge.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/text.h"
#include "harness/report/table.h"
#include "harness/workloads/trace/reuse.h"
#include "harness/workloads/trace/synth.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::cli {

namespace {

namespace wt = workloads::trace;
using nlohmann::json;

constexpr int kWorkingSetPoints = 10;

constexpr const char* kInfiniteDefinition =
    "every block sent before stays cached, so a request reuses the longest prefix of its blocks "
    "that earlier requests sent";
constexpr const char* kLruDefinition =
    "a request reuses the longest prefix of its blocks present before it is sent; then its blocks "
    "become the most recently used and the least recently used beyond the capacity are evicted";
constexpr const char* kWorkingSetDefinition =
    "the distinct blocks referenced by the requests that arrived up to each of ten evenly spaced "
    "times from the first arrival to the last (times count from the first arrival), and that "
    "count divided by each capacity";

json rates_json(const wt::HitRates& r) {
  return {{"tokens", r.tokens.rate},
          {"blocks", r.blocks.rate},
          {"per_request_mean", r.per_request_mean.rate}};
}

// The distinct blocks of the requests that arrived by each of ten evenly spaced times (one time
// where all requests arrive at once). Requests are in arrival order.
json working_set_json(const wt::Trace& t, const std::vector<std::size_t>& capacities) {
  const double first = t.requests.front().due_ms;
  const double last = t.requests.back().due_ms;
  const int points = last > first ? kWorkingSetPoints : 1;
  std::unordered_set<std::uint64_t> seen;
  std::size_t arrived = 0;
  json out = json::array();
  for (int k = 1; k <= points; ++k) {
    const double at = k == points ? last : first + (last - first) * k / points;
    while (arrived < t.requests.size() && t.requests[arrived].due_ms <= at) {
      const auto& blocks = t.requests[arrived].blocks;
      seen.insert(blocks.begin(), blocks.end());
      ++arrived;
    }
    json against = json::array();
    for (const std::size_t c : capacities) {
      against.push_back({{"capacity_blocks", c},
                         {"multiple", static_cast<double>(seen.size()) / static_cast<double>(c)}});
    }
    out.push_back({{"at_ms", at - first},
                   {"requests", arrived},
                   {"unique_blocks", seen.size()},
                   {"of_capacity", std::move(against)}});
  }
  return out;
}

json definitions_json(const wt::HitRates& r) {
  return {{"tokens", r.tokens.definition},
          {"blocks", r.blocks.definition},
          {"per_request_mean", r.per_request_mean.definition},
          {"infinite", kInfiniteDefinition},
          {"lru", kLruDefinition},
          {"working_set", kWorkingSetDefinition}};
}

wt::Format trace_format_of(const std::string& name) {
  const auto f = wt::format_named(name);
  if (!f) {
    throw InputError(
        fmt::format("kvbench trace analyze: --trace-format: '{}' is not a trace format: expected "
                    "mooncake, bailian or weka",
                    name));
  }
  return *f;
}

std::string percent(const json& rate) {
  return fmt::format("{:.1f} %", rate.get<double>() * 100);
}

void write_infinite_section(std::ostream& out, const json& a) {
  const json& rates = a["hit_rate"]["infinite"];
  const json& defs = a["definitions"];
  out << "## Hit rates: infinite cache\n\n"
      << "An infinite cache: " << defs["infinite"].get<std::string>() << ".\n\n";
  report::Table t({{"hit rate", false}, {"value", true}, {"definition", false}});
  t.add_row({"by blocks", percent(rates["blocks"]), defs["blocks"].get<std::string>()});
  t.add_row({"by tokens", percent(rates["tokens"]), defs["tokens"].get<std::string>()});
  t.add_row({"per-request mean", percent(rates["per_request_mean"]),
             defs["per_request_mean"].get<std::string>()});
  t.write_markdown(out);
  out << "\n";
}

void write_lru_section(std::ostream& out, const json& a) {
  out << "## Hit rates: block LRU\n\n"
      << "A block LRU of a given capacity: " << a["definitions"]["lru"].get<std::string>()
      << ".\n\n";
  if (a["hit_rate"]["lru"].empty()) {
    out << "No capacity was given (--capacity-blocks N,...).\n\n";
    return;
  }
  report::Table t({{"capacity (blocks)", true},
                   {"capacity (tokens)", true},
                   {"by blocks", true},
                   {"by tokens", true},
                   {"per-request mean", true}});
  const auto block = a["block_tokens"].get<std::uint64_t>();
  for (const json& row : a["hit_rate"]["lru"]) {
    const auto c = row["capacity_blocks"].get<std::uint64_t>();
    t.add_row({grouped(c), grouped(c * block), percent(row["blocks"]), percent(row["tokens"]),
               percent(row["per_request_mean"])});
  }
  t.write_markdown(out);
  out << "\n";
}

void write_working_set_section(std::ostream& out, const json& a) {
  out << "## Working set over time\n\n"
      << "The working set: " << a["definitions"]["working_set"].get<std::string>() << ".\n\n";
  std::vector<report::Table::Column> columns{
      {"time (s)", true}, {"requests", true}, {"unique blocks", true}};
  for (const json& c : a["hit_rate"]["lru"]) {
    columns.push_back(
        {fmt::format("/ {} blocks", grouped(c["capacity_blocks"].get<std::uint64_t>())), true});
  }
  report::Table t(std::move(columns));
  for (const json& p : a["working_set"]) {
    std::vector<std::string> row{fmt::format("{:.1f}", p["at_ms"].get<double>() / 1000.0),
                                 grouped(p["requests"].get<std::uint64_t>()),
                                 grouped(p["unique_blocks"].get<std::uint64_t>())};
    for (const json& c : p["of_capacity"]) {
      row.push_back(fmt::format("{:.2f}", c["multiple"].get<double>()));
    }
    t.add_row(std::move(row));
  }
  t.write_markdown(out);
}

}  // namespace

json analyze_trace(const TraceAnalyzeOptions& o) {
  const wt::Format format = trace_format_of(o.trace_format);
  for (const std::size_t c : o.capacity_blocks) {
    if (c == 0) {
      throw InputError("kvbench trace analyze: --capacity-blocks: expected 1 block or more, got 0");
    }
  }
  const std::optional<int> block =
      o.block_tokens > 0 ? std::optional<int>(o.block_tokens) : std::nullopt;
  const wt::Trace t = wt::read_trace_file(o.file, format, block);
  long long blocks = 0;
  long long input_tokens = 0;
  std::unordered_set<std::uint64_t> unique;
  for (const auto& r : t.requests) {
    blocks += static_cast<long long>(r.blocks.size());
    input_tokens += r.input_tokens;
    unique.insert(r.blocks.begin(), r.blocks.end());
  }
  const wt::HitRates infinite = wt::hit_rates(t, wt::infinite_reuse(t));
  json lru = json::array();
  for (const std::size_t c : o.capacity_blocks) {
    json row = rates_json(wt::hit_rates(t, wt::lru_reuse(t, c)));
    row["capacity_blocks"] = c;
    lru.push_back(std::move(row));
  }
  return {{"schema", "kvbench.trace-analysis"},
          {"schema_version", 1},
          {"file", o.file},
          {"format", wt::format_name(format)},
          {"block_tokens", t.block_tokens},
          {"requests", t.requests.size()},
          {"span_ms", t.requests.back().due_ms - t.requests.front().due_ms},
          {"input_tokens", input_tokens},
          {"blocks", blocks},
          {"unique_blocks", unique.size()},
          {"hit_rate", {{"infinite", rates_json(infinite)}, {"lru", std::move(lru)}}},
          {"working_set", working_set_json(t, o.capacity_blocks)},
          {"definitions", definitions_json(infinite)}};
}

void write_trace_analysis_markdown(std::ostream& out, const json& a) {
  out << "# Trace: " << a["file"].get<std::string>() << "\n\n"
      << fmt::format("{} format, {}-token blocks; {} requests over {:.1f} s.\n\n",
                     a["format"].get<std::string>(), a["block_tokens"].get<int>(),
                     grouped(a["requests"].get<std::uint64_t>()),
                     a["span_ms"].get<double>() / 1000.0);
  report::Table t({{"", false}, {"count", true}});
  t.add_row({"requests", grouped(a["requests"].get<std::uint64_t>())});
  t.add_row({"input tokens", grouped(a["input_tokens"].get<std::uint64_t>())});
  t.add_row({"blocks sent", grouped(a["blocks"].get<std::uint64_t>())});
  t.add_row({"unique blocks", grouped(a["unique_blocks"].get<std::uint64_t>())});
  t.write_markdown(out);
  out << "\n";
  write_infinite_section(out, a);
  write_lru_section(out, a);
  write_working_set_section(out, a);
}

namespace {

// `kvbench trace synth`: a synthetic trace in the Mooncake format.
void add_synth(CLI::App& trace) {
  auto o = std::make_shared<wt::SynthOptions>();
  auto out = std::make_shared<std::string>();
  auto* synth = trace.add_subcommand(
      "synth",
      "A synthetic trace in the Mooncake format: groups of conversations behind shared system "
      "prompts, groups drawn by a Zipf law; --working-set sizes the groups' system prompts as a "
      "multiple of --capacity-blocks");
  synth->footer(
      "Example:\n"
      "  for w in 0.5 1 2 4; do kvbench trace synth --working-set $w --capacity-blocks 64 "
      "-o ws-$w.jsonl; done\n");
  synth->add_option("--groups", o->groups, "Groups (system prompts)")->capture_default_str();
  synth->add_option("--per-group", o->per_group, "Conversations per group")->capture_default_str();
  synth->add_option("--system-tokens", o->system_tokens, "Tokens of a group's system prompt")
      ->capture_default_str();
  synth->add_option("--question-tokens", o->question_tokens, "Tokens a turn adds")
      ->capture_default_str();
  synth->add_option("--turns", o->turns, "Turns per conversation")->capture_default_str();
  synth->add_option("--zipf", o->zipf, "Zipf exponent of the groups' popularity (0: uniform)")
      ->capture_default_str();
  synth->add_option("--block-tokens", o->block_tokens, "Tokens per block")->capture_default_str();
  synth->add_option("--output-tokens", o->output_tokens, "Every request's output length")
      ->capture_default_str();
  synth->add_option("--gap-ms", o->gap_ms, "Milliseconds between arrivals")->capture_default_str();
  synth->add_option("--working-set", o->working_set,
                    "The groups' system blocks as a multiple of --capacity-blocks (sets the "
                    "number of groups)");
  synth->add_option("--capacity-blocks", o->capacity_blocks, "The cache's capacity, in blocks");
  synth->add_option("--seed", o->seed, "Seed of the draws")->capture_default_str();
  synth->add_option("-o,--output", *out, "Write the trace here (default: stdout)");
  synth->callback([o, out] {
    const wt::Trace t = wt::synth_trace(*o);
    if (out->empty()) {
      wt::write_mooncake(std::cout, t);
      return;
    }
    std::ostringstream text;
    wt::write_mooncake(text, t);
    AtomicFileWriter file(*out);
    file.write(text.str());
    file.commit();
  });
}

}  // namespace

void setup_trace_command(CLI::App& app) {
  auto* trace = app.add_subcommand(
      "trace", "What a request trace could reuse, without a server, and synthetic traces");
  trace->require_subcommand(1);
  trace->footer(
      "Example:\n"
      "  kvbench trace analyze conversation.jsonl --capacity-blocks 1000,4000   an LRU of each "
      "size\n");
  auto o = std::make_shared<TraceAnalyzeOptions>();
  auto* analyze = trace->add_subcommand(
      "analyze",
      "A trace's requests, blocks and unique blocks, its infinite-cache hit rates by tokens, by "
      "blocks and as a per-request mean, a block LRU's at each capacity, and its working set "
      "over time");
  analyze->footer(
      "Example:\n"
      "  kvbench trace analyze conversation.jsonl --capacity-blocks 1000,4000 --format json\n");
  analyze
      ->add_option("file", o->file,
                   "Trace file: .jsonl, or compressed as .jsonl.gz, .jsonl.xz or .jsonl.zst (read "
                   "as it comes, never unpacked to disk)")
      ->required()
      ->type_name("FILE");
  analyze
      ->add_option("--trace-format", o->trace_format,
                   "The trace's format: mooncake (512-token blocks), bailian (16) or weka (the "
                   "document's block_size)")
      ->capture_default_str();
  analyze
      ->add_option("--block-tokens", o->block_tokens,
                   "Tokens per block, for a mooncake or bailian trace cut at another size: the "
                   "block count each request must have and the tokens a reused block counts "
                   "(hit rates by tokens) follow it; blocks and per-request rates do not change")
      ->check(CLI::Range(1, 1 << 20));
  analyze
      ->add_option("--capacity-blocks", o->capacity_blocks,
                   "Block-LRU capacities in blocks, comma-separated (hit rates of each; the "
                   "working set against each)")
      ->delimiter(',')
      ->type_name("N,...");
  auto out = std::make_shared<OutputOptions>();
  add_output_options(analyze, *out, {"md", "json"});
  add_synth(*trace);
  add_trace_merge(*trace);
  analyze->callback([o, out] {
    const auto targets = resolve_outputs(*out, {"md", "json"}, "trace analyze");
    const json a = analyze_trace(*o);
    write_outputs(targets, [&](std::ostream& stream, const std::string& format) {
      if (format == "json") {
        stream << a.dump(2) << "\n";
      } else {
        write_trace_analysis_markdown(stream, a);
      }
    });
  });
}

}  // namespace kvbench::cli
