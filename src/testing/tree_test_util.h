// Helpers for tests that build trees in a store by hand.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "store/store.h"
#include "store/tree.h"

namespace strata::testing {

// Stores a tree of `entries` given in any order (EncodeTree wants them sorted
// by name) and returns its id. A failed Put aborts the test binary.
inline Hash PutTree(Store& store, std::vector<TreeEntry> entries) {
  std::sort(entries.begin(), entries.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
  Tree t;
  t.entries = std::move(entries);
  return store.Put(ObjectType::kTree, EncodeTree(t)).value().id;
}

}  // namespace strata::testing
