// 2048 bytes of HKDF output read as little-endian 64-bit values: HKDF is a
// PRF, so the table is as unpredictable as the subkey, and reproducible.
#include "crypto/gear_table.h"

#include "crypto/subkeys.h"
#include "util/coding.h"

namespace strata::crypto {

Result<std::array<uint64_t, 256>> DeriveGearTable(const Key256& master) {
  STRATA_ASSIGN_OR_RETURN(Key256 gear_key, DeriveSubkey(master, kSubkeyChunkerGear));
  std::array<uint64_t, 256> table{};
  STRATA_ASSIGN_OR_RETURN(std::string bytes, Hkdf(gear_key.view(), "", "strata/gear-table", table.size() * 8));
  for (size_t i = 0; i < table.size(); i++) table[i] = DecodeFixed64(bytes.data() + 8 * i);
  return table;
}

}  // namespace strata::crypto
