// Garbage collection of a remote store while other machines push to it and
// commit on it, with no lock: only the bucket's conditional writes and the
// leases and lists of gc_protocol.h (docs/format/remote.md has the protocol
// and why it never deletes what a concurrent writer will reference):
//
//  1. mark: the packs listed now and their objects (from pack footers where
//     the index keeps an object elsewhere), then everything the branches
//     (and `extra_roots`) reach. The unmarked objects are condemned.
//  2. announce: the list of condemned objects is written to
//     gc/condemned/<id>; writers that announce themselves after it store
//     those objects again instead of relying on them.
//  3. wait: at least `grace`, and until every lease written before the list
//     is gone (its writer finished) or has run out (plus `grace`, for a
//     request of its writer still in flight).
//  4. re-mark from the branches as they are now (the finished writers' new
//     heads), and delete the packs whose every object is still condemned and
//     unmarked, or was copied into a new pack in step 1b.
//
// Repacking (remote_repack.h) runs between steps 1 and 2: the live objects of
// mostly-dead and small packs, within a bound of bytes per run, are copied
// into new packs, uploaded and indexed before the list is written; the old
// packs then go in step 4 like garbage packs. A pack with a live object that
// was not copied stays whole.
//
// Killed at any point, it leaves a usable store: nothing is deleted before
// step 4, and what step 4 deletes was unreachable and relied on by no
// writer. Its list stays behind until it runs out (later gcs remove it);
// writers meanwhile store its objects again when they need them.
//
// Thread-safety: for one thread; any number of gcs may run on one remote.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "remote/s3_client.h"
#include "store/reachability.h"
#include "store/store.h"
#include "util/progress.h"

namespace strata {

struct RemoteGcOptions {
  // Longer than any request of a writer (its timeout): how long a request
  // sent before a lease ran out may still be on its way.
  std::chrono::milliseconds grace{std::chrono::minutes(15)};
  bool dry_run = false;  // mark and report what would go; write nothing
  // Packs whose live share of bytes is below this are rewritten (0: none);
  // small packs are merged too. At most this many bytes of packs are read
  // (and their live share uploaded) per run; 0 turns repacking off.
  double repack_threshold = 0.5;
  uint64_t max_repack_bytes = uint64_t{512} << 20;
  // Commits whose trees are not walked unless they are roots (forget.h).
  std::unordered_set<Hash> forgotten;
  // Roots other than the branches (this machine's workspaces of the
  // remote); called at each marking, so it must read them afresh.
  std::function<Result<std::vector<RootSet>>()> extra_roots;
  std::function<void(std::string_view)> note;  // what gc is doing or waiting for; may be empty
  Progress* progress = nullptr;                 // trees marked; may be null
};

struct RemoteGcReport {
  uint64_t roots = 0;
  uint64_t objects_before = 0;     // objects in the packs listed at the start
  uint64_t objects_condemned = 0;  // unreachable at the first marking
  uint64_t objects_deleted = 0;    // in the packs deleted
  uint64_t bytes_deleted = 0;      // their stored bytes
  uint64_t packs_before = 0, packs_deleted = 0;
  uint64_t pack_bytes_before = 0, pack_bytes_deleted = 0;
  uint64_t packs_kept_partly_live = 0;  // holding condemned objects beside live ones, not rewritten
  uint64_t packs_rewritten = 0;         // of packs_deleted: their live objects copied to new packs
  uint64_t packs_written = 0, pack_bytes_written = 0;  // the new packs
  uint64_t repack_bytes_read = 0;       // of the rewritten packs
  uint64_t leases_waited = 0;           // writers that had announced themselves before the list
  uint64_t leases_expired = 0;          // of which ran out (their writers died): removed
  uint64_t lists_removed = 0;           // run-out lists of earlier gcs
  uint64_t trees_read = 0;
  // Chosen for deletion, but the bucket did not say they went (a failed
  // multi-object delete, twice): not counted as deleted; the next gc finds
  // them again. The first reason the server gave.
  uint64_t packs_not_deleted = 0;
  std::string not_deleted_reason;
  double mark_ms = 0, repack_ms = 0, wait_ms = 0, delete_ms = 0;
  // The requests of each phase (the listing and the first marking are "mark").
  S3RequestCounts requests_mark, requests_repack, requests_wait, requests_delete;
};

// The commits `strata forget` let go of on the remote store (in its bucket,
// gc_protocol.h), and recording more; InvalidArgument unless it is one.
Result<std::unordered_set<Hash>> RemoteForgottenCommits(Store& store);
Status RecordRemoteForgotten(Store& store, const std::vector<Hash>& commits);

// The requests a remote store's client has sent so far; nullopt for a
// store that is not remote.
std::optional<S3RequestCounts> RemoteRequestCounts(Store& store);

// InvalidArgument unless `store` is a remote store. Corruption, before
// anything is written, when a reachable object cannot be read.
Result<RemoteGcReport> CollectRemoteGarbage(Store& store, const RemoteGcOptions& options);

}  // namespace strata
