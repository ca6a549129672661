#pragma once
// The findings' pieces (findings.h): how their numbers are written, the effects they read, and
// the topics findings_topics.cpp words. Internal to the report.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/report/findings.h"

namespace kvbench::report::findings_text {

// 1234567 as "1,234,567".
std::string grouped(long long v);
// finding_number with a sign: "+12.5", "-3.00".
std::string signed_number(double v);
// "[a, b]" of an interval, in the findings' numbers.
std::string bracket(double lower, double upper);
// "4 rounds", "8 server starts": the units an interval rests on.
std::string units_of(const analysis::Effect& e);
const analysis::Effect* find_effect(const RunReport& r, std::string_view metric,
                                    std::string_view term, bool relative);
// The effects of `metric` in one form whose term starts with `prefix` (a slope per level).
std::vector<const analysis::Effect*> effects_from(const RunReport& r, std::string_view metric,
                                                  std::string_view prefix, bool relative);
// "a; b and c".
std::string joined(const std::vector<std::string>& parts);
// The median of `metric` over the conditions at one prompt length.
std::optional<double> median_at(const RunReport& r, std::string_view metric, int prompt_tokens);

// The distinct values `of` gives over the conditions, in order.
template <typename T, typename Fn>
std::vector<T> distinct(const std::vector<analysis::ConditionSummary>& rows, Fn&& of) {
  std::set<T> seen;
  for (const auto& c : rows) {
    seen.insert(of(c));
  }
  return {seen.begin(), seen.end()};
}

// The topics of findings.h that findings_topics.cpp words; nullopt where the run has none.
std::optional<Finding> settings_finding(const RunReport& r);
std::optional<Finding> edit_finding(const RunReport& r);
std::optional<Finding> memory_finding(const RunReport& r);
std::optional<Finding> proof_finding(const RunReport& r);

}  // namespace kvbench::report::findings_text
