// Subkeys: one key per purpose, derived from the store's master key with
// HKDF-SHA256 (RFC 5869), so that a key is never used for two things (object
// ids and sealing, say) and each sealing purpose counts its own nonces.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "util/status.h"

namespace strata::crypto {

// The purposes a subkey is derived for; a name is part of the format
// (changing one changes every id or seal made under it).
inline constexpr std::string_view kSubkeyObjectId = "object-id";      // keyed object ids (keyed_id.h)
inline constexpr std::string_view kSubkeyObjectSeal = "object-seal";  // sealing objects
inline constexpr std::string_view kSubkeyChunkerGear = "chunker-gear";  // the secret gear table
inline constexpr std::string_view kSubkeyRefs = "refs";                // sealing refs and their names
inline constexpr std::string_view kSubkeyPackIndex = "pack-index";    // sealing pack footers
inline constexpr std::string_view kSubkeyKeyCheck = "key-check";      // the store's key check (config.json)
inline constexpr std::string_view kSubkeyRemoteSpec = "remote-spec";  // sealing remotes' settings (remote.sealed)

// HKDF-SHA256 (extract, then expand to `length` bytes). REQUIRES: length <= 255 * 32.
Result<std::string> Hkdf(std::string_view key, std::string_view salt, std::string_view info, size_t length);

// The subkey of master for purpose (one of the names above).
Result<Key256> DeriveSubkey(const Key256& master, std::string_view purpose);

}  // namespace strata::crypto
