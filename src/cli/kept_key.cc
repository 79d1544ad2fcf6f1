#include "cli/kept_key.h"

#include <fmt/format.h>

#include <cstring>

#include "crypto/kernel_keyring.h"
#include "sandbox/limits.h"

namespace strata::cli {
namespace {

std::string Description(const StoreConfig& config) { return "strata:store:" + config.store_id; }

}  // namespace

Result<uint32_t> ParseKeptDuration(const std::string& text) {
  STRATA_ASSIGN_OR_RETURN(uint64_t ms, sandbox::ParseDurationMs(text));
  if (ms < 1000 || ms > uint64_t{kMaxKeptSeconds} * 1000)
    return Status::InvalidArgument("--for " + text + ": a key is kept from 1s to 24h");
  // Whole seconds, as the kernel counts them; a part of one is not cut off.
  return static_cast<uint32_t>((ms + 999) / 1000);
}

Status KeepStoreKey(const StoreConfig& config, const crypto::Key256& master, uint32_t seconds) {
  if (!config.encrypted()) return Status::InvalidArgument("the store is not encrypted: it has no key to keep");
  return crypto::KeepInUserKeyring(Description(config), master.view(), seconds);
}

std::optional<crypto::Key256> KeptStoreKey(const std::string& root, const StoreConfig& config) {
  if (!config.encrypted()) return std::nullopt;
  // Any failure of the keyring itself means no kept key: the command goes on
  // to the passphrase as it would without one.
  auto found = crypto::FindInUserKeyring(Description(config), crypto::Key256::kSize);
  if (!found.ok() || !found->has_value()) return std::nullopt;
  std::string& bytes = **found;
  if (bytes.size() != crypto::Key256::kSize) {
    crypto::Wipe(bytes);
    return std::nullopt;
  }
  crypto::Key256 master;
  std::memcpy(master.bytes.data(), bytes.data(), bytes.size());
  crypto::Wipe(bytes);
  if (Status s = Store::CheckKey(root, master); !s.ok()) {
    fmt::print(stderr, "strata: the key kept for the store at {} does not open it; it was not used\n", root);
    return std::nullopt;
  }
  return master;
}

Result<bool> DropStoreKey(const StoreConfig& config) {
  if (!config.encrypted()) return Status::InvalidArgument("the store is not encrypted: it has no kept key");
  return crypto::DropFromUserKeyring(Description(config));
}

}  // namespace strata::cli
