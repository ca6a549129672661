#include "harness/scenario/edit_position.h"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace kvbench::scenario {

namespace {

using Kind = EditPosition::Kind;

constexpr std::array<std::pair<Kind, const char*>, 4> kSpecial = {{
    {Kind::none, "none"},
    {Kind::question, "question"},
    {Kind::timestamp_first, "timestamp_first"},
    {Kind::timestamp_last, "timestamp_last"},
}};

}  // namespace

std::string EditPosition::label() const {
  if (kind == Kind::fraction) {
    return fmt::format("{}", fraction);
  }
  for (const auto& [k, name] : kSpecial) {
    if (k == kind) {
      return name;
    }
  }
  return "?";
}

nlohmann::json EditPosition::to_json() const {
  if (kind == Kind::fraction) {
    return fraction;
  }
  return label();
}

std::optional<EditPosition> parse_edit_position(const nlohmann::json& v, std::string& why) {
  if (v.is_number()) {
    const double f = v.get<double>();
    if (f >= 0.0 && f <= 1.0) {
      return EditPosition{Kind::fraction, f};
    }
    why = fmt::format("{} is out of range: expected a fraction from 0 to 1", v.dump());
    return std::nullopt;
  }
  if (v.is_string()) {
    for (const auto& [k, name] : kSpecial) {
      if (v.get<std::string>() == name) {
        return EditPosition{k, 0.0};
      }
    }
  }
  why = fmt::format(
      "expected a fraction from 0 to 1 or one of \"none\", \"question\", \"timestamp_first\", "
      "\"timestamp_last\", got {}",
      v.dump());
  return std::nullopt;
}

std::optional<EditPosition> edit_position_from_label(const std::string& label) {
  std::string why;
  if (auto special = parse_edit_position(nlohmann::json(label), why)) {
    return special;
  }
  try {
    std::size_t used = 0;
    const double f = std::stod(label, &used);
    if (used == label.size() && f >= 0.0 && f <= 1.0) {
      return EditPosition{Kind::fraction, f};
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace kvbench::scenario
