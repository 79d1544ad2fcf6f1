// SpaceReserve: room kept on the workspace's filesystem for its database, so
// that a full disk can still be un-filled.
//
// Freeing space in a workspace needs a database commit first: a deleted
// file's data goes only after the batch that forgets it has committed (a
// crash must not leave a name without its data). A commit that finds no room
// to grow the write-ahead log fails, and SQLite then rolls the whole batch
// back (every operation in it, already acknowledged to the kernel): nothing
// could ever be freed, and files just created would be lost. So a commit must
// never start without room.
//
// The room is kBytes, kept in one of two ways:
//   - held: a preallocated file `reserve`, which nobody else can fill. Data
//     writes go on until the disk is really full (ENOSPC from the kernel).
//   - released: when a commit is about to start with less than kBytes free,
//     the file is deleted first (MakeRoomForCommit), which gives the commit
//     its room. From then on, data writes that would leave less than kBytes
//     free are refused with ENOSPC (RoomForData), so the database keeps its
//     room for the commits that delete files. Once 2 * kBytes are free again
//     (files deleted, the store collected), the file is taken again.
// A batch needs at most a few hundred KiB of log in practice (its dirty
// pages); one that needs more than kBytes on a full disk can still fail. So
// while the reserve is not held, the workspace commits every operation before
// it answers (NamespaceDb::SetCommitEachOperation): an operation whose commit
// finds no room fails with ENOSPC instead of succeeding and being rolled back
// later with its batch.
//
// Thread-safety: none; the workspace calls it under its lock.
#pragma once

#include <cstdint>
#include <string>

#include "env/env.h"
#include "util/status.h"

namespace strata::workspace_internal {

class SpaceReserve {
 public:
  static constexpr uint64_t kBytes = 4ull << 20;
  // path: the reserve file, reached through env (which must outlive this);
  // its directory's filesystem is the one measured.
  SpaceReserve(Env* env, std::string path);

  // Allocates the reserve if it is not held; best effort (false: no room yet).
  bool Take();
  // Deletes the reserve; false if none was held.
  bool Release();
  bool held() const { return held_; }

  // Bytes the filesystem has for ordinary use (Env::FreeSpace: statvfs
  // f_bavail, also for root: see the .cc).
  uint64_t Available() const;

  // Before a database commit: releases the reserve if less than kBytes are
  // free. True if it did.
  bool MakeRoomForCommit();
  // Before writing (or allocating) n bytes of file data. Ok while the reserve
  // is held; otherwise takes it again if there is room for it and for n, and
  // fails with ENOSPC when n would leave the database less than kBytes.
  Status RoomForData(uint64_t n);
  // After a commit: takes the reserve again once 2 * kBytes are free.
  void Replenish();

 private:
  Env* const env_;
  const std::string path_;
  const std::string dir_;
  const std::string name_;  // of the file in dir_
  bool held_ = false;
};

}  // namespace strata::workspace_internal
