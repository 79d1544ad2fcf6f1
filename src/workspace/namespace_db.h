// NamespaceDb: the SQLite tables of one workspace (docs/format/workspace.md).
//
// This class only knows rows: it reads and writes inodes, directory entries,
// xattrs, extents and meta, with cached prepared statements. What the rows
// mean (POSIX rules, lazy loading, link counts) lives in SqliteWorkspace.
//
// Every failure of SQLite is a Status with errno EIO (the filesystem reports
// it as an I/O error and logs the message), except a full disk, which a user
// can cause: ENOSPC.
//
// Thread-safety: none. The owner serialises all calls (one mutex per workspace).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "util/hash.h"
#include "util/status.h"
#include "workspace/workspace.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strata::workspace_internal {

// One row of the inodes table, without the two columns that can be large or
// are only needed by the loader (base_chunks, origin): those have their own calls.
struct InodeRow {
  InodeId ino = 0;
  uint32_t mode = 0;
  uint32_t uid = 0, gid = 0;
  uint64_t size = 0;
  uint64_t rdev = 0;
  int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;
  uint32_t nlink = 0;
  std::string target;             // symlink text
  std::optional<Hash> base_tree;  // a base directory whose entries are not loaded yet
  uint64_t base_len = 0;          // leading bytes that still come from the base chunks
  bool changed = false;           // differs from the base (or is new)
  uint64_t next_cookie = 1;       // directories: the cookie the next entry gets
  InodeId parent = 0;             // directories: the one directory holding them
};

struct DentryRow {
  std::string name;
  InodeId ino = 0;
  uint32_t mode = 0;  // of the inode, for the entry's type
  uint64_t cookie = 0;
};

// A range [start, end) of data/<ino> that holds written bytes.
struct Extent {
  uint64_t start = 0, end = 0;
};

// ---- rows and meta values as stored, and what they mean
//
// workspace.db is a file: a damaged or hostile one must be an error (EIO),
// never an inode of no known type, a number that wraps when narrowed, or an
// extent that ends before it starts. These pure functions are the only way
// NamespaceDb and the workspace read what they decode.

// The columns GetInode reads, as SQLite hands them over.
struct InodeColumns {
  int64_t ino = 0, mode = 0, uid = 0, gid = 0, size = 0, rdev = 0;
  int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0, nlink = 0;
  std::string target;
  std::optional<std::string> base_tree;  // NULL or a BLOB
  int64_t base_len = 0, changed = 0, next_cookie = 0, parent = 0;
  bool operator==(const InodeColumns&) const = default;
};
// What InsertInode and UpdateInode write for row.
InodeColumns EncodeInodeRow(const InodeRow& row);
// EIO unless: ino > 0; mode is a known file type with permission bits only;
// uid, gid and nlink fit 32 bits; size, rdev, base_len, next_cookie and parent
// are not negative and base_len <= size; changed is 0 or 1; base_tree, when
// present, is 32 bytes.
Result<InodeRow> DecodeInodeRow(const InodeColumns& columns);

// An extents row: 0 <= start < end.
Result<Extent> DecodeExtentRow(int64_t start, int64_t end);

// A 32-byte id column (base_tree, tree_id).
Result<Hash> DecodeIdBlob(std::string_view blob, const char* what);

// meta "next_ino": decimal digits of a number above 1 (the root is 1).
std::string EncodeInodeCounter(InodeId next);
Result<InodeId> DecodeInodeCounter(std::string_view value);

// meta "base" and "base_root": an id in hex, or "" for none.
std::string EncodeMetaId(const std::optional<Hash>& id);
Result<std::optional<Hash>> DecodeMetaId(std::string_view value, const char* what);

// meta "committing": the commit being published and its branch, written
// before the branch moves so that a crash is recognised on the next Open
// (SqliteWorkspace::RecoverCommit); "" when no commit is under way.
struct CommittingRecord {
  Hash commit;
  std::string branch;  // a valid branch name
  bool operator==(const CommittingRecord&) const = default;
};
std::string EncodeCommittingRecord(const std::optional<CommittingRecord>& record);
Result<std::optional<CommittingRecord>> DecodeCommittingRecord(std::string_view value);

class NamespaceDb {
 public:
  // Opens (or creates) the database in WAL mode with synchronous=NORMAL.
  static Result<std::unique_ptr<NamespaceDb>> Open(const std::string& path, bool create);
  ~NamespaceDb();
  NamespaceDb(const NamespaceDb&) = delete;
  NamespaceDb& operator=(const NamespaceDb&) = delete;

  Status Exec(const char* sql);

  // ---- group commit
  // Operations do not commit one by one. The first operation after a commit
  // opens a write transaction (a batch); each operation is a savepoint inside
  // it, so it is still atomic: released when it succeeds, rolled back alone
  // when it fails. CommitBatch() commits every operation since the last one at
  // once; until then a kill of the process forgets them, as a power cut
  // forgets a local filesystem's unsynced changes.
  bool HasBatch() const { return batch_open_; }
  // Operations released into the open batch so far: a count that grows while
  // operations keep coming (the committer's sign that they paused).
  uint64_t BatchOperations() const { return batch_operations_; }
  // Commits the batch; *operations (if given) receives how many it held.
  Status CommitBatch(uint64_t* operations = nullptr);
  // Opens a batch now, before any operation, when none is open (and each
  // operation does not commit its own): a long run of reads, such as a
  // commit's cut, then shares one transaction instead of SQLite taking and
  // dropping its locks around every statement. It is committed as any batch.
  Status OpenBatch();
  // Called (with the owner's lock held) when an operation opens a new batch,
  // so the owner can schedule its commit.
  void OnBatchOpened(std::function<void()> f) { on_batch_opened_ = std::move(f); }
  // Batches SQLite rolled back on its own (a failed COMMIT or statement on a
  // full disk or after an I/O error), and the errno of the last one (ENOSPC
  // or EIO). Their operations are lost as in a crash, although the kernel
  // was told they succeeded.
  uint64_t lost_batches() const { return lost_batches_; }
  int lost_errno() const { return lost_errno_; }
  // Of those, the ones that held operations already answered as done (every
  // one but an operation refused under SetCommitEachOperation).
  uint64_t acknowledged_lost() const { return acknowledged_lost_; }
  // On: every operation commits its own batch before it returns, and fails
  // (ENOSPC on a full disk) when that commit fails; the operation is then
  // undone, and nothing answered as done can be rolled back later. For a
  // nearly full disk (space_reserve.h), where a batch may find no room.
  // REQUIRES: no batch open when it is switched on.
  void SetCommitEachOperation(bool on) { commit_each_ = on; }
  bool commit_each_operation() const { return commit_each_; }

  // ---- meta (key → value)
  Result<std::optional<std::string>> GetMeta(std::string_view key);
  Status SetMeta(std::string_view key, std::string_view value);
  // Takes `count` consecutive inode numbers from the counter in meta; returns the first.
  Result<InodeId> AllocateIno(uint64_t count = 1);

  // ---- inodes
  Result<std::optional<InodeRow>> GetInode(InodeId ino);
  Status InsertInode(const InodeRow& row, std::string_view base_chunks, const std::optional<std::string>& origin);
  // Writes every column of row except base_chunks and origin.
  Status UpdateInode(const InodeRow& row);
  // Deletes the row and the inode's xattrs and extents (not its entries).
  Status DeleteInode(InodeId ino);
  // The file's base chunk list (EncodeChunkList): its own row, or, for a list
  // kept by reference (SetBaseChunksRef), what the resolver makes of it.
  Result<std::string> GetBaseChunks(InodeId ino);
  Status SetBaseChunks(InodeId ino, std::string_view base_chunks);
  // Makes the file's base list the chunk list of the file entry `name` of the
  // store's tree `tree`, which holds it already: a commit records a large
  // list this way instead of writing it again (45 MB for a 10 GiB image in
  // 8 KiB chunks). The tree is one of the rows' store references.
  Status SetBaseChunksRef(InodeId ino, const Hash& tree, std::string_view name);
  // What GetBaseChunks calls for a list kept by reference; without one such
  // a list cannot be read (Unsupported). Set once, before any such read.
  using ListResolver = std::function<Result<std::string>(const Hash& tree, std::string_view name)>;
  void SetListResolver(ListResolver resolver) { resolver_ = std::move(resolver); }
  // A file a commit captured, as the rebase leaves it: its whole content is
  // now these base chunks (base_len = size), it is unchanged, and it has no
  // extents. Three statements where reading and rewriting the row took six.
  Status MarkCaptured(InodeId ino, std::string_view base_chunks);
  // Changes whenever a base chunk list may have changed (an inode inserted or
  // deleted, a list set, an operation undone, a batch lost); unique across
  // every NamespaceDb of the process, so a decoded list kept under one value
  // is still the row's while it lasts.
  uint64_t base_chunks_generation() const { return base_chunks_generation_; }
  Result<std::optional<std::string>> GetOrigin(InodeId ino);
  Result<std::optional<InodeId>> FindByOrigin(std::string_view origin);
  Status ClearOrigin(InodeId ino);  // the inode no longer stands for a base path
  Result<std::vector<InodeId>> InodesWithoutLinks();
  Result<std::vector<InodeId>> AllInodes();
  // Every store object the rows name: distinct trees (base_tree, tree_id, the
  // trees of lists kept by reference) and the raw base chunk lists of files
  // kept in rows (EncodeChunkList; decoded by the caller).
  Status StoreReferences(std::vector<Hash>* trees, std::vector<std::string>* chunk_lists);
  // Changed inodes. The root of a workspace that has no base yet is marked
  // changed from the start (its first commit must write it) but is no change
  // a listing shows: with_root false leaves it out.
  Result<uint64_t> CountChanged(bool with_root);
  Result<std::vector<InodeId>> ChangedInodes();
  // Directories: the id of the tree they had at the last commit (or when
  // loaded from the base); only meaningful while they are unchanged.
  Result<std::optional<Hash>> GetTreeId(InodeId ino);
  Status SetTreeId(InodeId ino, const std::optional<Hash>& id);
  Status ClearChanged(InodeId ino);
  // Every (parent, name) that refers to ino.
  Result<std::vector<std::pair<InodeId, std::string>>> NamesOf(InodeId ino);

  // ---- checkpoints
  // The connection never copies its WAL into the database file by itself:
  // that would stall an operation for the length of a checkpoint. Instead the
  // owner calls CheckpointAside() from a thread of its own, without its lock,
  // when WalPages() (the WAL's size after the last commit) has grown; it runs
  // on a second connection, concurrently with this one.
  int WalPages() const { return wal_pages_.load(std::memory_order_relaxed); }
  Status CheckpointAside();  // REQUIRES: one caller at a time
  Status CheckpointHere();   // on this connection, between batches: lets the WAL start over

  // While set, every inode written with changed = 1 or deleted is added to
  // *set (a commit learns what changed after its cut). nullptr stops it.
  void TrackChanges(std::unordered_set<InodeId>* set) { track_changed_ = set; }

  // ---- directory entries
  Result<std::optional<InodeId>> FindEntry(InodeId parent, std::string_view name);
  Status InsertEntry(InodeId parent, std::string_view name, InodeId ino, uint64_t cookie);
  Status DeleteEntry(InodeId parent, std::string_view name);
  Status SetEntryIno(InodeId parent, std::string_view name, InodeId ino);
  Result<bool> HasEntries(InodeId dir);
  Status DeleteAllEntries();  // every name of every directory (a reset)
  // Entries whose cookie is above `after`, by cookie, at most max.
  Result<std::vector<DentryRow>> ListEntries(InodeId dir, uint64_t after, size_t max);

  // ---- xattrs
  Result<std::optional<std::string>> GetXattr(InodeId ino, std::string_view name);
  Status PutXattr(InodeId ino, std::string_view name, std::string_view value);
  Result<bool> DeleteXattr(InodeId ino, std::string_view name);  // false: there was none
  Result<std::vector<std::string>> ListXattrs(InodeId ino);
  // The inodes named in directory dir that have xattrs: one query for a
  // directory, where asking ListXattrs of every entry took one each.
  Result<std::unordered_set<InodeId>> ChildrenWithXattrs(InodeId dir);

  // ---- extents
  // Every inode with extents and the end of its last one: how long its data
  // file must be (file_data.h).
  Result<std::vector<std::pair<InodeId, uint64_t>>> DataFileLengths();
  // Extents that overlap [start, end), by start.
  Result<std::vector<Extent>> Extents(InodeId ino, uint64_t start, uint64_t end);
  // Records [start, end) as written, merged with overlapping or adjacent extents.
  Status AddExtent(InodeId ino, uint64_t start, uint64_t end);
  // Forgets written bytes at or above size (truncate).
  Status ClipExtents(InodeId ino, uint64_t size);
  // Forgets written bytes in [start, end), splitting an extent across either edge.
  Status RemoveExtentRange(InodeId ino, uint64_t start, uint64_t end);
  // Following the extents of a file, so that what it holds (st_blocks,
  // file_space.h) is kept up to date without reading them all again: from
  // FollowExtents(ino) on, each AddExtent records the ranges it newly covers.
  // Any other change to the file's extents (clipped, removed, the inode
  // deleted), an operation undone or a batch lost stops the following.
  // TakeNewlyCovered moves what was recorded into *covered (disjoint ranges,
  // none covered before); false when ino is not followed (any more).
  void FollowExtents(InodeId ino);
  bool TakeNewlyCovered(InodeId ino, std::vector<Extent>* covered);

 private:
  friend class Query;
  friend class Transaction;
  NamespaceDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  // Opens the batch if needed and starts an operation's savepoint; *outer is
  // false when an operation is already running (nested calls join it).
  Status BeginOperation(bool* outer);
  Status StartBatch();  // BEGIN IMMEDIATE unless a batch is open
  Status EndOperation(bool success);
  void NoteLostBatch(const Status& why, bool acknowledged = true);
  // Commits the batch of the operation just released (commit_each_); on
  // failure makes sure it is rolled back and returns why.
  Status CommitOwnBatch();
  Status Run(const char* sql);  // a cached statement returning no rows
  sqlite3_stmt* Prepare(const char* sql);  // cached by the address of sql
  Status Error(const std::string& what) const;

  sqlite3* db_;
  const std::string path_;
  sqlite3* checkpointer_ = nullptr;  // CheckpointAside's own connection, opened on first use
  std::atomic<int> wal_pages_{0};
  std::unordered_map<const char*, sqlite3_stmt*> stmts_;
  bool batch_open_ = false;     // a write transaction holds uncommitted operations
  bool in_operation_ = false;   // an operation's savepoint is open
  uint64_t batch_operations_ = 0;  // operations released into the open batch
  uint64_t lost_batches_ = 0;
  uint64_t base_chunks_generation_ = NewBaseChunksGeneration();
  static uint64_t NewBaseChunksGeneration();
  // The list of a file from the base, in the base_chunks table (an empty one: no row).
  Status PutBaseChunkList(InodeId ino, std::string_view base_chunks);
  void BaseChunksMayHaveChanged() { base_chunks_generation_ = NewBaseChunksGeneration(); }
  ListResolver resolver_;
  // Followed inodes and the ranges AddExtent newly covered (FollowExtents).
  std::unordered_map<InodeId, std::vector<Extent>> followed_;
  void StopFollowing(InodeId ino) { followed_.erase(ino); }
  uint64_t acknowledged_lost_ = 0;
  int lost_errno_ = 0;
  bool commit_each_ = false;
  InodeId next_ino_floor_ = 0;  // AllocateIno never returns less (numbers of lost batches)
  std::unordered_set<InodeId>* track_changed_ = nullptr;
  std::function<void()> on_batch_opened_;
};

// One atomic operation (a savepoint in the current batch, see CommitBatch).
// Nested use joins the outer operation: only the outermost releases or rolls
// back, so a directory loaded lazily in the middle of an operation is part of
// that operation. Commit() makes the operation part of the batch; it is
// durable against a crash once the batch is committed.
class Transaction {
 public:
  explicit Transaction(NamespaceDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  const Status& status() const { return status_; }
  Status Commit();

 private:
  NamespaceDb& db_;
  bool owner_ = false;
  bool done_ = false;
  Status status_;
};

}  // namespace strata::workspace_internal
