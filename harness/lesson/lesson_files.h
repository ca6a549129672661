#pragma once
// The text of the files in scenarios/lesson/, compiled in by CMake so that the reproduction runs
// from anywhere. Generated sources implement it; edit the files, not the generated code.

#include <string_view>

namespace kvbench::lesson {

// The text of scenarios/lesson/<name> (e.g. "prompt-length.json"); empty when there is none.
std::string_view lesson_file(std::string_view name);

}  // namespace kvbench::lesson
