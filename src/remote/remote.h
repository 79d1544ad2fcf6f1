// Remotes: named S3 locations a local store pushes to, pulls from and mounts.
//
// A remote is itself a store (store.h) whose packs and refs live in the
// bucket (S3Backend). Its local side sits in the local store, under
// remotes/NAME/ (docs/format/remote.md):
//   remote.json   where it is: URL, endpoint, region, cache size, timeout;
//                 remote.sealed in its place, sealed, for an encrypted store
//                 (remote_spec_seal.h)
//   store/        its index (which remote pack holds which object, rebuilt
//                 from pack footers), temp packs being written, and the
//                 workspaces mounted from it
//   cache/        the block cache of remote pack bytes (block_cache.h)
// Credentials are never written there: they come from the environment each
// time (S3Credentials::FromEnvironment).
//
// Thread-safety: functions; the stores they open are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "remote/s3_client.h"
#include "store/store.h"

namespace strata {

struct RemoteSpec {
  std::string name;
  S3Location location;
  uint64_t cache_bytes = 2ull << 30;  // bound of the block cache
  int timeout_ms = 30000;             // a request without progress for this long fails
};

// remote.json: {"url", "endpoint", "region", "cache_bytes", "timeout_ms"}.
// Decoding checks every field's type and the URL and endpoint as FromUrl
// does, and caps timeout_ms at an hour; Corruption naming the remote otherwise.
std::string RemoteSpecToJson(const RemoteSpec& spec);
Result<RemoteSpec> RemoteSpecFromJson(const std::string& name, std::string_view text);

// Remote names: letters, digits, '-', '_' (they prefix branches: NAME/BRANCH).
bool IsValidRemoteName(std::string_view name);
std::string RemoteDir(const std::string& store_path, const std::string& name);

// Registers a remote of the store at store_path: checks that the location
// answers with these credentials, adopts the store settings found there or,
// for an empty location, writes the local store's (create-if-absent, so two
// machines adding one location agree), and sets up the local side.
// create_bucket: create the bucket first (an existing one is fine).
// An encrypted store needs its master key: the location must be empty or
// hold an encrypted store under that key (refused before anything is
// written otherwise, as is a plain location), and key generations are shared
// out through it (seal_grants.h).
Status AddRemote(Store& local, const RemoteSpec& spec, bool create_bucket, const crypto::Key256* master = nullptr);
// master: the local store's key when it is encrypted, needed to open
// remote.sealed; a plaintext remote.json of such a store (written before
// settings were sealed) is read, then sealed and removed.
Result<RemoteSpec> LoadRemote(const std::string& store_path, const std::string& name,
                              const crypto::Key256* master = nullptr);
// Forgets a remote here: its settings and its local side (the cache of its
// objects and index). The bucket is not touched, nor the local branches a
// pull made. Refused while the local side holds a workspace (one mounted from
// the remote, or ended badly), whose changes would go with it.
Status RemoveRemote(const Store& local, const std::string& name);
Result<std::vector<RemoteSpec>> ListRemotes(const std::string& store_path, const crypto::Key256* master = nullptr);

// Opens the store at a remote, synchronising its index with the packs in the
// bucket. Each call talks to the bucket; a mount keeps one open.
// master: the local store's key when it is encrypted (so is the remote's).
Result<std::unique_ptr<Store>> OpenRemoteStore(const std::string& store_path, const std::string& name,
                                               const crypto::Key256* master = nullptr);

// Opens the remote's local side alone (its index and workspaces), never the
// bucket: for what needs no remote data, such as finding the workspace a
// mount serves to unmount it. Credentials are not read; every request for
// packs or refs fails Unavailable.
Result<std::unique_ptr<Store>> OpenRemoteStoreOffline(const std::string& store_path, const std::string& name,
                                                      const crypto::Key256* master = nullptr);

// For an encrypted store (master given): once it has sealed all it may under
// the key generations it owns, it claims more from the bucket of one of its
// remotes (the first that gives some, in the order ListRemotes gives them),
// transparently (Store::SetSealGenerationSource). A remote's own local side
// claims from its bucket the same way (OpenRemoteStore).
void ClaimSealGenerationsFromRemotes(Store& local, const crypto::Key256* master);

// Splits "NAME/BRANCH" when NAME is a remote of the store; nullopt otherwise
// (a local branch, which may contain '/' too).
struct RemoteBranch {
  std::string remote;
  std::string branch;
};
std::optional<RemoteBranch> SplitRemoteBranch(const std::string& store_path, const std::string& spec);

}  // namespace strata
