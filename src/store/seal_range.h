// SealRange: key generations of the object-seal key an encrypted store owns
// (docs/format/encryption.md, "Nonces across stores"). Stores that share a
// master key own disjoint ranges, so no two of them ever seal under one key.
#pragma once

#include <cstdint>

namespace strata {

// Generations [first, end); end is at most 2^32.
struct SealRange {
  uint64_t first = 0;
  uint64_t end = 0;
};

}  // namespace strata
