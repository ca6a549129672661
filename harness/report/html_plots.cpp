// The plots of a run's page (html.h): computed here, drawn by page.js.

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "harness/report/html.h"

namespace kvbench::report {

namespace {

using nlohmann::json;

constexpr double kPageMiB = 1024.0 * 1024.0;
constexpr int kLinePoints = 40;

// A single prompt's condition: what its colour stands for.
std::string condition_of(const CallRecord& c) {
  std::string out = fmt::format("ctx={} kv={}", c.num_ctx, c.cache_type);
  return c.variant.empty() ? out : c.variant + " " + out;
}

bool fresh_timed(const CallRecord& c) {
  return c.ok() && c.kind == CallKind::timed && !c.by_workload();
}

// Series of `value` against prompt tokens, one per condition, over the fresh timed calls.
std::vector<PlotSeries> by_condition(
    const RunReport& r, const std::function<std::optional<double>(const CallRecord&)>& value,
    const std::string& suffix, const std::string& marker) {
  std::map<std::string, PlotSeries> series;
  for (const auto& c : r.calls) {
    if (!fresh_timed(c)) {
      continue;
    }
    if (const auto v = value(c)) {
      auto& s = series[condition_of(c)];
      s.label = condition_of(c) + suffix;
      s.marker = marker;
      s.points.emplace_back(c.prompt_tokens, *v);
    }
  }
  std::vector<PlotSeries> out;
  int colour = 0;
  for (auto& [key, s] : series) {
    s.colour = colour++;
    out.push_back(std::move(s));
  }
  return out;
}

// The headline model's shape of `metric` at the run's starting speed (g = 1), over the prompt
// lengths, where prompt length is its only factor; nullopt otherwise.
std::optional<PlotSeries> shape_line(const RunReport& r, const std::string& metric) {
  for (const auto& m : r.analysis.models) {
    if (m.metric != metric || m.numeric != std::vector<std::string>{"prompt_ktokens"} ||
        !m.categorical.empty() || !m.slowdown) {
      continue;
    }
    std::map<std::string, double> b;
    for (const auto& c : m.slowdown->fit.fit.coefficients) {
      b[c.name] = c.estimate;
    }
    if (b.count("intercept") == 0 || b.count("prompt_ktokens") == 0) {
      return std::nullopt;
    }
    double lo = 1e300;
    double hi = -1e300;
    for (const auto& c : r.conditions) {
      lo = std::min(lo, static_cast<double>(c.prompt_tokens));
      hi = std::max(hi, static_cast<double>(c.prompt_tokens));
    }
    if (!(lo < hi)) {
      return std::nullopt;
    }
    PlotSeries line{"the model at the starting speed (drift taken out)", {}, true, false, "", 9};
    for (int i = 0; i <= kLinePoints; ++i) {
      const double x = lo + (hi - lo) * i / kLinePoints;
      const double k = x / 1000;
      line.points.emplace_back(
          x, b["intercept"] + b["prompt_ktokens"] * k +
                 (b.count("prompt_ktokens^2") != 0 ? b["prompt_ktokens^2"] * k * k : 0.0));
    }
    return line;
  }
  return std::nullopt;
}

std::optional<Plot> ttft_plot(const RunReport& r) {
  Plot p{"ttft",
         "Time to first token against prompt length",
         "Every timed call's time to first token (circles) and the server's own prompt time "
         "(triangles), coloured by condition; the line is the headline model's shape at the "
         "run's starting speed, the machine's drift taken out.",
         "prompt tokens",
         "ms",
         true,
         by_condition(
             r, [](const CallRecord& c) { return c.client.ttft_ms; }, "", "circle")};
  if (p.series.empty()) {
    return std::nullopt;
  }
  const int conditions = static_cast<int>(p.series.size());
  const auto server_ms = [](const CallRecord& c) { return c.server.prompt_ms; };
  for (auto& s : by_condition(r, server_ms, ": server prompt time", "triangle")) {
    s.colour += conditions;  // colours of its own, beside TTFT's
    p.series.push_back(std::move(s));
  }
  if (auto line = shape_line(r, "ttft_ms")) {
    p.series.push_back(std::move(*line));
  }
  return p;
}

std::optional<Plot> decode_plot(const RunReport& r) {
  Plot p{"decode",
         "Decode rate against context",
         "Every timed call's decode rate (tokens after the first, per second) against the prompt "
         "it follows, coloured by condition; grey crosses are the drift probes; the line is the "
         "headline model's shape at the run's starting speed.",
         "prompt tokens (the context decoding reads)",
         "tokens/s",
         true,
         by_condition(
             r, [](const CallRecord& c) { return c.client.decode_tps; }, "", "circle")};
  if (p.series.empty()) {
    return std::nullopt;
  }
  PlotSeries probes{"drift probes", {}, false, false, "crossRot", 7};
  for (const auto& c : r.calls) {
    if (c.ok() && c.kind == CallKind::probe && c.client.decode_tps) {
      probes.points.emplace_back(c.prompt_tokens, *c.client.decode_tps);
    }
  }
  if (!probes.points.empty()) {
    p.series.push_back(std::move(probes));
  }
  if (auto line = shape_line(r, "decode_tps")) {
    p.series.push_back(std::move(*line));
  }
  return p;
}

std::optional<Plot> drift_plot(const RunReport& r) {
  Plot p{"drift",
         "The machine's drift: the probes over time",
         "The same reference call, repeated through the run: its time to first token and decode "
         "rate over elapsed minutes, each against its own median (1 = the median). A machine "
         "that slows down shows TTFT rising and decode falling together.",
         "minutes since the first call",
         "against the median",
         false,
         {}};
  const std::pair<const char*, std::function<std::optional<double>(const CallRecord&)>> metrics[] =
      {{"probe TTFT", [](const CallRecord& c) { return c.client.ttft_ms; }},
       {"probe decode rate", [](const CallRecord& c) { return c.client.decode_tps; }}};
  for (const auto& [label, value] : metrics) {
    std::vector<std::pair<double, double>> raw;
    for (const auto& c : r.calls) {
      if (c.ok() && c.kind == CallKind::probe) {
        if (const auto v = value(c)) {
          raw.emplace_back(c.t_start_s / 60, *v);
        }
      }
    }
    if (raw.size() < 2) {
      continue;
    }
    std::vector<double> values;
    for (const auto& [t, v] : raw) {
      values.push_back(v);
    }
    std::nth_element(values.begin(),
                     values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    const double median = values[values.size() / 2];
    PlotSeries s{label, {}, false, false, "circle", static_cast<int>(p.series.size())};
    for (const auto& [t, v] : raw) {
      s.points.emplace_back(t, median > 0 ? v / median : 0);
    }
    p.series.push_back(std::move(s));
  }
  if (p.series.empty()) {
    return std::nullopt;
  }
  return p;
}

std::optional<Plot> timeline_plot(const RunReport& r) {
  Plot p{"timeline",
         "Every call on a timeline",
         "Each call's time to first token at the moment it started, coloured by condition: the "
         "shuffle spreads every condition over the run, so a slow stretch of the machine touches "
         "them all alike. Warm-ups and probes are grey.",
         "seconds since the first call",
         "time to first token (ms)",
         true,
         {}};
  std::map<std::string, PlotSeries> series;
  for (const auto& c : r.calls) {
    if (!c.ok() || !c.client.ttft_ms) {
      continue;
    }
    const bool timed = c.kind == CallKind::timed;
    const std::string kind(to_string(c.kind));
    const std::string key = timed ? condition_of(c) : "~" + kind;
    auto& s = series[key];
    s.label = timed ? condition_of(c) : kind;
    s.marker = timed ? "circle" : "crossRot";
    s.points.emplace_back(c.t_start_s, *c.client.ttft_ms);
  }
  int colour = 0;
  for (auto& [key, s] : series) {
    s.colour = key.starts_with("~") ? 7 : colour++;
    p.series.push_back(std::move(s));
  }
  if (p.series.empty()) {
    return std::nullopt;
  }
  return p;
}

std::optional<Plot> memory_plot(const RunReport& r) {
  Plot p{"memory",
         "Memory per server block",
         "Per server start: the KV cache the server logged and what the arithmetic gives for its "
         "cache type and cells, beside the server's resident memory after load and after its "
         "longest prompt.",
         "server block",
         "MiB",
         true,
         {}};
  const std::pair<const char*, std::optional<std::uint64_t> analysis::BlockMemoryRow::*>
      measures[] = {{"KV logged", &analysis::BlockMemoryRow::kv_logged_bytes},
                    {"KV arithmetic", &analysis::BlockMemoryRow::kv_arithmetic_bytes},
                    {"resident after load", &analysis::BlockMemoryRow::rss_after_load_bytes},
                    {"resident after the longest prompt",
                     &analysis::BlockMemoryRow::rss_after_longest_bytes}};
  for (const auto& [label, field] : measures) {
    PlotSeries s{label, {}, false, false, "rectRot", static_cast<int>(p.series.size())};
    for (const auto& b : r.memory.blocks) {
      if (const auto& v = b.*field) {
        s.points.emplace_back(b.index, static_cast<double>(*v) / kPageMiB);
      }
    }
    if (!s.points.empty()) {
      p.series.push_back(std::move(s));
    }
  }
  if (p.series.empty()) {
    return std::nullopt;
  }
  return p;
}

std::optional<Plot> edit_plot(const RunReport& r) {
  Plot p{"edit",
         "An edit's second read",
         "A prompt resent with one edit: its server prompt time against a cold read's (median "
         "per edit position), at the share of the prompt before the edit; the dashed line is 1 - "
         "f, what re-reading only the rest would cost if every token cost the same.",
         "share of the prompt before the first difference (f)",
         "second read / cold read",
         true,
         {}};
  PlotSeries s{"measured (median)", {}, false, false, "circle", 0};
  for (const auto& pos : r.prefix.positions) {
    if (pos.prompt_ms_ratio && pos.first_diff_share) {
      s.points.emplace_back(*pos.first_diff_share, *pos.prompt_ms_ratio);
    }
  }
  if (s.points.empty()) {
    return std::nullopt;
  }
  p.series.push_back(std::move(s));
  p.series.push_back({"1 - f", {{0, 1}, {1, 0}}, true, true, "", 7});
  return p;
}

std::optional<Plot> answers_plot(const RunReport& r) {
  if (!r.answers.present) {
    return std::nullopt;
  }
  const json a = r.answers.to_json();
  Plot p{"answers",
         "Answers per cache type",
         "The share of answer tokens identical to the reference cache type's greedy answers, per "
         "cache type (each its own point), with the reference type run again as a control.",
         "cache type (in the legend)",
         "identical answer tokens (%)",
         true,
         {}};
  int x = 0;
  for (const char* key : {"controls", "types"}) {
    for (const auto& t : a.value(key, json::array())) {
      if (!t["identical_token_share"].is_number()) {
        continue;
      }
      ++x;
      p.series.push_back({fmt::format("{}{}", t.value("cache_type", "?"),
                                      std::string(key) == "controls" ? " (control)" : ""),
                          {{x, 100 * t["identical_token_share"].get<double>()}},
                          false,
                          false,
                          "rectRot",
                          x - 1});
    }
  }
  return p.series.empty() ? std::nullopt : std::optional<Plot>(p);
}

// The Markdown tables of `md` (the report's own: a header row, a rule, rows) as HTML tables.
}  // namespace

std::vector<Plot> report_plots(const RunReport& report) {
  std::vector<Plot> out;
  for (auto&& p : {ttft_plot(report), decode_plot(report), drift_plot(report),
                   timeline_plot(report), memory_plot(report), edit_plot(report)}) {
    if (p) {
      out.push_back(*p);
    }
  }
  if (report.workload.present) {
    out.insert(out.end(), report.workload.plots.begin(), report.workload.plots.end());
  }
  if (auto p = answers_plot(report)) {
    out.push_back(*p);
  }
  return out;
}

}  // namespace kvbench::report
