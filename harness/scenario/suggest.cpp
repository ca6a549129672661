#include "harness/scenario/suggest.h"

#include <algorithm>
#include <numeric>

namespace kvbench::scenario {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::min<std::size_t>(3, std::max<std::size_t>(2, word.size() / 3));
  bool found = false;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d <= best_d && (!found || d < best_d)) {
      best = c;
      best_d = d;
      found = true;
    }
  }
  return best;
}

}  // namespace kvbench::scenario
