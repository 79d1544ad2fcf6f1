// The keyed gear table of the content-defined chunker. With the public table
// the cut points of a known file are the same in every store, so the sizes of
// its chunks (visible in a bucket even when their bytes are sealed) would
// fingerprint it; a table derived from the store's key makes them differ per
// store (borg 2 does the same). The table type matches store/chunker.h's
// GearTable without this room knowing the store.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>

#include "crypto/aead.h"
#include "util/status.h"

namespace strata::crypto {

// 256 64-bit values, expanded with HKDF from master's chunker-gear subkey;
// the same master key always gives the same table.
Result<std::array<uint64_t, 256>> DeriveGearTable(const Key256& master);

}  // namespace strata::crypto
