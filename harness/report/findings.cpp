#include "harness/report/findings.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/text.h"
#include "harness/report/findings_text.h"

namespace kvbench::report {

namespace findings_text {

using analysis::Effect;

std::string grouped(long long v) {
  const std::string digits = kvbench::grouped(static_cast<std::uint64_t>(v < 0 ? -v : v));
  return fmt::format("{}{}", v < 0 ? "-" : "", digits);
}

std::string signed_number(double v) {
  return fmt::format("{}{}", v > 0 ? "+" : "", finding_number(v));
}

// "[a, b]" of an interval, in the findings' numbers.
std::string bracket(double lower, double upper) {
  return fmt::format("[{}, {}]", finding_number(lower), finding_number(upper));
}

// "4 rounds", "8 server starts": the units an interval rests on.
std::string units_of(const Effect& e) {
  const bool block = e.cluster_unit == "block";
  return fmt::format("{} {}{}", e.clusters, block ? "server start" : "round",
                     e.clusters == 1 ? "" : "s");
}

const Effect* find_effect(const RunReport& r, std::string_view metric, std::string_view term,
                          bool relative) {
  for (const auto& e : r.analysis.effects.effects) {
    if (e.metric == metric && e.term == term && e.relative == relative) {
      return &e;
    }
  }
  return nullptr;
}

// The effects of `metric` in one form whose term starts with `prefix` (a slope per level).
std::vector<const Effect*> effects_from(const RunReport& r, std::string_view metric,
                                        std::string_view prefix, bool relative) {
  std::vector<const Effect*> out;
  for (const auto& e : r.analysis.effects.effects) {
    if (e.metric == metric && e.relative == relative && e.term.starts_with(prefix)) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  if (parts.size() <= 1) {
    return parts.empty() ? "" : parts.front();
  }
  std::string out;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    out += (i == 0 ? "" : "; ") + parts[i];
  }
  return out + " and " + parts.back();
}

// The median of `metric` over the conditions at one prompt length.
std::optional<double> median_at(const RunReport& r, std::string_view metric, int prompt_tokens) {
  std::vector<double> v;
  for (const auto& c : r.conditions) {
    const auto* q = c.of(metric);
    if (c.prompt_tokens == prompt_tokens && q != nullptr && q->n > 0) {
      v.push_back(q->median);
    }
  }
  if (v.empty()) {
    return std::nullopt;
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace findings_text

namespace {

using analysis::Effect;
using nlohmann::json;
using namespace findings_text;

Finding measured(const RunReport& r) {
  const auto& run = r.run;
  const json server = run.server.is_object() ? run.server : json::object();
  // "version: 0.7.0 (build 11669, commit Debian)" says 0.7.0.
  std::string version = server.value("version", "");
  version = version.substr(0, version.find('\n'));
  if (version.starts_with("version: ")) {
    version = version.substr(9);
  }
  version = version.substr(0, version.find(' '));
  const json model = run.model.is_object() ? run.model : json::object();
  std::string what = server.value("kind", "a server");
  if (!version.empty()) {
    what += " " + version;
  }
  std::string where;
  if (run.machine) {
    where = fmt::format(" on {} ({} cores)", run.machine->cpu_model, run.machine->logical_cores);
  }
  std::vector<std::string> ranges;
  const auto lengths = distinct<int>(r.conditions, [](const auto& c) { return c.prompt_tokens; });
  if (!lengths.empty()) {
    ranges.push_back(lengths.size() == 1
                         ? fmt::format("prompts of {} tokens", grouped(lengths.front()))
                         : fmt::format("prompts of {} to {} tokens", grouped(lengths.front()),
                                       grouped(lengths.back())));
  }
  const auto ctx = distinct<int>(r.conditions, [](const auto& c) { return c.num_ctx; });
  if (!ctx.empty()) {
    std::vector<std::string> v;
    for (int n : ctx) {
      v.push_back(grouped(n));
    }
    ranges.push_back(fmt::format("num_ctx {}", fmt::join(v, ", ")));
  }
  const auto types =
      distinct<std::string>(r.conditions, [](const auto& c) { return c.cache_type; });
  if (!types.empty()) {
    ranges.push_back(fmt::format("cache {}", fmt::join(types, ", ")));
  }
  const auto variants =
      distinct<std::string>(r.conditions, [](const auto& c) { return c.variant; });
  if (variants.size() > 1) {
    ranges.push_back(fmt::format("variants {}", fmt::join(variants, ", ")));
  }
  const std::size_t timed = r.analysis.timed_ok;
  const std::size_t blocks = run.blocks.size();
  return {"measured",
          fmt::format("{} {} to {} with {}{}{}{}, in {} server start{}.",
                      grouped(static_cast<long long>(timed > 0 ? timed : r.calls.size())),
                      fmt::format("{}call{}", timed > 0 ? "timed " : "",
                                  (timed > 0 ? timed : r.calls.size()) == 1 ? "" : "s"),
                      what, model.value("name", model.value("path", "a model")), where,
                      ranges.empty() ? "" : ": ", fmt::join(ranges, ", "), blocks,
                      blocks == 1 ? "" : "s")};
}

std::optional<Finding> ttft(const RunReport& r) {
  const auto lengths = distinct<int>(r.conditions, [](const auto& c) { return c.prompt_tokens; });
  std::string range;
  if (lengths.size() > 1) {
    range =
        fmt::format(" between {} and {} tokens", grouped(lengths.front()), grouped(lengths.back()));
  }
  std::string body;
  if (const Effect* e = find_effect(r, "ttft_ms", "prompt_ktokens", false)) {
    body = fmt::format(
        "Time to first token grows by {} ms {} per 1,000 prompt tokens{} (95 % CI over {})",
        finding_number(e->estimate), bracket(e->ci.lower, e->ci.upper), range, units_of(*e));
  } else {
    const auto per_level = effects_from(r, "ttft_ms", "prompt_ktokens@", false);
    if (per_level.empty()) {
      return std::nullopt;
    }
    std::vector<std::string> parts;
    for (const Effect* level : per_level) {
      parts.push_back(fmt::format("{} ms {} at {}", finding_number(level->estimate),
                                  bracket(level->ci.lower, level->ci.upper),
                                  level->term.substr(level->term.find('@') + 1)));
    }
    body = fmt::format(
        "Time to first token grows per 1,000 prompt tokens{} by {} (95 % CIs over {} each: the "
        "settings' slopes differ, so no one slope stands for them)",
        range, joined(parts), units_of(*per_level.front()));
  }
  if (!lengths.empty()) {
    if (const auto longest = median_at(r, "ttft_ms", lengths.back())) {
      body += fmt::format("; a {}-token prompt waited {} ms for its first token (median)",
                          grouped(lengths.back()), finding_number(*longest));
    }
  }
  return Finding{"ttft", body + "."};
}

// "slows by 46.8 % [18.0, 65.4]" of a relative slope of a rate.
std::string rate_change(const Effect& e) {
  if (e.ci.upper < 0) {
    return fmt::format("slows by {} % {}", finding_number(-e.estimate),
                       bracket(-e.ci.upper, -e.ci.lower));
  }
  if (e.ci.lower > 0) {
    return fmt::format("speeds up by {} % {}", finding_number(e.estimate),
                       bracket(e.ci.lower, e.ci.upper));
  }
  return fmt::format("changes by {} % [{}, {}], a sign this run does not resolve,",
                     signed_number(e.estimate), signed_number(e.ci.lower),
                     signed_number(e.ci.upper));
}

std::optional<Finding> decode(const RunReport& r) {
  std::string body;
  if (const Effect* e = find_effect(r, "decode_tps", "prompt_ktokens", true)) {
    body = fmt::format("Decoding {} per 1,000 tokens of context (95 % CI over {})", rate_change(*e),
                       units_of(*e));
  } else {
    const auto per_level = effects_from(r, "decode_tps", "prompt_ktokens@", true);
    if (per_level.empty()) {
      return std::nullopt;
    }
    std::vector<std::string> parts;
    for (const Effect* level : per_level) {
      parts.push_back(fmt::format("{} at {}", rate_change(*level),
                                  level->term.substr(level->term.find('@') + 1)));
    }
    body = fmt::format("Per 1,000 tokens of context, decoding {} (95 % CIs over {} each)",
                       joined(parts), units_of(*per_level.front()));
  }
  const auto lengths = distinct<int>(r.conditions, [](const auto& c) { return c.prompt_tokens; });
  if (lengths.size() > 1) {
    const auto first = median_at(r, "decode_tps", lengths.front());
    const auto last = median_at(r, "decode_tps", lengths.back());
    if (first && last) {
      body += fmt::format("; medians {} tok/s after {} tokens, {} after {}", finding_number(*first),
                          grouped(lengths.front()), finding_number(*last), grouped(lengths.back()));
    }
  }
  return Finding{"decode", body + "."};
}

// A verdict's finding, its label and what it found, without its explanation.
std::string short_finding(const std::string& f) {
  const auto first = f.find(": ");
  const auto second = first == std::string::npos ? first : f.find(": ", first + 2);
  return f.substr(0, second);
}

// Whether the intervals cover the next server start, and what would where they do not.
std::string covers_sentence(const RunReport& r, const analysis::StartCover& c) {
  if (c.this_start == 0 && c.machine == 0) {
    return "no interval rests on server starts";
  }
  const bool attached = analysis::start_facts(r.run).one_start;
  if (c.this_start > 0) {
    const std::string what = c.machine == 0 ? "they cover" : "some cover";
    if (attached) {
      return what +
             " this server start only (an attached server is one start; a start-to-start "
             "component measured on this machine with `kvbench repeat --history H` and given "
             "with `run --history H` would cover the next)";
    }
    return fmt::format(
        "{} this server start only ({:g} start{} per setting: a start sets its own speed and "
        "slope; `\"block_repeats\": {}` in the scenario, or `kvbench repeat 10 SCENARIO "
        "--history H` once and `run --history H`, would cover the machine)",
        what, c.fewest_starts, c.fewest_starts == 1 ? "" : "s", analysis::kMinBlocksPerLevel);
  }
  if (c.borrowed > 0) {
    return fmt::format(
        "they cover the next server start on this machine ({} with the start-to-start spread "
        "measured here before, newest {})",
        c.borrowed == c.machine ? "each" : "some", c.measured);
  }
  // A run of seconds samples starts, not the machine's state over hours: measured on two VMs,
  // some slopes of four starts were too narrow for runs minutes later (results/README.md, "What
  // an interval covers").
  return fmt::format(
      "they cover the next server start on this machine while it is as it was during the run "
      "(each rests on {:g} server starts or more per setting; how far the machine moves over "
      "minutes and hours is in them once measured: `kvbench repeat 10 SCENARIO --history H`, then "
      "`run --history H`)",
      c.fewest_starts);
}

Finding trust(const RunReport& r) {
  const auto& v = r.analysis.verdict;
  const auto shortfall = shortfalls(r);
  std::string text;
  if (!shortfall.empty()) {
    text = fmt::format("short of the plan: {}.", shortfall.front());
  }
  if (!v.present) {
    if (text.empty()) {
      // A workload that keeps its server for all its calls has one start per setting: its
      // point is the server's cache across them.
      text = !r.workload.keeps_its_server
                 ? "no effect was estimated (too few timed calls or settings): the tables "
                   "describe this run only."
                 : fmt::format(
                       "no effect was estimated: the tables describe this run only, and its one "
                       "server start per setting (a {} keeps its server for all its calls: its "
                       "point is the server's cache across them).",
                       r.workload.key);
    }
    return {"trust", "How far to trust it: " + text};
  }
  std::vector<std::string> parts;
  parts.push_back(v.honest.ok
                      ? "the intervals are honest (each rests on the run's independent "
                        "units)"
                      : "the intervals may be too narrow: " +
                            (v.honest.findings.empty() ? std::string("see the verdict")
                                                       : short_finding(v.honest.findings.back())));
  parts.push_back(covers_sentence(r, v.cover));
  parts.push_back(v.precise.ok ? "every slope's sign is resolved"
                               : "some slopes' signs are not resolved (more rounds narrow "
                                 "them)");
  parts.push_back(v.structure.ok ? "nothing was found that an interval would not show"
                                 : "something the intervals do not show was found: " +
                                       (v.structure.findings.empty()
                                            ? std::string("see the verdict")
                                            : short_finding(v.structure.findings.front())));
  return {"trust", fmt::format("How far to trust it: {}{}{}.", text, text.empty() ? "" : " ",
                               joined(parts))};
}

}  // namespace

std::string finding_number(double v) {
  const double a = std::fabs(v);
  if (!std::isfinite(v)) {
    return "?";
  }
  if (a >= 1e7) {
    return fmt::format("{:.2g}", v);
  }
  if (a >= 1000) {
    return grouped(std::llround(v));
  }
  if (a >= 100) {
    return fmt::format("{:.0f}", v);
  }
  if (a >= 10) {
    return fmt::format("{:.1f}", v);
  }
  if (a >= 1) {
    return fmt::format("{:.2f}", v);
  }
  return fmt::format("{:.3g}", v);
}

std::vector<Finding> findings(const RunReport& report) {
  std::vector<Finding> out{measured(report), trust(report)};
  for (const auto& f : {ttft(report), decode(report), settings_finding(report),
                        edit_finding(report), memory_finding(report), proof_finding(report)}) {
    if (f) {
      out.push_back(*f);
    }
  }
  return out;
}

void write_findings_markdown(std::ostream& out, const std::vector<Finding>& found) {
  out << "## What was found\n\n";
  for (const auto& f : found) {
    out << "- " << f.text << "\n";
  }
}

nlohmann::json findings_json(const std::vector<Finding>& found) {
  json out = json::array();
  for (const auto& f : found) {
    out.push_back({{"topic", f.topic}, {"text", f.text}});
  }
  return out;
}

}  // namespace kvbench::report
