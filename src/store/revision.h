// Revisions: how users name commits, and paths inside them.
//
//   REV       a full 64-hex id, a unique hex prefix (at least 4 digits), a branch
//             name, or any of those followed by ~N (the N-th first parent)
//             HEAD: the head of the default branch ("main", or the only
//             branch when there is one), as HEAD~N too
//   REV:PATH  a path inside the commit's tree ('/'-separated, relative)
//
// A branch name wins over a hex prefix that happens to spell the same, and a
// branch named HEAD over the default branch. Commands that are given a
// workspace read HEAD as its base instead (README.md, "Commands").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/store.h"

namespace strata {

inline constexpr std::string_view kHead = "HEAD";
inline constexpr const char* kDefaultBranch = "main";

Result<Hash> ResolveRevision(Store& store, std::string_view rev);
// The same for a commit whose files will be read (mount, export, diff, ls,
// cat, a new branch or workspace on it): NotFound, saying so, when the commit
// was forgotten by `strata forget` (forget.h).
Result<Hash> ResolveContentRevision(Store& store, std::string_view rev);

struct RevPath {
  std::string rev;
  std::string path;  // "" is the root
};
// "A..B" (log, diff): the commits B reaches and A does not; a side left
// empty is HEAD. nullopt when spec is no range (a ".." only after a ':' is
// part of a path).
struct RevRange {
  std::string from, to;
};
std::optional<RevRange> SplitRevRange(std::string_view spec);

// Splits "REV:PATH" at the first ':' (branch names cannot contain one).
RevPath SplitRevPath(std::string_view spec);

// Splits a relative path into names, refusing "..", empty or overlong names.
// "", "." and "/" all mean the root (no components).
Result<std::vector<std::string>> SplitPath(std::string_view path);

// The entry at path inside tree `root`. The root itself is returned as a
// directory entry with an empty name and subtree == root.
Result<TreeEntry> LookupPath(Store& store, const Hash& root, std::string_view path);

}  // namespace strata
