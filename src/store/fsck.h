// fsck: is everything the store promises there and sound?
//
//  1. integrity: every pack and object, as `strata verify` checks them
//     (checksums, footers against the index, every object decoded and re-hashed);
//  2. reachability: every object that a branch or another root reaches is in
//     the index (and so was checked by 1), each problem named with the path
//     through which it is reached.
// Objects nothing reaches are counted, not errors: gc deletes them.
//
// fsck (like verify) holds a write session, so no gc deletes while it looks.
#pragma once

#include <cstdint>
#include <vector>

#include "store/reachability.h"
#include "store/store.h"
#include "store/verify.h"
#include "util/progress.h"

namespace strata {

struct FsckReport {
  VerifyReport integrity;
  uint64_t roots = 0;
  uint64_t reachable = 0;    // objects reached from the roots
  uint64_t unreachable = 0;  // indexed objects nothing reaches (garbage for gc)
  std::vector<ReachabilityProblem> missing;
  bool ok() const { return integrity.ok() && missing.empty(); }
};

Result<FsckReport> CheckStore(Store& store, const std::vector<RootSet>& extra_roots, Progress* progress);

}  // namespace strata
