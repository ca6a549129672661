// libFuzzer target for the scenario parser: any text either parses or throws kvbench::InputError
// (anything else escaping is a crash); a parsed scenario's resolved form parses again to itself;
// the line locator never throws.

#include <cstdint>
#include <string_view>

#include "harness/core/error.h"
#include "harness/scenario/locate.h"
#include "harness/scenario/scenario.h"
#include "tests/fuzz/fuzz_support.h"

using kvbench::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kvbench::fuzz::as_text(data, size);
  const auto lines = kvbench::scenario::value_lines(text);
  for (const auto& [path, line] : lines) {
    check(line >= 1, "value lines are 1-based");
  }
  kvbench::scenario::Scenario s;
  try {
    s = kvbench::scenario::parse_scenario(text, "fuzz.json");
  } catch (const kvbench::InputError& e) {
    check(std::string_view(e.what()).starts_with("fuzz.json"), "messages name the file first");
    return 0;
  }
  const std::string again = s.resolved.dump(2);
  kvbench::scenario::Scenario t;
  try {
    t = kvbench::scenario::parse_scenario(again, "resolved.json");
  } catch (const kvbench::InputError&) {
    check(false, "a scenario's resolved form is a valid scenario");
  }
  check(t.resolved == s.resolved, "the resolved form parses to itself");
  return 0;
}
