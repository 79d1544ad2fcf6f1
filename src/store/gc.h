// Garbage collection: deletes the objects that no branch, no workspace and no
// pinned commit reaches (the trees of forgotten commits are not followed,
// forget.h), and rewrites the packs that became mostly garbage,
// while mounts, reads and commits keep using the store.
//
// Phases (docs/format/store.md has the protocol):
//  1. mark, no lock: list the indexed objects, then mark everything reachable
//     from the roots as they are now (refs + `extra_roots`).
//  2. delete, with the gc lock held exclusively, i.e. while no write session
//     is open in any process: read the roots again, mark what became reachable
//     since phase 1 (only the new commits' new trees are read), and forget
//     every object listed in phase 1 that is still unmarked. From then on no
//     writer can find those objects, so none can come to depend on them.
//  3. repack, outside the lock: packs without live objects are removed; packs
//     whose live bytes fell below `repack_threshold` of their size have their
//     live objects copied (as stored, each checked against its id) into new
//     packs. Each swap of packs — publish the new pack, move the index rows,
//     remove the old files — happens under the exclusive lock again, briefly.
//     Readers that looked an object up before a swap find it again at its new
//     place (Store::Get looks once more when a read fails).
//
// A crash at any point leaves a valid store: phase 2 is one transaction; a
// pack published but not yet indexed, or removed from the index but still on
// disk, is indexed again by the next Store::Open and collected by the next gc.
#pragma once

#include <algorithm>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "store/reachability.h"
#include "store/store.h"

namespace strata {

struct GcOptions {
  // Packs whose live share of bytes is below this are rewritten (0 disables).
  double repack_threshold = 0.5;
  bool dry_run = false;  // report what would go; change nothing
  // Commits treated as forgotten besides those recorded (forget.h): what a
  // dry run of `forget --prune` would free.
  std::vector<Hash> also_forgotten;
  // Roots other than the refs (workspace bases, pins). Called once per
  // phase 1 and once under the lock of phase 2, so it must read them afresh.
  std::function<Result<std::vector<RootSet>>()> extra_roots;
  // Told what gc is doing or waiting for ("waiting for 2 writers..."); may be empty.
  std::function<void(std::string_view)> note;
  Progress* progress = nullptr;  // trees marked, bytes copied; may be null
};

struct GcReport {
  uint64_t roots = 0;
  uint64_t objects_before = 0, objects_deleted = 0;
  uint64_t bytes_deleted = 0;  // stored bytes of the deleted objects
  uint64_t packs_before = 0, packs_after = 0;
  uint64_t packs_removed = 0;   // removed whole: nothing live in them
  uint64_t packs_rewritten = 0; // their live objects copied, then removed
  uint64_t packs_written = 0;
  uint64_t bytes_copied = 0;    // stored bytes moved into new packs
  // The size of all packs at the start and at the end. Commits and imports
  // may add packs while gc runs, so the difference is not what gc freed:
  uint64_t pack_bytes_before = 0, pack_bytes_after = 0;
  // gc's own work: the size of the packs it removed (whole or rewritten) and
  // of the packs it wrote in their place.
  uint64_t pack_bytes_removed = 0, pack_bytes_written = 0;
  // What gc itself gave back to the disk.
  uint64_t reclaimed() const { return pack_bytes_removed - std::min(pack_bytes_removed, pack_bytes_written); }
  uint64_t trees_read = 0;
  double mark_ms = 0, delete_ms = 0, repack_ms = 0;
  double locked_ms = 0;  // total time the exclusive lock was held (writers waited)
};

// Marks in `walk` what the branches and `extra_roots` (may be empty) reach
// now; returns how many roots there were. Corruption, saying to run
// `fsck_command`, when a reachable object cannot be read: a walk that missed
// part of the graph must not decide what is garbage.
Result<uint64_t> MarkFromRoots(Store& store, Reachability& walk,
                               const std::function<Result<std::vector<RootSet>>()>& extra_roots,
                               const std::string& fsck_command);

// Refuses (Conflict) when another gc is running on the store. Aborts without
// deleting anything when a reachable object cannot be read: a walk that
// missed part of the graph must not decide what is garbage.
Result<GcReport> CollectGarbage(Store& store, const GcOptions& options);

}  // namespace strata
