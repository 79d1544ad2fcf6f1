// The command a mistyped word was most likely meant to be, for "unknown
// command 'comit'; did you mean 'commit'?".
//
// The distance is the optimal string alignment distance (insertions,
// deletions, substitutions, and swaps of two neighbouring letters, each
// counting one), the usual measure of typing mistakes. A suggestion is made
// only when the word is close: within a third of its length (at least 1, at
// most 2), so that "x" suggests nothing and "stauts" suggests "status".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::cli {

size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to word within the allowed distance; of equally near
// ones, the one whose length is nearest to word's ("stauts" is one from both
// "stats" and "status": a swap is likelier than a doubled letter), then the
// first in candidates. nullopt when none is close enough.
std::optional<std::string> ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace strata::cli
