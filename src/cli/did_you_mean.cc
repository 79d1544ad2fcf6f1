#include "cli/did_you_mean.h"

#include <algorithm>

namespace strata::cli {

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between the first i letters of a and the first j of b.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); i++) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); j++) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    for (size_t j = 1; j <= b.size(); j++) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> ClosestName(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t allowed = std::clamp<size_t>(word.size() / 3, 1, 2);
  auto length_gap = [word](const std::string& c) { return std::max(c.size(), word.size()) - std::min(c.size(), word.size()); };
  std::optional<std::string> best;
  size_t best_distance = allowed + 1, best_gap = 0;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(word, c), gap = length_gap(c);
    if (d < best_distance || (d == best_distance && best && gap < best_gap)) {
      best = c;
      best_distance = d;
      best_gap = gap;
    }
  }
  return best;
}

}  // namespace strata::cli
