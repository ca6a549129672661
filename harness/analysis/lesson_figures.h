#pragma once
// The lesson's published figures, from scenarios/lesson/figures.json (compiled in at build time,
// so the data lives in that one file).

#include <nlohmann/json.hpp>

namespace kvbench::analysis {

// The parsed figures file. Throws kvbench::Error if the compiled-in text is not valid JSON.
const nlohmann::json& lesson_figures();

}  // namespace kvbench::analysis
