// The factors of a scenario: prompt lengths, context windows, cache types (both halves, or K and
// V apart, crossed) and edit positions, each a value or a list of distinct values.

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/scenario/parse_detail.h"
#include "harness/scenario/suggest.h"

namespace kvbench::scenario {

using detail::Checker;
using detail::kMaxCtx;
using detail::kMaxPromptTokens;
using nlohmann::json;

namespace {

// A factor: a single value or a non-empty array of distinct values.
template <typename T, typename Fn>
std::vector<T> factor_list(Checker& c, const json& v, const std::string& path, Fn&& item) {
  std::vector<T> out;
  const json arr = v.is_array() ? v : json::array({v});
  if (arr.empty()) {
    c.problem(path, "expected at least one value");
  }
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = v.is_array() ? fmt::format("{}[{}]", path, i) : path;
    if (auto x = item(arr[i], p)) {
      if (std::find(out.begin(), out.end(), *x) != out.end()) {
        c.problem(p, fmt::format("duplicate value {}", arr[i].dump()));
      } else {
        out.push_back(*x);
      }
    }
  }
  return out;
}

std::vector<std::string> cache_type_list(Checker& c, const json& v, const std::string& path) {
  return factor_list<std::string>(
      c, v, path, [&](const json& x, const std::string& p) -> std::optional<std::string> {
        auto s = c.string(x, p, false);
        if (!s) {
          return std::nullopt;
        }
        const auto& known = known_cache_types();
        if (std::find(known.begin(), known.end(), *s) == known.end()) {
          const std::string near = nearest(*s, known);
          c.problem(p, fmt::format("unknown cache type '{}'{}: expected one of {}", *s,
                                   near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                                   fmt::join(known, ", ")));
          return std::nullopt;
        }
        return s;
      });
}

// factors.cache_type (both halves), or cache_type_k and cache_type_v crossed (a half not given
// is f16), as llama-bench crosses -ctk and -ctv.
void parse_cache_types(Checker& c, const json& v, Factors& f) {
  if (v.contains("cache_type")) {
    f.cache_type = cache_type_list(c, v["cache_type"], "factors.cache_type");
  }
  if (!v.contains("cache_type_k") && !v.contains("cache_type_v")) {
    return;
  }
  if (v.contains("cache_type")) {
    c.problem("factors.cache_type",
              "give cache_type (both halves alike) or cache_type_k and cache_type_v, not both");
    return;
  }
  f.cache_type_k = v.contains("cache_type_k")
                       ? cache_type_list(c, v["cache_type_k"], "factors.cache_type_k")
                       : std::vector<std::string>{"f16"};
  f.cache_type_v = v.contains("cache_type_v")
                       ? cache_type_list(c, v["cache_type_v"], "factors.cache_type_v")
                       : std::vector<std::string>{"f16"};
  for (const auto& k : f.cache_type_k) {
    for (const auto& val : f.cache_type_v) {
      f.cache_type.push_back(cache_level(k, val));
    }
  }
}

}  // namespace

void detail::parse_factors(Checker& c, const json& v, Factors& f) {
  if (!v.is_object()) {
    c.problem("factors", fmt::format("expected an object, got {}", Checker::describe(v)));
    return;
  }
  c.keys(v, "factors",
         {"prompt_tokens", "num_ctx", "cache_type", "cache_type_k", "cache_type_v", "edit_position",
          "batch_size", "ubatch_size"});
  if (v.contains("edit_position")) {
    f.edit_position = factor_list<EditPosition>(
        c, v["edit_position"], "factors.edit_position",
        [&](const json& x, const std::string& p) -> std::optional<EditPosition> {
          std::string why;
          auto e = parse_edit_position(x, why);
          if (!e) {
            c.problem(p, why);
          }
          return e;
        });
  }
  if (v.contains("prompt_tokens")) {  // required by the prompt sweep (composition.cpp)
    f.prompt_tokens = factor_list<int>(
        c, v["prompt_tokens"], "factors.prompt_tokens",
        [&](const json& x, const std::string& p) { return c.integer(x, p, 1, kMaxPromptTokens); });
  }
  if (v.contains("num_ctx")) {
    f.num_ctx = factor_list<int>(
        c, v["num_ctx"], "factors.num_ctx",
        [&](const json& x, const std::string& p) { return c.integer(x, p, 256, kMaxCtx); });
  }
  parse_cache_types(c, v, f);
  for (const auto& [key, to] :
       {std::pair{"batch_size", &f.batch_size}, std::pair{"ubatch_size", &f.ubatch_size}}) {
    if (v.contains(key)) {
      *to = factor_list<int>(
          c, v[key], fmt::format("factors.{}", key),
          [&](const json& x, const std::string& p) { return c.integer(x, p, 1, kMaxCtx); });
    }
  }
}

}  // namespace kvbench::scenario
