#include "store/gc.h"

#include <chrono>

#include "store/backend.h"
#include "store/forget.h"
#include "store/index.h"
#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "store/reachability.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class Collector {
 public:
  Collector(Store& store, const GcOptions& options)
      : store_(store), options_(options), walk_(store, nullptr, options.progress, &forgotten_) {}

  Result<GcReport> Run() {
    auto run_lock = store_.env()->LockFile(store_.path() + "/gc-run.lock", LockMode::kExclusive, /*wait=*/false);
    if (!run_lock.ok())
      return run_lock.status().IsConflict() ? Status::Conflict("another gc is running on this store")
                                            : run_lock.status();
    // A pack merge that is running finishes first (it is short); none starts
    // until this gc ends.
    STRATA_ASSIGN_OR_RETURN(auto merge_lock,
                            store_.env()->LockFile(store_.MergeLockPath(), LockMode::kExclusive, /*wait=*/true));
    STRATA_ASSIGN_OR_RETURN(auto packs, store_.index()->ListPacks());
    report_.packs_before = packs.size();
    for (const auto& [name, size] : packs) report_.pack_bytes_before += size;

    auto start = Clock::now();
    Note("marking reachable objects");
    // Commits forgotten later than this are still marked whole: keeping more is safe.
    STRATA_ASSIGN_OR_RETURN(forgotten_, ForgottenCommits(store_));
    forgotten_.insert(options_.also_forgotten.begin(), options_.also_forgotten.end());
    STRATA_ASSIGN_OR_RETURN(auto candidates, store_.index()->ListObjects());
    report_.objects_before = candidates.size();
    STRATA_RETURN_IF_ERROR(MarkRoots());
    report_.mark_ms = MsSince(start);

    start = Clock::now();
    STRATA_RETURN_IF_ERROR(DeleteUnreachable(candidates));
    report_.delete_ms = MsSince(start);
    if (options_.dry_run) return Finish();

    // Packs lose live objects only here; with nothing deleted, the last gc
    // left every pack as full as it had to be.
    if (report_.objects_deleted == 0) return Finish();
    start = Clock::now();
    STRATA_RETURN_IF_ERROR(Repack());
    report_.repack_ms = MsSince(start);
    return Finish();
  }

 private:
  // Marks from every root; reading them again later marks only what is new.
  Status MarkRoots() {
    STRATA_ASSIGN_OR_RETURN(report_.roots, MarkFromRoots(store_, walk_, options_.extra_roots, "strata fsck"));
    report_.trees_read = walk_.trees_read();
    return Status::Ok();
  }

  // Takes the gc lock exclusively: no write session is open anywhere while it is held.
  Result<std::unique_ptr<FileLock>> LockOutWriters() {
    auto lock = store_.env()->LockFile(store_.GcLockPath(), LockMode::kExclusive, /*wait=*/false);
    if (lock.ok() || !lock.status().IsConflict()) return lock;
    Note("waiting for running writers (commits, imports) to finish");
    return store_.env()->LockFile(store_.GcLockPath(), LockMode::kExclusive, /*wait=*/true);
  }

  Status DeleteUnreachable(const std::vector<std::pair<Hash, uint64_t>>& candidates) {
    std::unique_ptr<FileLock> lock;
    if (!options_.dry_run) {
      STRATA_ASSIGN_OR_RETURN(lock, LockOutWriters());
    }
    auto locked = Clock::now();
    // Commits published since the first marking: their new objects are marked now.
    STRATA_RETURN_IF_ERROR(MarkRoots());
    std::vector<Hash> dead;
    for (const auto& [id, stored_len] : candidates) {
      if (walk_.Marked(id)) continue;
      dead.push_back(id);
      report_.bytes_deleted += stored_len;
    }
    report_.objects_deleted = dead.size();
    if (!options_.dry_run && !dead.empty()) {
      Note("deleting " + std::to_string(dead.size()) + " unreachable objects");
      STRATA_RETURN_IF_ERROR(store_.index()->DeleteObjects(dead));
    }
    report_.locked_ms += MsSince(locked);
    return Status::Ok();
  }

  Status Repack() {
    STRATA_ASSIGN_OR_RETURN(auto usage, store_.index()->ListPackUsage());
    std::vector<std::string> empty;
    std::vector<std::vector<const PackUsage*>> batches;  // packs rewritten together into one new pack
    uint64_t batch_bytes = 0;
    for (const PackUsage& p : usage) {
      if (p.live_objects == 0) {
        empty.push_back(p.name);
        report_.pack_bytes_removed += p.size;
      } else if (static_cast<double>(p.live_bytes) < options_.repack_threshold * static_cast<double>(p.size)) {
        if (batches.empty() || batch_bytes + p.live_bytes > store_.config().pack_size) {
          batches.emplace_back();
          batch_bytes = 0;
        }
        batches.back().push_back(&p);
        batch_bytes += p.live_bytes;
      }
    }
    if (!empty.empty()) STRATA_RETURN_IF_ERROR(Swap(std::nullopt, empty));
    report_.packs_removed = empty.size();
    for (const auto& batch : batches) STRATA_RETURN_IF_ERROR(Rewrite(batch));
    return Status::Ok();
  }

  // Copies the live objects of `batch` into one new pack and swaps it in.
  Status Rewrite(const std::vector<const PackUsage*>& batch) {
    STRATA_ASSIGN_OR_RETURN(auto writer, PackWriter::Create(store_.env(), store_.path() + "/tmp", kPackVersion, store_.cipher()));
    std::vector<std::string> old;
    for (const PackUsage* p : batch) {
      Note("rewriting pack " + p->name);
      STRATA_ASSIGN_OR_RETURN(auto entries, store_.index()->ObjectsInPack(p->name));
      STRATA_ASSIGN_OR_RETURN(auto file, store_.backend()->OpenPack(p->name));
      std::string stored;
      for (const PackEntry& e : entries) {
        if (e.offset + e.stored_len > file->Size())
          return Status::Corruption("gc: object " + e.id.ToHex() + " lies outside pack " + p->name +
                                    " (run 'strata fsck')");
        STRATA_RETURN_IF_ERROR(file->Read(e.offset, e.stored_len, &stored));
        // A damaged object is never copied on as if it were sound.
        if (auto raw = DecodeObject(e, stored, store_.cipher()); !raw.ok())
          return Status::Corruption("gc: object " + e.id.ToHex() + " in pack " + p->name + " is damaged: " +
                                    raw.status().message() + " (run 'strata fsck')");
        STRATA_RETURN_IF_ERROR(writer->Add(e.id, e.type, e.codec, stored, e.raw_len));
        report_.bytes_copied += stored.size();
        if (options_.progress) options_.progress->Add(0, stored.size());
      }
      old.push_back(p->name);
      report_.pack_bytes_removed += p->size;
    }
    STRATA_ASSIGN_OR_RETURN(SealedPack sealed, writer->Finish());
    STRATA_RETURN_IF_ERROR(Swap(NewPack{sealed.name, sealed.size, sealed.entries}, old, sealed.local_path));
    report_.packs_rewritten += old.size();
    report_.packs_written++;
    report_.pack_bytes_written += sealed.size;
    return Status::Ok();
  }

  // Under the exclusive lock: publishes the new pack (if any), moves the
  // index to it and removes the old pack files.
  Status Swap(const std::optional<NewPack>& added, const std::vector<std::string>& removed,
              const std::string& local_path = "") {
    STRATA_ASSIGN_OR_RETURN(auto lock, LockOutWriters());
    auto locked = Clock::now();
    if (added) STRATA_RETURN_IF_ERROR(store_.backend()->PublishPack(local_path, added->name));
    STRATA_RETURN_IF_ERROR(store_.index()->ReplacePacks(added, removed));
    STRATA_RETURN_IF_ERROR(store_.backend()->DeletePackGroup(removed));
    report_.locked_ms += MsSince(locked);
    return Status::Ok();
  }

  Result<GcReport> Finish() {
    STRATA_ASSIGN_OR_RETURN(auto packs, store_.index()->ListPacks());
    report_.packs_after = packs.size();
    for (const auto& [name, size] : packs) report_.pack_bytes_after += size;
    return report_;
  }

  void Note(const std::string& what) {
    if (options_.note) options_.note(what);
  }

  Store& store_;
  const GcOptions& options_;
  std::unordered_set<Hash> forgotten_;  // whose trees the walk leaves out (forget.h)
  Reachability walk_;
  GcReport report_;
};

}  // namespace

Result<uint64_t> MarkFromRoots(Store& store, Reachability& walk,
                               const std::function<Result<std::vector<RootSet>>()>& extra_roots,
                               const std::string& fsck_command) {
  std::vector<RootSet> roots;
  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  for (const auto& [name, id] : refs) roots.push_back({"branch " + name, id, {}, {}});
  if (extra_roots) {
    STRATA_ASSIGN_OR_RETURN(auto extra, extra_roots());
    roots.insert(roots.end(), extra.begin(), extra.end());
  }
  for (const RootSet& root : roots) walk.Add(root);
  if (walk.problems().empty()) return static_cast<uint64_t>(roots.size());
  const ReachabilityProblem& p = walk.problems().front();
  return Status::Corruption("gc stopped before deleting anything: " + std::to_string(walk.problems().size()) +
                            " reachable object(s) cannot be read, first " + p.object + " at " + p.where + ": " +
                            p.message + " (run '" + fsck_command + "')");
}

Result<GcReport> CollectGarbage(Store& store, const GcOptions& options) { return Collector(store, options).Run(); }

}  // namespace strata
