// SqliteWorkspace: the Workspace interface on NamespaceDb + FileData.
//
// Files:
//   workspace.cc      Create/Open/List/Remove, crash recovery, Info
//   base_loader.cc    lazy loading of base directories, base hard links
//   namespace_ops.cc  lookups, creations, unlink, rename, readdir, attrs, xattrs, lifetime
//   data_ops.cc       Read, Write, Sync
//   commit_cut.cc     Commit: the cut (which directories and files, what they hold)
//   commit_ops.cc     Commit: capture, trees, publish, rebase (the commit builder)
//   snapshot_ops.cc   Snapshot: the commit builder's cut, capture and trees, nothing published
//   reset_ops.cc      Reset: a new base, and the content replaced by a tree
//   rebase_ops.cc     RebaseOnto: the changes merged onto another commit
//   data_range_ops.cc Allocate, SeekData, CopyRange
//   acl_ops.cc        POSIX ACLs: the mode kept in step, default ACLs inherited
//
// Locking: mu_ guards the database and refs_. Every operation that touches
// rows takes it for its whole transaction, so operations are serialised and
// atomic. Operations are committed in batches (group commit, namespace_db.h):
// a committer thread commits what gathered every kCommitDelay, and Sync()
// commits at once. Data files are removed or shortened only after the batch
// that stops referring to their bytes has committed, so a crash can lose
// recent operations but never leave an inode pointing at bytes already gone.
// Read() takes mu_ only to collect a ReadPlan and does its I/O (data files,
// base chunks) after releasing it, so readers never wait for each other's I/O.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <set>
#include <unordered_set>
#include <vector>

#include "util/mutex.h"
#include "util/time_ns.h"
#include "util/unique_fd.h"
#include "workspace/direct_access.h"
#include "workspace/file_data.h"
#include "workspace/file_space.h"
#include "workspace/space_reserve.h"
#include "workspace/namespace_db.h"
#include "workspace/workspace.h"

namespace strata::workspace_internal {

class ZeroChunk;  // rechunk.h

// User-caused error carrying errno err.
inline Status Errno(int err, const std::string& what) { return Status::IOError(what, err); }
// Store or database failure: keeps the message, always EIO.
Status AsEio(const Status& s, const std::string& context);
// Checks a name given by a user: ENAMETOOLONG over 255 bytes, EINVAL otherwise bad.
Status CheckName(std::string_view name);
// The id of this boot of the machine (Env::BootId); an error says the workspace
// cannot tell whether unsynced data may have been lost since it was last open.
Result<std::string> BootId(Env* env);

class SqliteWorkspace final : public Workspace, public DirectAccess {
 public:
  SqliteWorkspace(Store& store, std::string dir, WorkspaceInfo info, std::optional<Hash> base_root,
                  std::unique_ptr<NamespaceDb> db, std::unique_ptr<FileLock> lock);
  ~SqliteWorkspace() override;

  // Deletes inodes that have no names (left by a crash while they were open)
  // and data files of inodes that no longer exist.
  Status Recover();
  // After the machine restarted since the last open: data files short of
  // their extents (bytes a power cut took) are lengthened with zeros, and
  // said so in the log.
  Status RepairAfterRestart() REQUIRES(mu_);

  WorkspaceInfo Info() override;
  WorkspaceCounters Counters() override;
  using Workspace::Commit;
  Result<CommitOutcome> Commit(const CommitRequest& request, CommitProgress* progress) override;
  Result<WorkspaceSnapshot> Snapshot() override;
  void SetCaptureThreads(size_t threads) override { capture_threads_ = threads; }
  Result<ResetOutcome> Reset(const ResetRequest& request) override;
  Result<RebaseOutcome> RebaseOnto(const Hash& commit, const ConflictChoices& choices) override;

  Result<Attr> Lookup(InodeId parent, std::string_view name) override;
  Result<Attr> GetAttr(InodeId ino) override;
  Result<Attr> SetAttr(InodeId ino, const SetAttrRequest& req) override;
  Status NoteRead(InodeId ino, AtimeRule rule) override;
  Result<Attr> MakeNode(InodeId parent, std::string_view name, uint32_t mode, uint64_t rdev,
                        const Credentials& who) override;
  Result<Attr> MakeDirectory(InodeId parent, std::string_view name, uint32_t mode, const Credentials& who) override;
  Result<Attr> MakeSymlink(InodeId parent, std::string_view name, std::string_view target,
                           const Credentials& who) override;
  Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Status Unlink(InodeId parent, std::string_view name) override;
  Status RemoveDirectory(InodeId parent, std::string_view name) override;
  Status Rename(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                unsigned flags) override;
  Status RenameLeavingWhiteout(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                               unsigned flags, const Credentials& who) override;
  Result<std::vector<DirEntry>> ReadDirectory(InodeId dir, uint64_t offset, size_t max) override;
  Result<DirectoryState> GetDirectoryState(InodeId dir) override;

  using Workspace::Read;
  Result<size_t> Read(InodeId ino, uint64_t offset, size_t size, ReadTarget* out) override;
  Result<size_t> Write(InodeId ino, uint64_t offset, std::string_view data) override;
  bool WritesMayWait() const override { return capture_active_.load(std::memory_order_relaxed); }
  Status Sync(InodeId ino) override;
  Status Allocate(InodeId ino, int mode, uint64_t offset, uint64_t length) override;
  Result<uint64_t> SeekData(InodeId ino, uint64_t offset, int whence) override;
  Result<uint64_t> CopyRange(InodeId in, uint64_t in_offset, InodeId out, uint64_t out_offset,
                             uint64_t length) override;

  Status SetXattr(InodeId ino, std::string_view name, std::string_view value, int flags) override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Result<std::vector<std::string>> ListXattrs(InodeId ino) override;
  Status RemoveXattr(InodeId ino, std::string_view name) override;

  void Ref(InodeId ino) override;
  void Unref(InodeId ino, uint64_t count) override;
  uint64_t ContentSwaps() override { return content_swaps_.load(std::memory_order_acquire); }
  bool RefIfCurrent(InodeId ino, uint64_t swaps) override;
  std::vector<InodeId> HeldFiles() override;
  using DirectAccess::OpenDirect;
  Result<int> OpenDirect(InodeId ino, bool write, bool synced_writes) override;
  void CloseDirect(InodeId ino, bool write) override;
  void SetWriteHold(DirectWriteHold* hold) override;
  void FollowDataFileAtime() override;

 private:
  // ---- group commit (workspace.cc)
  // A batch is committed once operations pause for kCommitPause, and after
  // kCommitDelay at the latest while they keep coming: what was answered
  // reaches the WAL that soon, which is all a kill after `sync` can count on
  // (the kernel passes neither sync nor syncfs to the daemon).
  static constexpr std::chrono::milliseconds kCommitDelay{50};
  static constexpr std::chrono::microseconds kCommitPause{1000};
  static constexpr int kCheckpointPages = 1000;  // WAL pages that call for a checkpoint
  void CommitLoop() EXCLUDES(mu_);
  // A batch to commit, data files to release or shorten, or stopping_.
  bool HasCommitWork() REQUIRES(mu_);
  // Waits on commit_cv_ for at most `limit`; returns stopping_.
  bool WaitForStop(std::chrono::steady_clock::duration limit) REQUIRES(mu_);
  // Commits the batch, then removes and shortens the data files it released.
  Status CommitPending() REQUIRES(mu_);
  // Makes every committed batch durable (fdatasync of the WAL).
  Status SyncWal();
  // After SQLite rolled a batch back on its own: keeps in doomed_files_ only
  // the inodes whose deletion is still to be committed, and deletes again the
  // inodes without names that the kernel no longer holds.
  void ForgetLostDeletions() REQUIRES(mu_);
  // Commits each operation on its own while the space reserve is not held
  // (space_reserve.h), in groups otherwise.
  void SetSpaceMode() REQUIRES(mu_);
  // Before writing or allocating n bytes of file data: ENOSPC when that would
  // leave the database no room to commit (space_reserve.h).
  Status RoomForData(uint64_t n) REQUIRES(mu_) { return reserve_.RoomForData(n); }

  // ---- commit (commit_cut.cc, commit_ops.cc)
  struct CommitPlan;
  Status TakeCut(CommitPlan& plan) REQUIRES(mu_);
  // Counts each file captured in progress, if any.
  Status CaptureFiles(CommitPlan& plan, CommitProgress* progress = nullptr) EXCLUDES(mu_);  // takes mu_ between files
  // The parts of CaptureFiles (commit_capture.cc): one thread's loop over the
  // files, the next file for it, one file's capture, and a file's path for messages.
  struct CaptureRun;
  void CaptureLoop(CaptureRun& run) EXCLUDES(mu_);
  InodeId ClaimCapture() REQUIRES(mu_);
  Status CaptureFile(InodeId ino, CaptureRun& run, const Chunker& chunker, ZeroChunk& zero) EXCLUDES(mu_);
  static std::string CapturedPath(const CommitPlan& plan, InodeId ino);
  Status WriteTrees(CommitPlan& plan) EXCLUDES(mu_);    // no lock
  Status Rebase(CommitPlan& plan, const Hash& commit) EXCLUDES(mu_);  // takes mu_
  void EndCapture() EXCLUDES(mu_);  // an aborted commit lets writers go
  Status RecoverCommit() REQUIRES(mu_);  // a crash between branch move and rebase
  Result<std::string> PathOfDirectory(InodeId dir, std::map<InodeId, std::string>& cache) REQUIRES(mu_);
  // ---- snapshot (snapshot_ops.cc)
  // Cut, capture and trees without publishing. Leaves the capture active (and
  // every inode changed since the cut tracked in modified_since_cut_): the
  // caller ends it with EndCapture(), after using the tracking if it wants to.
  // exact: the cut waits for direct writers as a commit's does (a rebase);
  // without, files the kernel writes meanwhile may be seen mid-write (a
  // snapshot to look at: status, diff, stats).
  Result<WorkspaceSnapshot> BuildSnapshot(CommitPlan& plan, bool exact = false) EXCLUDES(mu_);  // takes mu_
  // ---- reset (reset_ops.cc)
  // Rebuilds the namespace as the tree `root` (loaded lazily) with the top
  // directory's metadata `meta`, based on commit `base`. Inodes the kernel
  // holds stay, without names; all others go. The root is marked changed
  // when `differs` (the content is not the base's tree). REQUIRES: mu_, no
  // file being captured (RebaseOnto calls it with its capture done but still
  // active, so that no commit starts meanwhile).
  Status ReplaceContent(const Hash& root, const RootMeta& meta, const Hash& base, bool differs,
                        StaleCaches* stale) REQUIRES(mu_);
  // What ReplaceContent hands the loader while it installs a tree, so that a
  // path walk or a listing the kernel is in the middle of never meets a gap:
  // directories the kernel holds keep their numbers where their path is a
  // directory in the new tree too, and a name in both the old and the new
  // listing of such a directory keeps its offset (reset_ops.cc).
  struct Replacement {
    std::unordered_map<std::string, InodeId> kept;  // path in the new tree -> inode number
    // Per kept directory (and the root): the offsets its old names had, and
    // the offset counter, which goes on.
    std::unordered_map<InodeId, std::unordered_map<std::string, uint64_t>> cookies;
    std::unordered_map<InodeId, uint64_t> next_cookie;
  };
  // Places the kept directories at their paths in the new tree, loading the
  // directories on the way and, eagerly, every kept directory the old
  // namespace had loaded. Inside ReplaceContent's transaction.
  Status PlaceKeptDirectories(const std::vector<std::pair<std::string, InodeId>>& kept,
                              const std::unordered_set<InodeId>& loaded, StaleCaches* stale) REQUIRES(mu_);
  // ---- rebase (rebase_ops.cc)
  // One attempt: false when the workspace changed while the merge was
  // computed (nothing was changed; try again). Takes mu_.
  Result<bool> TryRebase(const Hash& head_id, const strata::Commit& head, const ConflictChoices& choices,
                         RebaseOutcome* out) EXCLUDES(mu_);
  // A writer to a file being captured waits here (mu_ is released while it waits).
  void WaitForCapture(InodeId ino) REQUIRES(mu_);

  // ---- direct access (direct_ops.cc)
  // Before a cut: refuses new direct writers, has the write hold (if any)
  // hold the open ones off (*held releases them), and waits until no other
  // one of a file with a name is left; EBUSY after kDirectWriterWait. mu_ is
  // released meanwhile. The held files' sizes and mtimes are the inodes' on return.
  Status HoldDirectWriters(HeldDirectWrites* held) REQUIRES(mu_);
  // When the kernel may have written ino's data file since it was last
  // looked at: its size and mtime become the inode's, and all of it counts
  // as written. Inode() calls it, so every operation sees the file as the
  // kernel left it.
  Status RefreshDirect(InodeId ino) REQUIRES(mu_);
  // RefreshDirect of every file with direct writers.
  Status RefreshDirectWriters() REQUIRES(mu_);
  // Records synced_writers_ in the database (durably when `durable`).
  Status SaveSyncedWriters(bool durable) REQUIRES(mu_);
  // At Open: the files that had synced direct writers when the last process
  // ended take their size and mtime from their data files (direct_access.h).
  Status RecoverSyncedWriters() REQUIRES(mu_);
  // After the workspace itself changed the length of a file open for direct
  // access: the data file is made as long as the file again (the kernel reads
  // it to its end).
  Status MatchDirectLength(InodeId ino, uint64_t size) REQUIRES(mu_);

  // ---- helpers; all REQUIRE mu_ held (said by each, checked by clang).
  // ENOENT when gone; ENOSPC (or EIO) when the kernel holds it but its
  // creation was lost with a batch the database could not commit.
  Result<InodeRow> Inode(InodeId ino) REQUIRES(mu_);
  // A directory to look into or change: ENOENT, ENOTDIR, loaded from the base.
  Result<InodeRow> Directory(InodeId ino) REQUIRES(mu_);
  Attr ToAttr(const InodeRow& row) const REQUIRES(mu_);
  // Creates a new inode named name in parent from proto (type, mode, owner, ...).
  Result<Attr> CreateEntry(InodeId parent, std::string_view name, InodeRow proto, const Credentials& who) REQUIRES(mu_);
  // Rename and RenameLeavingWhiteout (a whiteout when whiteout_owner is set).
  Status RenameLocked(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                      unsigned flags, const Credentials* whiteout_owner) REQUIRES(mu_);
  // Drops one name of row (nlink - 1, or 0 for a directory); deletes the inode
  // if nothing refers to it any more. Sets *deleted so the caller removes the
  // data file after the transaction commits.
  Status DropLink(InodeRow& row, int64_t now, bool* deleted) REQUIRES(mu_);
  // Whether `ancestor` is `ino` or one of the directories above it.
  Result<bool> IsAncestor(InodeId ancestor, InodeId ino) REQUIRES(mu_);
  void Touch(InodeRow& dir, int64_t now) REQUIRES(mu_);  // an entry of dir changed

  // ---- POSIX ACLs (acl_ops.cc); all REQUIRE mu_ held, inside the caller's
  // transaction, which also writes row (ctime, changed) afterwards.
  // SetXattr of an ACL name: validates the value (EINVAL, EOPNOTSUPP); for
  // the access ACL sets row.mode's permission bits from it (clearing setgid
  // when kill_sgid) and stores it only when the mode cannot say it all.
  Status SetAcl(InodeRow& row, std::string_view name, std::string_view value, bool kill_sgid) REQUIRES(mu_);
  // RemoveXattr of an ACL name: an ACL that is not there is no error (ext4).
  Status RemoveAcl(const InodeRow& row, std::string_view name) REQUIRES(mu_);
  // After a chmod of row: its stored access ACL takes the new permission bits.
  Status ChmodAcl(const InodeRow& row) REQUIRES(mu_);
  // For a new inode in dir: restricts proto.mode by dir's default ACL, or by
  // umask when it has none; returns the ACL xattrs the new inode starts with.
  Result<std::vector<std::pair<std::string, std::string>>> InheritAcls(const InodeRow& dir, InodeRow& proto,
                                                                       uint32_t umask) REQUIRES(mu_);

  // ---- base_loader.cc
  // Inserts the entries of a base directory not yet loaded (no-op otherwise),
  // updating row. Runs inside the caller's transaction or its own.
  Status EnsureLoaded(InodeRow& dir) REQUIRES(mu_);
  // The inode of the base entry at `path` (from the root), for a hard link.
  Result<InodeId> ResolveBaseLink(const std::string& path) REQUIRES(mu_);
  Result<std::optional<InodeId>> FindBaseInode(const std::string& path, int depth) REQUIRES(mu_);
  // The path in the base tree an inode stands for ("" for the root), if any.
  Result<std::optional<std::string>> BasePathOf(InodeId ino) REQUIRES(mu_);
  // While a reset installs a tree: the kept directory that stands for the
  // directory entry e at path, taken once (nullopt: a new inode).
  std::optional<InodeId> TakeKeptDirectory(const TreeEntry& e, const std::string& path) REQUIRES(mu_);
  // The listing offset of a loaded entry `name` of dir.
  uint64_t CookieFor(InodeRow& dir, const std::string& name) REQUIRES(mu_);
  // Inserts the inode `ino` for base entry e (not a hard link) found at path.
  Status InsertBaseEntry(const TreeEntry& e, const std::string& path, InodeId parent, InodeId ino) REQUIRES(mu_);

  Store& store_;
  const std::string dir_;
  // The workspace lock. Lock order, across modules: mu_ before every lock of
  // the store (store.h), of the chunk cache and of FileData, which the
  // operations call into while holding it; none of those calls back up here.
  Mutex mu_;
  WorkspaceInfo info_ GUARDED_BY(mu_);  // base and branch move with commits
  // The tree base paths (origins) are paths in: the first base's root, or the
  // tree a reset put in place.
  std::optional<Hash> base_root_ GUARDED_BY(mu_);
  Replacement* replacing_ GUARDED_BY(mu_) = nullptr;  // set only while ReplaceContent runs
  std::unique_ptr<NamespaceDb> db_ GUARDED_BY(mu_);
  std::unordered_map<InodeId, uint64_t> refs_ GUARDED_BY(mu_);  // kernel references
  // Decoded base chunk lists of the files read last, each with the
  // base_chunks_generation() it was read under (data_ops.cc, BaseChunksOf).
  struct KnownBaseChunks {
    uint64_t generation = 0;
    std::shared_ptr<const BaseChunkList> list;
  };
  mutable std::unordered_map<InodeId, KnownBaseChunks> base_chunk_lists_ GUARDED_BY(mu_);  // a cache
  Result<std::shared_ptr<const BaseChunkList>> BaseChunksOf(InodeId ino) const REQUIRES(mu_);
  // Keeps chunks as ino's decoded base list (they must be the row's now).
  std::shared_ptr<const BaseChunkList> KeepBaseChunks(InodeId ino, std::vector<ChunkRef> chunks) const REQUIRES(mu_);
  mutable HeldBaseCache held_base_ GUARDED_BY(mu_);  // what files hold, for st_blocks (file_space.h)
  std::atomic<uint64_t> content_swaps_{0};       // ReplaceContent calls; written under mu_
  // Data files to delete / cut to their inode's size after the next commit.
  std::vector<InodeId> doomed_files_ GUARDED_BY(mu_);
  std::unordered_set<InodeId> shrunk_files_ GUARDED_BY(mu_);
  // Counters: the ones changed under mu_ are plain, the others atomic.
  WorkspaceCounters counters_ GUARDED_BY(mu_);  // commits, syncs, loads
  std::atomic<uint64_t> bytes_read_{0}, bytes_written_{0};
  // A commit's capture: the files not captured yet, those a writer waits for,
  // those a capture thread is on, and every inode changed since the cut. capture_active_ is written under
  // mu_ and atomic only for WritesMayWait, which reads it without.
  std::atomic<bool> capture_active_{false};
  std::unordered_set<InodeId> capturing_ GUARDED_BY(mu_);
  std::unordered_set<InodeId> wanted_ GUARDED_BY(mu_);
  std::unordered_set<InodeId> capture_claimed_ GUARDED_BY(mu_);  // in capturing_, a thread on each
  std::atomic<size_t> capture_threads_{1};  // SetCaptureThreads
  std::unordered_set<InodeId> modified_since_cut_ GUARDED_BY(mu_);
  // Files open for direct access (OpenDirect): their data file, how many
  // opens read and write it, and what the data file looked like when the
  // inode last took its size and mtime (and, following, its atime) from it.
  struct DirectUse {
    UniqueFd fd;  // the kernel's descriptor of the data file
    uint32_t readers = 0, writers = 0;
    int64_t seen_ctime_ns = 0, seen_atime_ns = 0;
    uint64_t seen_size = 0;
  };
  bool direct_atime_follows_ GUARDED_BY(mu_) = false;  // FollowDataFileAtime
  std::unordered_map<InodeId, DirectUse> direct_ GUARDED_BY(mu_);
  uint32_t direct_writes_held_ GUARDED_BY(mu_) = 0;  // cuts waiting for direct writers to close
  // Files with a direct writer opened with synced_writes, as noted durably
  // in the database (meta "synced_direct_writers") until their last direct
  // writer closes.
  std::set<InodeId> synced_writers_ GUARDED_BY(mu_);
  DirectWriteHold* write_hold_ GUARDED_BY(mu_) = nullptr;  // SetWriteHold
  CondVar direct_cv_;  // a direct writer closed
  CondVar capture_cv_;  // a file was captured
  CondVar commit_cv_;  // a batch was opened, or stopping_
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread committer_;
  FileData files_;
  SpaceReserve reserve_ GUARDED_BY(mu_);
  uint64_t lost_batches_seen_ GUARDED_BY(mu_) = 0;  // db_->lost_batches() when doomed_files_ was last checked
  uint64_t lost_batches_synced_ GUARDED_BY(mu_) = 0;  // db_->lost_batches() when Sync last reported them
  std::unique_ptr<FileLock> lock_;  // held while open: one daemon per workspace
};

}  // namespace strata::workspace_internal
