// Backend: where a store's packs and refs live.
//
// Packs are immutable blobs named by the SHA-256 of their bytes; refs are the
// only mutable state, and change only by compare-and-swap. That is all a store
// asks of its storage, so the same Store runs on a local directory
// (LocalBackend) or on an S3 bucket (remote/s3_backend.h), where packs are
// objects and a ref update is a conditional PUT.
//
// The local index (which pack holds which object) is not part of the backend:
// every machine keeps its own, rebuilt from pack footers when needed.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/env.h"
#include "util/hash.h"
#include "util/status.h"

namespace strata {

class Index;

class Backend {
 public:
  virtual ~Backend() = default;

  // Makes a complete, already synced local pack file durable in the backend
  // under `name`, consuming the local file. Publishing a name that exists is
  // harmless: equal names mean equal bytes.
  virtual Status PublishPack(const std::string& local_path, const std::string& name) = 0;
  virtual Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& name) = 0;
  // For reading a pack's footer once, to index it: a backend with a cache
  // keeps these bytes out of it (the index holds what they say).
  virtual Result<std::shared_ptr<RandomAccessFile>> OpenPackUncached(const std::string& name) {
    return OpenPack(name);
  }
  // Removes a pack for good (gc, after the index stopped naming it).
  virtual Status DeletePack(const std::string& name) = 0;
  // Removes several packs for good, as DeletePack each would. A local
  // directory makes the removals durable with one flush of its folder
  // instead of one per pack (a merge removes eight at a time).
  virtual Status DeletePackGroup(const std::vector<std::string>& names) {
    for (const std::string& name : names) STRATA_RETURN_IF_ERROR(DeletePack(name));
    return Status::Ok();
  }
  // Names of every published pack.
  virtual Result<std::vector<std::string>> ListPacks() = 0;

  virtual Result<std::optional<Hash>> GetRef(const std::string& name) = 0;
  virtual Result<std::map<std::string, Hash>> ListRefs() = 0;
  // Moves `name` from `expected` (nullopt: must not exist) to `target`;
  // Conflict ("head moved") when it is elsewhere.
  virtual Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected,
                                   const Hash& target) = 0;
  // Removes `name` if it points at `expected`; Conflict ("head moved") when it
  // is elsewhere or gone.
  virtual Status DeleteRef(const std::string& name, const Hash& expected) = 0;

  // Whether refs are rows of the store's own index (a local directory): then
  // a commit's pack rows and its branch move share one index transaction.
  virtual bool RefsInIndex() const { return false; }

  // Where packs live, for messages ("/srv/store/packs").
  virtual std::string PackLocation(const std::string& name) const = 0;

  // Whether packs are files on this machine's disk that this store wrote:
  // then reads are checked by the frames' fast checksums, and a remote's
  // (false) by SHA-256 (docs/format/frames.md).
  virtual bool LocalDisk() const { return false; }

  // Whether other machines publish packs here too: then an object missing
  // from the local index may have appeared since it was last synchronised.
  virtual bool Shared() const { return false; }

  // The writer side of a shared backend's gc protocol (docs/format/remote.md):
  // a store's first write session announces itself before it relies on any
  // object being stored, and retires once what it wrote is reachable (or
  // given up). A backend with a local lock instead does nothing here.
  virtual Status AnnounceWriter() { return Status::Ok(); }
  virtual void RetireWriter() {}
  // Whether a gc running on a shared backend may delete this object: a writer
  // stores it again instead of counting on it (false for a local backend).
  virtual bool Condemned(const Hash& /*id*/) const { return false; }
  // After a read found its pack gone from a shared backend (a remote gc
  // repacked it) and the store indexed the packs listed now: forgets the
  // packs the index names that the listing lacked, so their objects are
  // looked up in the packs that hold them now. A loss no gc explains stops
  // refs moving from this store, as a ref update's own check does.
  virtual Status ForgetPacksGoneSinceListing() { return Status::Ok(); }

  // What the backend did, by name, for `strata stats` (a remote's cache and
  // transfers); empty for a local directory.
  virtual std::vector<std::pair<std::string, uint64_t>> Counters() const { return {}; }
};

// Packs as files in STORE/packs, refs in the refs table of STORE/index.db.
std::unique_ptr<Backend> NewLocalBackend(Env* env, const std::string& store_path, Index* index);

}  // namespace strata
