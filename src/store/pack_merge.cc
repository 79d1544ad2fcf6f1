#include "store/pack_merge.h"

#include "store/backend.h"
#include "store/index.h"
#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "store/store.h"

namespace strata {
namespace {

int TierOf(uint64_t size) {
  int tier = 0;
  for (uint64_t bound = kSmallestTier; size >= bound; bound *= kMergeFanIn) tier++;
  return tier;
}

}  // namespace

std::vector<std::string> PickPacksToMerge(const std::map<std::string, uint64_t>& packs, uint64_t pack_size) {
  std::map<int, std::vector<std::string>> tiers;
  for (const auto& [name, size] : packs)
    if (size < pack_size / kSmallPackShare) tiers[TierOf(size)].push_back(name);
  for (auto& [tier, names] : tiers)
    if (names.size() >= kMergeFanIn) return std::move(names);
  return {};
}

Result<uint64_t> MergeSmallPacks(Store& store) {
  Env* env = store.env();
  STRATA_ASSIGN_OR_RETURN(auto all, store.index()->ListPacks());
  if (PickPacksToMerge(all, store.config().pack_size).empty()) return uint64_t{0};
  // gc deletes index rows of these packs' objects: it holds this lock for its
  // whole run, and merges (one at a time) skip while it does.
  auto run_lock = env->LockFile(store.MergeLockPath(), LockMode::kExclusive, /*wait=*/false);
  if (!run_lock.ok()) return run_lock.status().IsConflict() ? Result<uint64_t>(uint64_t{0}) : run_lock.status();
  STRATA_ASSIGN_OR_RETURN(all, store.index()->ListPacks());  // as of now, under the lock
  const std::vector<std::string> merged = PickPacksToMerge(all, store.config().pack_size);
  if (merged.empty()) return uint64_t{0};

  STRATA_ASSIGN_OR_RETURN(auto writer, PackWriter::Create(env, store.path() + "/tmp", kPackVersion, store.cipher()));
  for (const std::string& name : merged) {
    STRATA_ASSIGN_OR_RETURN(auto entries, store.index()->ObjectsInPack(name));
    STRATA_ASSIGN_OR_RETURN(auto file, store.backend()->OpenPack(name));
    std::string stored;
    for (const PackEntry& e : entries) {
      if (e.offset + e.stored_len > file->Size())
        return Status::Corruption("merging packs: object " + e.id.ToHex() + " lies outside pack " + name);
      STRATA_RETURN_IF_ERROR(file->Read(e.offset, e.stored_len, &stored));
      // A damaged object is never copied on as if it were sound.
      if (auto raw = DecodeObject(e, stored, store.cipher()); !raw.ok())
        return Status::Corruption("merging packs: object " + e.id.ToHex() + " in pack " + name +
                                  " is damaged: " + raw.status().message() + " (run 'strata fsck')");
      STRATA_RETURN_IF_ERROR(writer->Add(e.id, e.type, e.codec, stored, e.raw_len));
    }
  }
  STRATA_ASSIGN_OR_RETURN(SealedPack sealed, writer->Finish());
  // The swap needs every writer out (as gc's does); a writer that is running
  // has precedence: the merge is dropped and done after a later write.
  auto lock = env->LockFile(store.GcLockPath(), LockMode::kExclusive, /*wait=*/false);
  if (!lock.ok()) {
    // Best effort: a leftover in tmp/ is never read, and Store::Open removes it.
    env->RemoveFile(sealed.local_path).IgnoreError();
    return lock.status().IsConflict() ? Result<uint64_t>(uint64_t{0}) : lock.status();
  }
  if (Status s = store.backend()->PublishPack(sealed.local_path, sealed.name); !s.ok()) {
    env->RemoveFile(sealed.local_path).IgnoreError();  // as above: Store::Open removes leftovers
    return s;
  }
  STRATA_RETURN_IF_ERROR(store.index()->ReplacePacks(NewPack{sealed.name, sealed.size, sealed.entries}, merged));
  STRATA_RETURN_IF_ERROR(store.backend()->DeletePackGroup(merged));
  return static_cast<uint64_t>(merged.size());
}

}  // namespace strata
