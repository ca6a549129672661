#pragma once
// "Did you mean" suggestions for misspelt keys and values.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::scenario {

// Levenshtein edit distance between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` if it is close enough to be a likely typo (distance at most
// a third of the word's length but at least 2, and at most 3); empty otherwise.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kvbench::scenario
