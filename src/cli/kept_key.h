// An encrypted store's master key kept unlocked between commands (`strata
// key unlock`, `strata key lock`), in the kernel's user keyring
// (crypto/kernel_keyring.h), so that commands run while it is kept need no
// passphrase and pay no scrypt derivation.
//
// The key is kept under the store's identity ("strata:store:" and the random
// store_id of its config.json), never its path: a store moved keeps its kept
// key, and two stores, even two made with one master key, never share one.
// A kept key is used only after the store's key check (config.json) accepts
// it, so a key kept for another store, or a value someone else put under the
// store's name, is never used: the command falls back to the passphrase.
//
// What this exposes (docs/guarantees.md): while the key is kept, every
// process of the same uid, and root, can read it, with no passphrase, until
// the timeout given at unlock (absolute, not renewed by use) or `key lock`.
//
// Thread-safety: free functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "crypto/aead.h"
#include "store/store.h"
#include "util/status.h"

namespace strata::cli {

// The longest and the default time a key is kept.
inline constexpr uint32_t kMaxKeptSeconds = 24 * 3600;
inline constexpr uint32_t kDefaultKeptSeconds = 15 * 60;

// How long to keep a key: a duration as `--for` takes it ("90s", "15m",
// "2h", plain seconds), from 1 s to 24 h. InvalidArgument otherwise.
Result<uint32_t> ParseKeptDuration(const std::string& text);

// Keeps master, the key of the store at root with config, for seconds.
// Unsupported, with the kernel's answer, where the keyring cannot be used.
Status KeepStoreKey(const StoreConfig& config, const crypto::Key256& master, uint32_t seconds);

// The key kept for the encrypted store at root (canonical path) with config,
// once its key check accepts it; nullopt when none is kept, the keyring is
// not usable here, or what is kept does not open this store (said on stderr).
std::optional<crypto::Key256> KeptStoreKey(const std::string& root, const StoreConfig& config);

// Drops the key kept for the store; false when none was kept.
Result<bool> DropStoreKey(const StoreConfig& config);

}  // namespace strata::cli
