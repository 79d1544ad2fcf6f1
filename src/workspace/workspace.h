// Workspace: a writable view of a base commit, kept in the store.
//
// A workspace is what a mount shows: the tree of its base commit plus every
// change made since. It knows nothing of FUSE (src/fs/ adapts it to the kernel);
// everything here is testable without a mount. It survives unmount, a daemon
// crash and a reboot: opening it again continues where it stopped.
//
// State (docs/format/workspace.md), under STORE/workspaces/<name>/:
//   workspace.db  SQLite in WAL mode, synchronous=NORMAL: inodes, directory
//                 entries, xattrs, the extents of changed file data, and meta
//                 (name, base commit, branch). Every operation is atomic;
//                 operations are committed in batches (group commit, every
//                 50 ms), and a committed one survives a kill of the daemon.
//                 Sync() commits at once and makes everything so far survive
//                 a power cut too (fdatasync of the WAL and of the data file).
//   data/<ino>    sparse file holding the bytes written to inode <ino>, at their
//                 file offsets. Which ranges hold written bytes is recorded in
//                 the extents table; other ranges read from the base file's
//                 chunks (up to base_len) or as zeros. A large base file
//                 changed in one place is therefore never copied whole.
//
// Base directories are loaded lazily: the root and every directory taken from
// the base commit start with their tree id only; their entries are read from the
// store and inserted the first time anything looks inside them. Opening a
// workspace on a commit of a million files is constant time.
//
// Errors: every failure a user can cause is a Status whose errno_value() is
// the errno a local filesystem would return (ENOENT, EEXIST, ENOTEMPTY,
// ENOTDIR, EISDIR, EINVAL, ENAMETOOLONG, EXDEV, ...); internal failures (store
// damage, I/O errors of our own files) carry EIO and a message for the log.
// Permission checks are the kernel's job (default_permissions); the workspace
// only enforces what the kernel cannot (sticky bit is the kernel's too).
//
// Thread-safety: all methods may be called concurrently (the FUSE session is
// multi-threaded). Implementations serialise mutations; reads of unchanged
// file data must not wait for each other.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "store/tree_merge.h"
#include "workspace/commit_progress.h"
#include "workspace/read_target.h"

namespace strata {

using InodeId = uint64_t;
constexpr InodeId kRootInode = 1;  // the same number FUSE uses for the root

struct Attr {
  InodeId ino = 0;
  uint32_t mode = 0;  // file type and permission bits, as st_mode
  uint32_t nlink = 0;
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
  uint64_t rdev = 0;
  int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;
  uint64_t blocks = 0;  // 512-byte units the file holds (workspace/file_space.h), for st_blocks
};

// Who creates an entry. The umask restricts a new entry's mode unless its
// directory has a default ACL, which then decides instead (POSIX ACLs, see
// the xattrs below).
struct Credentials {
  uint32_t uid = 0, gid = 0;
  uint32_t umask = 0;
};

// Changes for SetAttr; unset fields are left alone. Times are absolute (the
// caller resolves UTIME_NOW). Every successful SetAttr also sets ctime.
struct SetAttrRequest {
  std::optional<uint32_t> mode;  // permission bits only
  std::optional<uint32_t> uid, gid;
  std::optional<uint64_t> size;
  std::optional<int64_t> atime_ns, mtime_ns;
};

// When a read moves a file's atime (`strata mount --atime`, docs/guarantees.md).
enum class AtimeRule {
  kRelative,  // relatime: only when atime is not newer than mtime and ctime, or is a day old
  kStrict,    // strictatime: on every read
};

struct DirEntry {
  std::string name;
  InodeId ino = 0;
  uint32_t type = 0;    // S_IFMT bits of the entry
  uint64_t offset = 0;  // pass to ReadDirectory to continue after this entry
};

struct DirectoryState {
  InodeId parent = 0;       // the directory holding this one (the root's is itself)
  uint64_t end_offset = 0;  // entries created from now on get offsets above this
  // Its entries may change with no request to this workspace (a view that
  // follows the store, such as the past versions' own directories): a
  // listing of it must not be kept between opens.
  bool changes_unseen = false;
};

struct WorkspaceInfo {
  std::string name;
  std::optional<Hash> base;  // nullopt: started empty
  std::string branch;        // "" when not tracking a branch
  uint64_t changed_inodes = 0;
};

// What a workspace has done since it was opened (`strata stats MOUNTPOINT`).
struct WorkspaceCounters {
  // Inodes that differ from the base, now: despite the name, not the paths
  // status counts (cli/change_rows.h), which need a snapshot.
  uint64_t changed_paths = 0;
  uint64_t batches_committed = 0;     // group commits of the workspace database
  uint64_t operations_committed = 0;  // operations those batches held
  uint64_t commit_us_total = 0, commit_us_max = 0;
  uint64_t syncs = 0;               // Sync() calls (fsync, fsyncdir)
  uint64_t bytes_written = 0;       // by Write
  uint64_t bytes_read = 0;          // by Read, changed and base data alike
  uint64_t directories_loaded = 0;  // base directories read from the store on first use
  uint64_t data_files_to_delete = 0;  // released, their space not back yet (released_files.h)
  // The chunk cache of base file data (shared by the process's workspaces).
  uint64_t chunk_cache_hits = 0, chunk_cache_misses = 0, chunk_cache_waits = 0;
  // The rest of the read path of base data (process-wide too, but the store's).
  struct ReadPath {
    uint64_t demands = 0;            // chunks reads asked the cache for (hits + misses + waits)
    uint64_t fetches = 0;            // chunks loaded from the store (misses + read-ahead)
    uint64_t fetch_errors = 0;
    uint64_t fetches_in_flight_max = 0;
    uint64_t readahead_issued = 0;   // chunks prefetched after sequential reads
    uint64_t readahead_used = 0;     // of those, wanted by a read later
    uint64_t readahead_wasted = 0;   // evicted or failed before any read wanted them
    uint64_t readahead_skipped = 0;  // not prefetched: a read-ahead bound was reached
    uint64_t cache_bytes = 0, cache_capacity = 0;
    StoreReadCounters store;  // objects read, bytes verified, time per step (this workspace's store)
  } read_path;
};

// Sizes the process's cache of decoded base chunks (default 32 MiB), shared by
// its workspaces; read-ahead may fill at most half of it.
void SetChunkCacheCapacity(uint64_t bytes);

// What Commit() is asked to do.
struct CommitRequest {
  std::string message;
  std::string author;
  // The branch to move; "" means the workspace's own. A workspace that tracks
  // no branch yet starts tracking this one.
  std::string branch;
};

// What one commit did, for counters and benchmarks.
struct CommitStats {
  uint64_t changed_inodes = 0;       // inodes marked changed at the cut
  uint64_t directories_written = 0;  // trees built (every other one reused by id)
  uint64_t files_captured = 0;       // regular files whose chunk lists were recomputed
  uint64_t bytes_hashed = 0;         // file bytes chunked and hashed (not reused chunks)
  uint64_t objects_written = 0;      // objects new to the store
  double cut_ms = 0, capture_ms = 0, trees_ms = 0, publish_ms = 0, rebase_ms = 0;
};

struct CommitOutcome {
  std::optional<Hash> commit;  // nullopt: nothing to commit
  std::string branch;
  CommitStats stats;
};

// What the workspace's next commit would hold (Snapshot()): its top
// directory, as a commit would record it, without a commit.
struct WorkspaceSnapshot {
  std::optional<Hash> base;  // the base commit at the cut (nullopt: started empty, never committed)
  Hash root;                 // the root tree; every tree and chunk below it is in the store
  RootMeta root_meta;        // the top directory's own metadata
  bool differs = false;      // root or root_meta differ from the base commit's
  CommitStats stats;         // what building it cost (no commit object, no branch move)
};

// What Reset() is asked to do.
struct ResetRequest {
  Hash commit;        // the new base
  bool hard = false;  // the content becomes the commit's tree too (changes are discarded)
};

// What a Reset (or RebaseOnto) made stale in a kernel's caches: names it may
// have cached (positive or negative) and inodes whose attributes changed.
// The workspace knows nothing of FUSE; the mount adapter sends these on.
struct StaleCaches {
  std::vector<std::pair<InodeId, std::string>> entries;  // (directory, name)
  std::vector<InodeId> inodes;                           // attributes (and, for the root, its listing)
};

struct ResetOutcome {
  bool content_replaced = false;  // the namespace was rebuilt from the commit's tree
  bool differs = false;           // the content differs from the new base: the next commit holds it
  StaleCaches stale;
};

// What RebaseOnto() did.
struct RebaseOutcome {
  bool up_to_date = false;  // the base already was that commit: nothing was done
  // Paths both the workspace and the commit changed, differently. When there
  // are any, nothing was changed.
  std::vector<MergeConflict> conflicts;
  Hash root;             // the merged tree the workspace now holds
  bool differs = false;  // it differs from the new base's tree: the next commit holds the difference
  StaleCaches stale;     // what the kernel may have cached of the old namespace
};

// Rename flags (as renameat2).
constexpr unsigned kRenameNoReplace = 1;
constexpr unsigned kRenameExchange = 2;

// A SetXattr flag beside XATTR_CREATE / XATTR_REPLACE (see SetXattr).
constexpr int kSetAclKillSgid = 0x100;

// Allocate modes (the FALLOC_FL_* values of fallocate(2)); 0 allocates.
constexpr int kAllocKeepSize = 0x01;
constexpr int kAllocPunchHole = 0x02;
constexpr int kAllocZeroRange = 0x10;

class Workspace {
 public:
  // Creates workspace `name` on `base` (nullopt: an empty root), tracking
  // `branch` ("" for none). AlreadyExists (EEXIST) if the name is taken.
  static Status Create(Store& store, const std::string& name, const std::optional<Hash>& base,
                       const std::string& branch);
  // Opens an existing workspace, recovering from a crash if needed.
  static Result<std::unique_ptr<Workspace>> Open(Store& store, const std::string& name);
  static Result<std::vector<WorkspaceInfo>> List(Store& store);
  // Everything in the store a workspace still reads or will reuse: its base
  // commit, the trees its rows name (unloaded directories, the first base's
  // root for hard links, directories reused by id) and the base chunks of its
  // files. gc keeps them. Read from the workspace's database as last
  // committed, which always names a superset of what its live state uses:
  // new references come only from rows already named, or from commit, reset
  // and rebase, which commit their batch before ending their write session.
  struct StoreRefs {
    std::optional<Hash> base;
    std::vector<Hash> trees;
    std::vector<Hash> chunks;
  };
  static Result<StoreRefs> References(Store& store, const std::string& name);
  // Deletes a workspace's state. REQUIRES: not open anywhere.
  static Status Remove(Store& store, const std::string& name);
  // The directory holding a workspace's state; the daemon keeps its log,
  // mount record and control socket there too.
  static std::string StateDir(const Store& store, const std::string& name);
  // Refuses a state directory (or its data/) that is a link, or that is not
  // its user's own (env/trust.h): whoever can write it could make the daemon
  // write elsewhere. Open checks it; so does the daemon before its log.
  static Status CheckStateDir(const Store& store, const std::string& name);
  // Workspace names: the rules of branch names (IsValidRefName).

  virtual ~Workspace() = default;

  virtual WorkspaceInfo Info() = 0;
  virtual WorkspaceCounters Counters() = 0;

  // ---- history
  // Turns the workspace's changes into a commit whose parent is the base, and
  // moves the branch to it by compare-and-swap; the workspace is then based on
  // the new commit. The cut is taken at an operation boundary: operations
  // keep running during the commit; only a writer to a file being captured
  // waits until that file is captured. Conflict ("head moved") when the branch
  // no longer points at the base; then nothing changes in the workspace.
  // progress, when not null, counts how far the commit is, for another
  // thread to read while it runs (commit_progress.h).
  virtual Result<CommitOutcome> Commit(const CommitRequest& request, CommitProgress* progress) = 0;
  Result<CommitOutcome> Commit(const CommitRequest& request) { return Commit(request, nullptr); }
  // How many threads capture the changed files of the next commits and
  // snapshots; 0: sized by the machine; 1 by default, because two threads
  // measured slower than one on many small files already in the page cache
  // (docs/bench-journal/2026-12-03-commit-capture-threads.md). Their trees
  // are the same for any number; only the order of objects in the packs varies.
  virtual void SetCaptureThreads(size_t /*threads*/) {}
  // The trees the next commit would hold, written to the store and flushed,
  // without a commit object or a branch move. Taken as a commit's cut is (at
  // an operation boundary, costing what changed; only a writer to a file
  // being captured waits) and leaves the workspace as it was: its changes
  // stay changes for the next commit. Waits while a commit or another
  // snapshot of this workspace runs.
  // The trees are not reachable from any ref: a caller that keeps using them
  // holds a store write session (against garbage collection) until done.
  virtual Result<WorkspaceSnapshot> Snapshot() = 0;
  // Moves the base to request.commit; the branch stays. Without `hard` the
  // content stays (git's mixed reset): the next commit holds it relative to
  // the new base. With `hard` the content becomes the commit's tree: every
  // change is discarded, every name is new. Inodes the kernel still holds
  // (refs) live on without names, as files deleted while open: an open file
  // keeps reading (and writing) its old data, a held directory is empty, and
  // their numbers are never given to anything else. Except a held directory
  // whose path is a directory in the commit's tree too: it keeps its number
  // and becomes that directory (loaded at once if it was loaded), and its
  // names that both trees have keep their listing offsets, so that a lookup
  // through it or a listing in progress sees no gap (reset_ops.cc). The new
  // tree loads lazily (constant time); discarding costs the rows the
  // workspace holds.
  virtual Result<ResetOutcome> Reset(const ResetRequest& request) = 0;
  // Replays the workspace's changes (against its base) on `commit`: a
  // three-way merge (store/tree_merge.h) of the base's tree, the workspace's
  // snapshot and the commit's tree, which becomes the content, with `commit`
  // as the base; the branch stays. When a path was changed on both sides
  // differently, the conflicts are returned and nothing changes, unless
  // `choices` settles each of them (ours, theirs or both, tree_merge.h); a
  // choice for a path that is not in conflict is InvalidArgument and changes
  // nothing either. The content
  // is installed as a hard Reset installs a tree (every name is new but for
  // the held directories kept; what else the kernel holds lives on unnamed),
  // so the next commit holds exactly the
  // merged tree against `commit`. An operation that changes the workspace
  // while the merge is computed makes it start over (a few times, then
  // EBUSY). Waits while a commit or snapshot of this workspace runs.
  virtual Result<RebaseOutcome> RebaseOnto(const Hash& commit, const ConflictChoices& choices) = 0;

  // ---- namespace
  virtual Result<Attr> Lookup(InodeId parent, std::string_view name) = 0;
  virtual Result<Attr> GetAttr(InodeId ino) = 0;
  virtual Result<Attr> SetAttr(InodeId ino, const SetAttrRequest& req) = 0;
  // Sets a file's atime to now after a read, as `rule` says. Unlike SetAttr,
  // neither ctime nor what a commit sees changes (trees record no atime), so
  // a file only read stays unchanged against the base.
  virtual Status NoteRead(InodeId ino, AtimeRule rule) = 0;
  // Regular files, fifos, sockets, devices; mode includes the type bits.
  virtual Result<Attr> MakeNode(InodeId parent, std::string_view name, uint32_t mode, uint64_t rdev,
                                const Credentials& who) = 0;
  virtual Result<Attr> MakeDirectory(InodeId parent, std::string_view name, uint32_t mode,
                                     const Credentials& who) = 0;
  virtual Result<Attr> MakeSymlink(InodeId parent, std::string_view name, std::string_view target,
                                   const Credentials& who) = 0;
  virtual Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) = 0;
  virtual Result<std::string> ReadLink(InodeId ino) = 0;
  virtual Status Unlink(InodeId parent, std::string_view name) = 0;
  virtual Status RemoveDirectory(InodeId parent, std::string_view name) = 0;
  virtual Status Rename(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                        unsigned flags) = 0;
  // Rename with RENAME_WHITEOUT (what kernel overlayfs asks of its upper
  // layer): in the same operation, a whiteout (a character device 0:0, mode
  // 0, owned by `who`) takes the source's name. flags as Rename's, but not
  // kRenameExchange.
  virtual Status RenameLeavingWhiteout(InodeId parent, std::string_view name, InodeId new_parent,
                                       std::string_view new_name, unsigned flags, const Credentials& who) = 0;
  // Entries after `offset` (0: from the start), at most `max`, without "." and
  // "..". Offsets stay valid while the directory changes: an entry present
  // during the whole listing is returned exactly once.
  virtual Result<std::vector<DirEntry>> ReadDirectory(InodeId dir, uint64_t offset, size_t max) = 0;
  // What a listing needs besides the entries: ".." and where the directory
  // ends now, so that a listing stops even while entries keep being added.
  virtual Result<DirectoryState> GetDirectoryState(InodeId dir) = 0;

  // ---- data
  // Reads up to size bytes into out; fewer only at the end of the file.
  virtual Result<size_t> Read(InodeId ino, uint64_t offset, size_t size, ReadTarget* out) = 0;
  // The same into out[0, size).
  Result<size_t> Read(InodeId ino, uint64_t offset, size_t size, char* out) {
    ReadTarget target(out);
    return Read(ino, offset, size, &target);
  }
  // Writes data at offset; returns how much: all of it, or up to the largest
  // file (16 TiB - 4 KiB) when it reaches past that; EFBIG from there on.
  virtual Result<size_t> Write(InodeId ino, uint64_t offset, std::string_view data) = 0;
  // Whether a Write started now may wait for more than the disk: while a
  // commit, snapshot, reset or rebase holds a cut, a writer to a file not yet
  // captured waits until it is. A hint, read without the workspace's lock: a
  // cut taken just after it said false still makes that one writer wait.
  virtual bool WritesMayWait() const = 0;
  // Makes the inode's data and all committed namespace changes durable.
  virtual Status Sync(InodeId ino) = 0;

  // ---- ranges of data (fallocate, lseek SEEK_DATA/SEEK_HOLE, copy_file_range)
  // As fallocate(2) on [offset, offset + length) of a regular file, with what
  // ext4 shows afterwards:
  //   0                  the range reads as before; the size grows to
  //                      offset + length if that is larger
  //   kAllocKeepSize     the same, the size unchanged
  //   kAllocPunchHole | kAllocKeepSize
  //                      the range (up to the size) reads as zeros and is a
  //                      hole; the size unchanged
  //   kAllocZeroRange [| kAllocKeepSize]
  //                      the range reads as zeros; the size as for 0 [as for
  //                      kAllocKeepSize]
  // Space: allocating reserves disk space for the part of the range past the
  // bytes still taken from the base commit, so that writing there later does
  // not run out of space (the reservation fails with ENOSPC instead). It is
  // best effort: the base bytes are in the store and are not reserved again,
  // and a later truncation may drop the reservation. Punching frees the space
  // written bytes held. Every success sets mtime and ctime.
  // Errors: EOPNOTSUPP for other modes (and for punching without
  // kAllocKeepSize), EINVAL for length 0, EFBIG past the largest file
  // (16 TiB - 4 KiB, workspace/file_space.h), EISDIR,
  // ENODEV for special files.
  virtual Status Allocate(InodeId ino, int mode, uint64_t offset, uint64_t length) = 0;
  // As lseek(2) with whence SEEK_DATA or SEEK_HOLE: the first offset >= offset
  // where data (or a hole) starts. A hole reads as zeros and holds nothing:
  // never written, punched or zeroed, or cut by a truncation, and not from the
  // base commit. Base bytes are data, zeros or not. The end of the file is a
  // hole. Answers by 4 KiB block, as ext4: a block holding any data is data
  // from its start. ENXIO when offset >= size, and for SEEK_DATA when only holes follow;
  // EINVAL for another whence or a special file; EISDIR for a directory.
  virtual Result<uint64_t> SeekData(InodeId ino, uint64_t offset, int whence) = 0;
  // As copy_file_range(2): copies up to length bytes of in from in_offset to
  // out at out_offset and returns how many: fewer than asked past the end of
  // in, 0 from its end on. out grows to cover what was copied. Holes of in
  // stay holes in out. When out is empty and both offsets are 0 (cp), out
  // takes in's base chunks by reference instead of copying their bytes. Not
  // atomic: a writer of either file meanwhile may see or cause a partly copied
  // range, as on a local filesystem.
  // Errors (as copy_file_range(2)): EISDIR if either is a directory, EINVAL if
  // either is another non-regular file or the two ranges of one file overlap,
  // EOVERFLOW when an offset + length wraps, EFBIG when out_offset is at or
  // past the largest file (a copy reaching past it is cut short at it).
  virtual Result<uint64_t> CopyRange(InodeId in, uint64_t in_offset, InodeId out, uint64_t out_offset,
                                     uint64_t length) = 0;

  // ---- xattrs (flags: XATTR_CREATE / XATTR_REPLACE)
  // The two POSIX ACL xattrs, system.posix_acl_access and
  // system.posix_acl_default, are interpreted as ext4 does (posix_acl.h):
  // their values are validated (EINVAL, EOPNOTSUPP for another version), an
  // access ACL sets the mode's permission bits and is not stored when the
  // mode says it all (getxattr then gives ENODATA), chmod updates a stored
  // one, a default ACL exists only on directories (EACCES) and is inherited
  // by entries created there, removing an absent ACL succeeds, symlinks have
  // none (EOPNOTSUPP), and XATTR_CREATE / XATTR_REPLACE do not apply.
  // kSetAclKillSgid in flags: the caller is outside the file's group and not
  // privileged, so setting an access ACL clears the setgid bit (the kernel's
  // rule, which it leaves to a FUSE daemon).
  virtual Status SetXattr(InodeId ino, std::string_view name, std::string_view value, int flags) = 0;
  virtual Result<std::string> GetXattr(InodeId ino, std::string_view name) = 0;
  virtual Result<std::vector<std::string>> ListXattrs(InodeId ino) = 0;
  virtual Status RemoveXattr(InodeId ino, std::string_view name) = 0;

  // ---- lifetime: an inode with no names stays readable and writable while
  // the kernel holds references (lookups not yet forgotten, open files), and
  // is deleted when the last one goes. After a crash, Open() deletes inodes
  // that have no names.
  virtual void Ref(InodeId ino) = 0;
  virtual void Unref(InodeId ino, uint64_t count) = 0;
  // How many times a hard reset or a rebase has replaced the content. An
  // answer computed before a replacement may name an inode it deleted (one
  // the kernel held no reference to): RefIfCurrent() takes the reference
  // only if no replacement came between ContentSwaps() and it, so that the
  // caller looks again instead of handing the kernel a dead inode. Once the
  // reference is taken, a later replacement keeps the inode (unnamed) for as
  // long as the kernel holds it.
  virtual uint64_t ContentSwaps() = 0;
  virtual bool RefIfCurrent(InodeId ino, uint64_t swaps) = 0;
  // The regular files the kernel holds references to: the only ones whose
  // pages it can cache, so the only ones that can hold data written through
  // a shared mapping (or the writeback cache) that has not reached Write()
  // yet. The mount flushes them before a cut (fs/fuse_server.cc).
  virtual std::vector<InodeId> HeldFiles() = 0;
};

}  // namespace strata
