#include "harness/report/compare.h"

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"

namespace kvbench::report {

namespace {

using nlohmann::json;

constexpr std::size_t kCompareResamples = 2000;
constexpr std::uint64_t kCompareSeed = 20261201;

using ConditionKey = std::tuple<std::string, int, std::string, int>;

std::string condition_text(const ConditionKey& k) {
  const auto& [variant, num_ctx, cache, tokens] = k;
  return fmt::format("{}num_ctx {}, {}, {} prompt tokens",
                     variant.empty() ? "" : "variant " + variant + ", ", num_ctx, cache, tokens);
}

// Each metric's values of the fresh timed calls, by condition.
std::map<ConditionKey, std::map<std::string, std::vector<double>>> values_by_condition(
    const std::vector<CallRecord>& calls) {
  std::map<ConditionKey, std::map<std::string, std::vector<double>>> out;
  for (const auto& r : calls) {
    if (!r.ok() || !analysis::fresh_timed(r)) {
      continue;
    }
    auto& slot = out[{r.variant, r.num_ctx, r.cache_type, r.prompt_tokens}];
    for (const auto& m : analysis::metrics()) {
      if (const auto v = m.value(r)) {
        slot[m.key].push_back(*v);
      }
    }
  }
  return out;
}

// The 95 % percentile interval of median(b*) / median(a*) over independent resamples.
std::optional<stats::Interval> ratio_interval(const std::vector<double>& a,
                                              const std::vector<double>& b, std::mt19937_64& rng) {
  if (a.size() < 2 || b.size() < 2) {
    return std::nullopt;
  }
  std::vector<double> ratios;
  ratios.reserve(kCompareResamples);
  std::vector<double> ra(a.size());
  std::vector<double> rb(b.size());
  std::uniform_int_distribution<std::size_t> pick_a(0, a.size() - 1);
  std::uniform_int_distribution<std::size_t> pick_b(0, b.size() - 1);
  for (std::size_t i = 0; i < kCompareResamples; ++i) {
    for (auto& x : ra) {
      x = a[pick_a(rng)];
    }
    for (auto& x : rb) {
      x = b[pick_b(rng)];
    }
    const double ma = stats::median(ra);
    if (ma != 0) {
      ratios.push_back(stats::median(rb) / ma);
    }
  }
  if (ratios.size() < kCompareResamples / 2) {
    return std::nullopt;
  }
  std::sort(ratios.begin(), ratios.end());
  stats::Interval ci;
  ci.lower = stats::percentile_sorted(ratios, 0.025);
  ci.upper = stats::percentile_sorted(ratios, 0.975);
  return ci;
}

std::string text_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) {
    return "";
  }
  const auto& v = j[key];
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return s.substr(0, s.find('\n'));
}

void differ(std::vector<std::string>& out, const std::string& what, const std::string& a,
            const std::string& b) {
  if (a != b) {
    out.push_back(
        fmt::format("{}: {} (A) against {} (B)", what, a.empty() ? "-" : a, b.empty() ? "-" : b));
  }
}

std::string labels_text(const std::map<std::string, std::string>& labels) {
  std::vector<std::string> items;
  for (const auto& [k, v] : labels) {
    items.push_back(k + "=" + v);
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

std::vector<std::string> differences(const results::RunManifest& a, const results::RunManifest& b) {
  std::vector<std::string> out;
  differ(out, "kvbench", a.kvbench.version + " " + a.kvbench.git_revision,
         b.kvbench.version + " " + b.kvbench.git_revision);
  differ(out, "server", text_of(a.server, "kind") + " " + text_of(a.server, "mode"),
         text_of(b.server, "kind") + " " + text_of(b.server, "mode"));
  differ(out, "server version", text_of(a.server, "version"), text_of(b.server, "version"));
  differ(out, "model",
         text_of(a.model, "name").empty() ? text_of(a.model, "path") : text_of(a.model, "name"),
         text_of(b.model, "name").empty() ? text_of(b.model, "path") : text_of(b.model, "name"));
  const auto cpu = [](const results::RunManifest& r) {
    return r.machine ? r.machine->cpu_model : std::string();
  };
  const auto cores = [](const results::RunManifest& r) {
    return r.machine ? std::to_string(r.machine->logical_cores) : std::string();
  };
  differ(out, "machine", cpu(a), cpu(b));
  differ(out, "logical cores", cores(a), cores(b));
  differ(out, "scenario", a.scenario_hash, b.scenario_hash);
  differ(out, "labels", labels_text(a.labels), labels_text(b.labels));
  return out;
}

}  // namespace

Comparison compare_runs(const results::LoadedRun& a, const std::string& a_dir,
                        const results::LoadedRun& b, const std::string& b_dir) {
  Comparison c;
  c.a = a_dir;
  c.b = b_dir;
  c.a_run_id = a.run.run_id;
  c.b_run_id = b.run.run_id;
  c.differences = differences(a.run, b.run);
  const auto va = values_by_condition(a.calls);
  const auto vb = values_by_condition(b.calls);
  std::mt19937_64 rng(kCompareSeed);
  for (const auto& [key, metrics_a] : va) {
    const auto other = vb.find(key);
    if (other == vb.end()) {
      c.only_in_a.push_back(condition_text(key));
      continue;
    }
    for (const auto& m : analysis::metrics()) {
      const auto xa = metrics_a.find(m.key);
      const auto xb = other->second.find(m.key);
      if (xa == metrics_a.end() || xb == other->second.end()) {
        continue;
      }
      CompareRow row;
      std::tie(row.variant, row.num_ctx, row.cache_type, row.prompt_tokens) = key;
      row.metric = m.key;
      row.label = m.label;
      row.unit = m.unit;
      row.n_a = xa->second.size();
      row.n_b = xb->second.size();
      row.median_a = stats::median(xa->second);
      row.median_b = stats::median(xb->second);
      if (row.median_a != 0) {
        row.ratio = row.median_b / row.median_a;
        row.ratio_ci = ratio_interval(xa->second, xb->second, rng);
      }
      c.rows.push_back(std::move(row));
    }
  }
  for (const auto& [key, unused] : vb) {
    if (va.count(key) == 0) {
      c.only_in_b.push_back(condition_text(key));
    }
  }
  return c;
}

void write_compare_markdown(std::ostream& out, const Comparison& c) {
  out << "## kvbench compare (descriptive, not a test)\n\n";
  out << fmt::format("- A: `{}` (run `{}`)\n- B: `{}` (run `{}`)\n", c.a, c.a_run_id, c.b,
                     c.b_run_id);
  if (c.differences.empty()) {
    out << "- the same kvbench, server, model, machine, scenario and labels\n";
  }
  for (const auto& d : c.differences) {
    out << "- differs: " << d << "\n";
  }
  for (const auto& s : c.only_in_a) {
    out << "- only in A: " << s << "\n";
  }
  for (const auto& s : c.only_in_b) {
    out << "- only in B: " << s << "\n";
  }
  out << "\nMedians of each condition's fresh timed calls; B / A with a 95 % bootstrap interval "
         "(each run resampled on its own). Runs on different days differ by more than their "
         "calls' spread: read a ratio as a description, and use `kvbench gate` for a test.\n\n";
  if (c.rows.empty()) {
    out << "No condition was measured by both runs (conversation turns and a trace's requests "
           "reuse by design and are compared by their own report, not here).\n";
    return;
  }
  const bool variants = std::any_of(c.rows.begin(), c.rows.end(),
                                    [](const CompareRow& r) { return !r.variant.empty(); });
  out << (variants ? "| variant " : "")
      << "| num_ctx | cache | prompt tokens | metric | A median (n) | B median (n) | B / A [95% "
         "CI] |\n";
  out << (variants ? "|---" : "") << "|---:|---|---:|---|---:|---:|---|\n";
  for (const auto& r : c.rows) {
    const std::string ratio = !r.ratio     ? "-"
                              : r.ratio_ci ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *r.ratio,
                                                         r.ratio_ci->lower, r.ratio_ci->upper)
                                           : fmt::format("{:.3f}", *r.ratio);
    out << (variants ? "| " + r.variant + " " : "")
        << fmt::format("| {} | {} | {} | {} {} | {:.2f} ({}) | {:.2f} ({}) | {} |\n", r.num_ctx,
                       r.cache_type, r.prompt_tokens, r.label, r.unit, r.median_a, r.n_a,
                       r.median_b, r.n_b, ratio);
  }
}

Table compare_table(const Comparison& c) {
  Table t({{"variant", false},
           {"num_ctx", true},
           {"cache_type", false},
           {"prompt_tokens", true},
           {"metric", false},
           {"unit", false},
           {"n_a", true},
           {"median_a", true},
           {"n_b", true},
           {"median_b", true},
           {"ratio", true},
           {"ratio_lower", true},
           {"ratio_upper", true}});
  const auto number = [](std::optional<double> v) {
    return v ? fmt::format("{:.6g}", *v) : std::string();
  };
  for (const auto& r : c.rows) {
    t.add_row({r.variant, std::to_string(r.num_ctx), r.cache_type, std::to_string(r.prompt_tokens),
               r.metric, r.unit, std::to_string(r.n_a), number(r.median_a), std::to_string(r.n_b),
               number(r.median_b), number(r.ratio),
               number(r.ratio_ci ? std::optional(r.ratio_ci->lower) : std::nullopt),
               number(r.ratio_ci ? std::optional(r.ratio_ci->upper) : std::nullopt)});
  }
  return t;
}

nlohmann::json to_json(const Comparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    json row = {{"num_ctx", r.num_ctx},
                {"cache_type", r.cache_type},
                {"prompt_tokens", r.prompt_tokens},
                {"metric", r.metric},
                {"n_a", r.n_a},
                {"n_b", r.n_b},
                {"median_a", r.median_a},
                {"median_b", r.median_b}};
    if (!r.variant.empty()) {
      row["variant"] = r.variant;
    }
    row["ratio"] = r.ratio ? json(*r.ratio) : json(nullptr);
    row["ratio_ci"] =
        r.ratio_ci ? json::array({r.ratio_ci->lower, r.ratio_ci->upper}) : json(nullptr);
    rows.push_back(std::move(row));
  }
  return {{"schema", "kvbench.compare"},
          {"schema_version", 1},
          {"descriptive", true},
          {"a", {{"dir", c.a}, {"run_id", c.a_run_id}}},
          {"b", {{"dir", c.b}, {"run_id", c.b_run_id}}},
          {"differences", c.differences},
          {"only_in_a", c.only_in_a},
          {"only_in_b", c.only_in_b},
          {"rows", rows}};
}

}  // namespace kvbench::report
