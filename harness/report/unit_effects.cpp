// The "Effects at the level of their units" part of the Effects section: analysis::Effects as a
// table of each effect in this run's units and in the relative form that travels, with the units
// it rests on, the spikes kept out and the effects that get no interval.

#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/report/sections.h"

namespace kvbench::report {
namespace {

std::string metric_label(const std::string& key) {
  const auto* m = analysis::metric_named(key);
  return m != nullptr ? m->label : key;
}

// "prompt_ktokens@cache_type=q8_0" -> "per 1,000 prompt tokens, cache_type=q8_0", ...
std::string term_words(const std::string& term) {
  const std::string slope = "prompt_ktokens";
  if (term == slope) {
    return "per 1,000 prompt tokens";
  }
  if (term.starts_with(slope + "@")) {
    return fmt::format("per 1,000 prompt tokens at {}", term.substr(slope.size() + 1));
  }
  if (term.ends_with(":prompt_ktokens")) {
    return fmt::format("per 1,000 prompt tokens: {} minus the reference",
                       term.substr(0, term.size() - slope.size() - 1));
  }
  const auto at = term.find("@prompt_tokens=");
  if (at != std::string::npos) {
    return fmt::format("{} against the reference at {} prompt tokens", term.substr(0, at),
                       term.substr(at + std::string_view("@prompt_tokens=").size()));
  }
  return fmt::format("{} against the reference", term);
}

std::string value_ci(const analysis::Effect& e) {
  const int digits = e.relative || e.unit.starts_with("ms") ? 1 : 0;
  const std::string unit =
      e.relative ? std::string("%") : fmt::format(" {}", e.unit.substr(0, e.unit.find(' ')));
  return fmt::format("{:+.{}f}{} [{:+.{}f}, {:+.{}f}]", e.estimate, digits, unit, e.ci.lower,
                     digits, e.ci.upper, digits);
}

void write_withheld(std::ostream& out, const std::vector<analysis::WithheldEffect>& withheld) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_reason;
  for (const auto& w : withheld) {
    by_reason[{w.term, w.reason}].push_back(metric_label(w.metric));
  }
  for (const auto& [key, metrics] : by_reason) {
    out << fmt::format("\nNo interval for {} ({}): {}.\n", key.first, fmt::join(metrics, ", "),
                       key.second);
  }
}

void write_spikes(std::ostream& out, const std::vector<analysis::Spikes>& spikes) {
  std::vector<std::string> parts;
  for (const auto& s : spikes) {
    if (!s.seq.empty()) {
      std::vector<std::string> seq;
      for (const int q : s.seq) {
        seq.push_back(fmt::format("#{}", q));
      }
      parts.push_back(fmt::format("{} {} of {} calls ({})", metric_label(s.metric), s.seq.size(),
                                  s.calls, fmt::join(seq, ", ")));
    }
  }
  out << "\nSpikes (a call at least 50 % and 5 robust standard deviations off its prompt length's "
         "level in its round: "
         "kept in the record and the tables, out of these fits): "
      << (parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, "; "))) << ".\n";
}

// How far to trust the effects: one paragraph per axis.
void write_verdict_axes(std::ostream& out, const analysis::EffectsVerdict& v) {
  if (!v.present) {
    return;
  }
  out << "\n**How far to trust these effects.** Noise alone makes a run imprecise, never "
         "untrustworthy.\n\n";
  const auto axis = [&](std::string_view name, std::string_view yes, std::string_view no,
                        const analysis::VerdictAxis& a) {
    out << fmt::format("- *{}: {}.*", name, a.ok ? yes : no);
    for (const auto& f : a.findings) {
      out << " " << static_cast<char>(std::toupper(static_cast<unsigned char>(f[0]))) << f.substr(1)
          << ".";
    }
    out << "\n";
  };
  axis("Honest", "yes", "not quite", v.honest);
  axis("Precise", "every slope's sign is resolved", "not every slope's sign is resolved",
       v.precise);
  axis("Structure", "none found", "found", v.structure);
}

}  // namespace

void write_unit_effects_markdown(std::ostream& out, const analysis::Effects& effects,
                                 const analysis::EffectsVerdict& verdict) {
  if (effects.effects.empty() && effects.withheld.empty()) {
    return;
  }
  out << "\n### Effects at the level of their units\n\n"
         "What changes within a shuffled round is fitted with one level per round and its "
         "standard error clustered by round (t with rounds - 1 degrees of freedom), or by server "
         "block where a setting ran in 4 blocks or more; what needs a "
         "server restart is judged on the server blocks. The relative form travels between runs "
         "and machines; the form in ms or tok/s describes this run (it scales with the "
         "machine's speed). \"SE x\" is how much wider the shared noise of a round (or a server "
         "start) made the interval than a per-call one.\n";
  if (!effects.effects.empty()) {
    out << "\n| metric | effect | this run | relative (travels) | units | SE x |\n"
           "|---|---|---:|---:|---:|---:|\n";
    std::map<std::pair<std::string, std::string>, const analysis::Effect*> relative;
    for (const auto& e : effects.effects) {
      if (e.relative) {
        relative[{e.metric, e.term}] = &e;
      }
    }
    for (const auto& e : effects.effects) {
      if (e.relative) {
        continue;
      }
      const auto found = relative.find({e.metric, e.term});
      const auto* r = found != relative.end() ? found->second : nullptr;
      out << fmt::format("| {} | {} | {} | {} | {} {}s | {} |\n", metric_label(e.metric),
                         term_words(e.term), value_ci(e), r ? value_ci(*r) : "-", e.clusters,
                         e.cluster_unit,
                         e.se_inflation ? fmt::format("{:.2f}", *e.se_inflation) : "-");
    }
  }
  write_spikes(out, effects.spikes);
  write_withheld(out, effects.withheld);
  write_verdict_axes(out, verdict);
}

}  // namespace kvbench::report
