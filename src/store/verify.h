// Verify: reads every pack and every object in a store and reports all damage.
//
// Checks, per pack file: its checksum against its name, its trailer and footer,
// and every object (decoded and re-hashed). Per index: every indexed pack
// exists, the index agrees with each footer, every ref names a stored commit.
// It does not stop at the first problem: the report lists each damaged object
// with its pack, so a user knows exactly what was lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/progress.h"

namespace strata {

struct VerifyProblem {
  std::string pack;    // file name, or "" for index-level problems
  std::string object;  // hex id, or "" for pack-level problems
  std::string message;
};

struct VerifyReport {
  uint64_t packs = 0;
  uint64_t objects = 0;
  uint64_t bytes = 0;  // pack bytes read
  std::vector<VerifyProblem> problems;
  bool ok() const { return problems.empty(); }
};

Result<VerifyReport> VerifyStore(Store& store, Progress* progress);

}  // namespace strata
