#include "harness/analysis/answers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace kvbench::analysis {

using nlohmann::json;

double top_k_total_variation(const TopList& a, const TopList& b) {
  std::map<int, std::pair<double, double>> mass;
  double sum_a = 0;
  double sum_b = 0;
  for (const auto& [id, lp] : a) {
    const double p = std::exp(lp);
    mass[id].first += p;
    sum_a += p;
  }
  for (const auto& [id, lp] : b) {
    const double q = std::exp(lp);
    mass[id].second += q;
    sum_b += q;
  }
  double total = 0;
  for (const auto& [id, pq] : mass) {
    total += std::abs(pq.first - pq.second);
  }
  const double rest_a = std::max(0.0, 1.0 - sum_a);
  const double rest_b = std::max(0.0, 1.0 - sum_b);
  total += std::abs(rest_a - rest_b);
  return std::min(1.0, 0.5 * total);
}

namespace {

// Position by position against the reference: how many agree, and where the first does not (a
// missing or an extra element is a difference).
template <typename Seq>
AnswerComparison compare_positions(const Seq& ref, const Seq& other) {
  AnswerComparison c;
  c.positions = static_cast<int>(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const bool same = i < other.size() && other[i] == ref[i];
    c.identical += same ? 1 : 0;
    if (!same && !c.first_diff) {
      c.first_diff = static_cast<int>(i);
    }
  }
  if (!c.first_diff && other.size() > ref.size()) {
    c.first_diff = static_cast<int>(ref.size());
  }
  return c;
}

}  // namespace

AnswerComparison compare_answers(const std::vector<int>& ref_ids,
                                 const std::vector<TopList>& ref_top, const std::vector<int>& ids,
                                 const std::vector<TopList>& top) {
  AnswerComparison c = compare_positions(ref_ids, ids);
  if (c.first_diff && static_cast<std::size_t>(*c.first_diff) < ref_top.size()) {
    TopList at = ref_top[static_cast<std::size_t>(*c.first_diff)];
    std::sort(at.begin(), at.end(),
              [](const auto& x, const auto& y) { return x.second > y.second; });
    if (at.size() >= 2) {
      c.margin = std::exp(at[0].second) - std::exp(at[1].second);
    }
  }
  const std::size_t before =
      std::min({c.first_diff ? static_cast<std::size_t>(*c.first_diff) : ref_ids.size(),
                ref_top.size(), top.size()});
  double sum = 0;
  for (std::size_t i = 0; i < before; ++i) {
    sum += top_k_total_variation(ref_top[i], top[i]);
  }
  if (before > 0) {
    c.divergence = sum / static_cast<double>(before);
  }
  return c;
}

AnswerComparison compare_texts(const std::string& ref, const std::string& text) {
  return compare_positions(ref, text);
}

namespace {

struct Answered {
  std::vector<int> ids;
  std::vector<TopList> top;
  bool text_only = false;
  std::string text;
  bool ok = false;
};

Answered answered_from(const results::AnswerRecord& line) {
  Answered a;
  if (line.error) {
    return a;
  }
  a.ok = true;
  if (line.text) {
    a.text_only = true;
    a.text = *line.text;
    return a;
  }
  a.ids = line.ids;
  for (const auto& position : line.top) {
    a.top.emplace_back(position.begin(), position.end());
  }
  return a;
}

// (num_ctx, variant, replica) -> cache_type -> start -> prompt -> answer
using Group = std::tuple<int, std::string, int>;
using ByPrompt = std::map<int, Answered>;

TypeAgreement agreement(const std::string& type, const Group& g, const ByPrompt& ref,
                        const ByPrompt& other) {
  TypeAgreement t;
  t.cache_type = type;
  t.num_ctx = std::get<0>(g);
  t.variant = std::get<1>(g);
  std::set<int> prompts;
  for (const auto& [p, a] : ref) {
    prompts.insert(p);
  }
  for (const auto& [p, a] : other) {
    prompts.insert(p);
  }
  double share = 0;
  double first = 0;
  int firsts = 0;
  double margin = 0;
  int margins = 0;
  double divergence = 0;
  int divergences = 0;
  for (const int p : prompts) {
    const auto r = ref.find(p);
    const auto o = other.find(p);
    if (r == ref.end() || o == other.end() || !r->second.ok || !o->second.ok) {
      ++t.missing;
      continue;
    }
    const bool by_text = r->second.text_only || o->second.text_only;
    t.text_only = t.text_only || by_text;
    const auto c =
        by_text ? compare_texts(r->second.text, o->second.text)
                : compare_answers(r->second.ids, r->second.top, o->second.ids, o->second.top);
    ++t.prompts;
    share += c.positions > 0 ? static_cast<double>(c.identical) / c.positions : 1.0;
    if (!c.first_diff) {
      ++t.identical_answers;
    } else {
      first += *c.first_diff;
      ++firsts;
      if (c.margin) {
        margin += *c.margin;
        ++margins;
      }
    }
    if (c.divergence) {
      divergence += *c.divergence;
      ++divergences;
    }
  }
  if (t.prompts > 0) {
    t.identical_share = share / t.prompts;
  }
  if (firsts > 0) {
    t.mean_first_diff = first / firsts;
  }
  if (margins > 0) {
    t.mean_margin = margin / margins;
  }
  if (divergences > 0) {
    t.mean_divergence = divergence / divergences;
  }
  return t;
}

// Pools the agreements of the same type, num_ctx and variant over replicas (prompt-weighted).
std::vector<TypeAgreement> pooled(const std::vector<TypeAgreement>& all) {
  std::map<std::tuple<std::string, int, std::string>, std::vector<TypeAgreement>> by;
  for (const auto& t : all) {
    by[{t.cache_type, t.num_ctx, t.variant}].push_back(t);
  }
  std::vector<TypeAgreement> out;
  for (const auto& [key, list] : by) {
    TypeAgreement p = list.front();
    if (list.size() > 1) {
      p = TypeAgreement{};
      p.text_only = list.front().text_only;
      p.cache_type = std::get<0>(key);
      p.num_ctx = std::get<1>(key);
      p.variant = std::get<2>(key);
      double share = 0;
      double first = 0, first_n = 0, margin = 0, margin_n = 0, div = 0, div_n = 0;
      for (const auto& t : list) {
        p.prompts += t.prompts;
        p.identical_answers += t.identical_answers;
        p.missing += t.missing;
        share += t.identical_share * t.prompts;
        const double differ = t.prompts - t.identical_answers;
        if (t.mean_first_diff) {
          first += *t.mean_first_diff * differ;
          first_n += differ;
        }
        if (t.mean_margin) {
          margin += *t.mean_margin * differ;
          margin_n += differ;
        }
        if (t.mean_divergence) {
          div += *t.mean_divergence * t.prompts;
          div_n += t.prompts;
        }
      }
      p.identical_share = p.prompts > 0 ? share / p.prompts : 0;
      if (first_n > 0) {
        p.mean_first_diff = first / first_n;
      }
      if (margin_n > 0) {
        p.mean_margin = margin / margin_n;
      }
      if (div_n > 0) {
        p.mean_divergence = div / div_n;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json agreement_json(const TypeAgreement& t) {
  return {{"cache_type", t.cache_type},
          {"text_only", t.text_only},
          {"num_ctx", t.num_ctx},
          {"variant", t.variant},
          {"prompts", t.prompts},
          {"identical_answers", t.identical_answers},
          {"identical_token_share", t.identical_share},
          {"mean_first_difference", optional_number(t.mean_first_diff)},
          {"mean_top1_margin_there", optional_number(t.mean_margin)},
          {"mean_total_variation_before", optional_number(t.mean_divergence)},
          {"missing", t.missing}};
}

}  // namespace

AnswersReport analyze_answers(const std::vector<results::AnswerRecord>& lines,
                              const std::string& reference) {
  AnswersReport out;
  out.reference = reference;
  std::map<Group, std::map<std::string, std::map<int, ByPrompt>>> groups;
  std::set<int> prompts;
  for (const auto& line : lines) {
    const Group g{line.num_ctx, line.variant, line.replica};
    prompts.insert(line.prompt);
    groups[g][line.cache_type][line.start][line.prompt] = answered_from(line);
  }
  out.present = !groups.empty();
  out.prompts = static_cast<int>(prompts.size());
  std::vector<TypeAgreement> controls;
  std::vector<TypeAgreement> types;
  for (const auto& [g, by_type] : groups) {
    const auto ref = by_type.find(reference);
    if (ref == by_type.end() || !ref->second.count(1)) {
      continue;
    }
    const ByPrompt& ref_first = ref->second.at(1);
    if (ref->second.count(2)) {
      controls.push_back(agreement(reference, g, ref_first, ref->second.at(2)));
    }
    for (const auto& [type, starts] : by_type) {
      if (type != reference && starts.count(1)) {
        types.push_back(agreement(type, g, ref_first, starts.at(1)));
      }
    }
  }
  out.controls = pooled(controls);
  out.types = pooled(types);
  out.deterministic = !out.controls.empty();
  for (const auto& c : out.controls) {
    out.deterministic =
        out.deterministic && c.prompts > 0 && c.missing == 0 && c.identical_answers == c.prompts;
  }
  return out;
}

json AnswersReport::to_json() const {
  json c = json::array();
  for (const auto& t : controls) {
    c.push_back(agreement_json(t));
  }
  json t = json::array();
  for (const auto& a : types) {
    t.push_back(agreement_json(a));
  }
  return {{"reference", reference},
          {"prompts", prompts},
          {"deterministic", deterministic},
          {"controls", c},
          {"types", t},
          {"divergence_measure",
           "mean total variation of the top-k distributions before the first difference; a "
           "token missing from a list counts as 0 there, each list's rest is one bucket"}};
}

}  // namespace kvbench::analysis
