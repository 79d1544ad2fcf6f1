#include "workspace/namespace_db.h"

#include <sqlite3.h>

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "store/store.h"
#include "util/sqlite_statement.h"
#include "util/sqlite_connection.h"

namespace strata::workspace_internal {

namespace {
Status BadRow(const std::string& what) { return Status::IOError("workspace database: " + what, EIO); }
bool Fits32(int64_t v) { return v >= 0 && v <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()); }
}  // namespace

InodeColumns EncodeInodeRow(const InodeRow& r) {
  InodeColumns c;
  c.ino = static_cast<int64_t>(r.ino);
  c.mode = r.mode;
  c.uid = r.uid;
  c.gid = r.gid;
  c.size = static_cast<int64_t>(r.size);
  c.rdev = static_cast<int64_t>(r.rdev);
  c.atime_ns = r.atime_ns;
  c.mtime_ns = r.mtime_ns;
  c.ctime_ns = r.ctime_ns;
  c.nlink = r.nlink;
  c.target = r.target;
  if (r.base_tree) c.base_tree = std::string(reinterpret_cast<const char*>(r.base_tree->bytes.data()), Hash::kSize);
  c.base_len = static_cast<int64_t>(r.base_len);
  c.changed = r.changed ? 1 : 0;
  c.next_cookie = static_cast<int64_t>(r.next_cookie);
  c.parent = static_cast<int64_t>(r.parent);
  return c;
}

Result<InodeRow> DecodeInodeRow(const InodeColumns& c) {
  if (c.ino <= 0) return BadRow("an inode row without an inode number");
  const std::string which = "inode " + std::to_string(c.ino);
  switch (c.mode & ~int64_t{07777}) {
    case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
      break;
    default:
      return BadRow(which + " has an unknown mode");
  }
  if (!Fits32(c.uid) || !Fits32(c.gid) || !Fits32(c.nlink)) return BadRow(which + " has an owner or link count out of range");
  if (c.size < 0 || c.rdev < 0 || c.base_len < 0 || c.base_len > c.size || c.next_cookie < 0 || c.parent < 0)
    return BadRow(which + " has a size, device, cookie or parent out of range");
  if (c.changed != 0 && c.changed != 1) return BadRow(which + " has a bad changed flag");
  InodeRow r;
  r.ino = static_cast<InodeId>(c.ino);
  r.mode = static_cast<uint32_t>(c.mode);
  r.uid = static_cast<uint32_t>(c.uid);
  r.gid = static_cast<uint32_t>(c.gid);
  r.size = static_cast<uint64_t>(c.size);
  r.rdev = static_cast<uint64_t>(c.rdev);
  r.atime_ns = c.atime_ns;
  r.mtime_ns = c.mtime_ns;
  r.ctime_ns = c.ctime_ns;
  r.nlink = static_cast<uint32_t>(c.nlink);
  r.target = c.target;
  if (c.base_tree) {
    STRATA_ASSIGN_OR_RETURN(Hash h, DecodeIdBlob(*c.base_tree, "base tree id"));
    r.base_tree = h;
  }
  r.base_len = static_cast<uint64_t>(c.base_len);
  r.changed = c.changed == 1;
  r.next_cookie = static_cast<uint64_t>(c.next_cookie);
  r.parent = static_cast<InodeId>(c.parent);
  return r;
}

Result<Extent> DecodeExtentRow(int64_t start, int64_t end) {
  if (start < 0 || end <= start) return BadRow("an extent that is empty or out of range");
  return Extent{static_cast<uint64_t>(start), static_cast<uint64_t>(end)};
}

Result<Hash> DecodeIdBlob(std::string_view blob, const char* what) {
  if (blob.size() != Hash::kSize) return BadRow(std::string("bad ") + what);
  return Hash::FromBytes(blob.data());
}

std::string EncodeInodeCounter(InodeId next) { return std::to_string(next); }

Result<InodeId> DecodeInodeCounter(std::string_view value) {
  InodeId ino = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ino);
  // One spelling per number: no sign, no leading zero; the root (1) is never handed out.
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || value[0] == '0' || ino < 2 ||
      ino > static_cast<InodeId>(std::numeric_limits<int64_t>::max()))
    return BadRow("bad inode counter");
  return ino;
}

std::string EncodeMetaId(const std::optional<Hash>& id) { return id ? id->ToHex() : std::string(); }

Result<std::optional<Hash>> DecodeMetaId(std::string_view value, const char* what) {
  if (value.empty()) return std::optional<Hash>();
  auto id = Hash::FromHex(value);
  if (!id) return BadRow(std::string("bad ") + what);
  return std::optional<Hash>(*id);
}

std::string EncodeCommittingRecord(const std::optional<CommittingRecord>& record) {
  return record ? record->commit.ToHex() + " " + record->branch : std::string();
}

Result<std::optional<CommittingRecord>> DecodeCommittingRecord(std::string_view value) {
  if (value.empty()) return std::optional<CommittingRecord>();
  const size_t space = value.find(' ');
  if (space == std::string_view::npos) return BadRow("bad 'committing' record");
  auto id = Hash::FromHex(value.substr(0, space));
  const std::string_view branch = value.substr(space + 1);
  if (!id || !IsValidRefName(branch)) return BadRow("bad 'committing' record");
  return std::optional<CommittingRecord>(CommittingRecord{*id, std::string(branch)});
}

namespace {

constexpr int kSchemaVersion = 4;

// Names and blobs are stored as BLOBs: file names are bytes, not text.
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS inodes(
  ino INTEGER PRIMARY KEY, mode INTEGER NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,
  size INTEGER NOT NULL, rdev INTEGER NOT NULL,
  atime_ns INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
  nlink INTEGER NOT NULL, target BLOB NOT NULL, base_tree BLOB, base_chunks BLOB NOT NULL,
  base_len INTEGER NOT NULL, changed INTEGER NOT NULL, next_cookie INTEGER NOT NULL,
  parent INTEGER NOT NULL, origin BLOB, tree_id BLOB);
CREATE INDEX IF NOT EXISTS inodes_by_origin ON inodes(origin) WHERE origin IS NOT NULL;
CREATE INDEX IF NOT EXISTS inodes_unlinked ON inodes(nlink) WHERE nlink = 0;
CREATE INDEX IF NOT EXISTS inodes_changed ON inodes(changed) WHERE changed = 1;
CREATE TABLE IF NOT EXISTS dentries(parent INTEGER NOT NULL, name BLOB NOT NULL, ino INTEGER NOT NULL,
  cookie INTEGER NOT NULL, PRIMARY KEY(parent, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dentries_by_cookie ON dentries(parent, cookie);
CREATE TABLE IF NOT EXISTS xattrs(ino INTEGER NOT NULL, name BLOB NOT NULL, value BLOB NOT NULL,
  PRIMARY KEY(ino, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dentries_by_ino ON dentries(ino);
CREATE TABLE IF NOT EXISTS extents(ino INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  PRIMARY KEY(ino, start)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS base_chunks(ino INTEGER PRIMARY KEY, list BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS base_chunk_refs(ino INTEGER PRIMARY KEY, tree BLOB NOT NULL, name BLOB NOT NULL);
)sql";

// Version 1 lacked the tree ids of loaded directories (and the index that finds
// an inode's names). Without a tree id a directory must be rebuilt by the next
// commit: marking the loaded ones changed makes it so.
const char* kUpgradeFrom1 = R"sql(
ALTER TABLE inodes ADD COLUMN tree_id BLOB;
CREATE INDEX IF NOT EXISTS dentries_by_ino ON dentries(ino);
UPDATE inodes SET changed = 1 WHERE (mode & 61440) = 16384 AND base_tree IS NULL;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

// Version 2 kept base chunk lists in the inode's row, which SQLite rewrites
// (or reads back whole to compare) on every update of the row: every write
// to a file paid for its whole list, 45 MB for a 10 GiB image in 8 KiB
// chunks. Lists of a chunk or more move to a table of their own.
const char* kUpgradeFrom2 = R"sql(
CREATE TABLE IF NOT EXISTS base_chunks(ino INTEGER PRIMARY KEY, list BLOB NOT NULL);
INSERT OR REPLACE INTO base_chunks(ino, list) SELECT ino, base_chunks FROM inodes WHERE length(base_chunks) > 1;
UPDATE inodes SET base_chunks = x'' WHERE length(base_chunks) > 1;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";

// Version 3 wrote every captured file's whole list into base_chunks at each
// commit, though the commit's tree holds it already: lists may now be kept by
// reference to that tree (SetBaseChunksRef). Nothing to convert.
const char* kUpgradeFrom3 = R"sql(
CREATE TABLE IF NOT EXISTS base_chunk_refs(ino INTEGER PRIMARY KEY, tree BLOB NOT NULL, name BLOB NOT NULL);
UPDATE meta SET value = '4' WHERE key = 'schema_version';
)sql";

}  // namespace

// A cached statement in use; reset (and its bindings cleared) when it goes away,
// so a statement is never left half-stepped.
class Query : public SqliteStatement {
 public:
  Query(NamespaceDb& db, const char* sql) : SqliteStatement(Borrow(db.db_, db.Prepare(sql))), db_(db) {}

  Query& Int(int i, int64_t v) {
    BindInt(i, v);
    return *this;
  }
  Query& Blob(int i, std::string_view v) {
    BindBlob(i, v);
    return *this;
  }
  Query& Text(int i, std::string_view v) {
    BindText(i, v);
    return *this;
  }
  Query& Null(int i) {
    BindNull(i);
    return *this;
  }
  // Runs a statement that returns no rows.
  Status Run(const char* what) {
    if (Step() != SQLITE_DONE) return db_.Error(what);
    return Status::Ok();
  }
  Status Error(const char* what) { return db_.Error(what); }

 private:
  NamespaceDb& db_;
};

Result<std::unique_ptr<NamespaceDb>> NamespaceDb::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  // NOMUTEX: the workspace's own mutex already serialises every call.
  // NOFOLLOW: no link anywhere in the path (the store's path is canonical).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0);
  if (OpenSqliteConnection(path, flags, &db) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    CloseSqliteConnection(db);
    return Status::IOError("opening workspace database " + path + ": " + msg, EIO);
  }
  std::unique_ptr<NamespaceDb> ndb(new NamespaceDb(db, path));
  sqlite3_busy_timeout(db, 10000);
  if (create) {
    // A new database is built in a directory no one else sees yet, and
    // Workspace::Create syncs the file once this connection has closed,
    // before the rename that makes it a workspace's. SQLite's own syncs (of
    // the rollback journal and the directory while the file turns to WAL,
    // of the WAL and of the closing checkpoint) would be five more disk
    // flushes on every workspace made, none of which a crash could keep
    // visible. Set before the switch to WAL, which is the first write.
    STRATA_RETURN_IF_ERROR(ndb->Exec("PRAGMA synchronous=OFF"));
  }
  // NORMAL: a committed transaction survives a crash of the process; Sync()
  // fdatasyncs the WAL when the user asks for more.
  // A larger page cache keeps a batch's dirty pages in memory until it commits.
  STRATA_RETURN_IF_ERROR(
      ndb->Exec((std::string("PRAGMA journal_mode=WAL; ") + (create ? "" : "PRAGMA synchronous=NORMAL; ") +
                 "PRAGMA cache_size=-32768; PRAGMA temp_store=MEMORY; PRAGMA journal_size_limit=16777216;")
                    .c_str()));
  // Replaces SQLite's automatic checkpoints (which are this same hook): see CheckpointAside.
  sqlite3_wal_hook(db, &NamespaceDb::OnWalCommit, ndb.get());
  if (create) {
    STRATA_RETURN_IF_ERROR(ndb->Exec(kSchema));
    STRATA_RETURN_IF_ERROR(ndb->SetMeta("schema_version", std::to_string(kSchemaVersion)));
  }
  STRATA_ASSIGN_OR_RETURN(auto version, ndb->GetMeta("schema_version"));
  for (const auto& [from, upgrade] : {std::pair{"1", kUpgradeFrom1}, std::pair{"2", kUpgradeFrom2}, std::pair{"3", kUpgradeFrom3}}) {
    if (!version || *version != from) continue;
    STRATA_RETURN_IF_ERROR(ndb->Exec("BEGIN IMMEDIATE"));
    if (Status s = ndb->Exec(upgrade); !s.ok()) {
      // The upgrade's error is the one to report. A ROLLBACK that fails too
      // loses nothing: closing the connection (on this return) rolls back.
      ndb->Exec("ROLLBACK").IgnoreError();
      return s;
    }
    STRATA_RETURN_IF_ERROR(ndb->Exec("COMMIT"));
    STRATA_ASSIGN_OR_RETURN(version, ndb->GetMeta("schema_version"));
  }
  if (!version) return Status::IOError("workspace database " + path + " has no schema version", EIO);
  if (*version != std::to_string(kSchemaVersion))
    return Status::Unsupported("workspace database " + path + " has schema version " + *version +
                               "; this strata reads " + std::to_string(kSchemaVersion));
  return ndb;
}

NamespaceDb::~NamespaceDb() {
  if (batch_open_) (void)Run("COMMIT");  // the owner normally committed already
  for (auto& [sql, st] : stmts_) sqlite3_finalize(st);
  CloseSqliteConnection(checkpointer_);
  CloseSqliteConnection(db_);  // the last connection to close checkpoints the whole WAL
}

Status NamespaceDb::CheckpointHere() {
  int log = 0, done = 0;
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK)
    return Error("checkpoint");
  return Status::Ok();
}

int NamespaceDb::OnWalCommit(void* self, sqlite3*, const char*, int pages) {
  static_cast<NamespaceDb*>(self)->wal_pages_.store(pages, std::memory_order_relaxed);
  return SQLITE_OK;
}

Status NamespaceDb::CheckpointAside() {
  if (checkpointer_ == nullptr) {
    if (OpenSqliteConnection(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, &checkpointer_) !=
        SQLITE_OK) {
      std::string msg = checkpointer_ ? sqlite3_errmsg(checkpointer_) : "out of memory";
      CloseSqliteConnection(checkpointer_);
      checkpointer_ = nullptr;
      return Status::IOError("workspace database: opening a checkpoint connection: " + msg, EIO);
    }
    sqlite3_busy_timeout(checkpointer_, 1000);
  }
  // PASSIVE: copies what it can without waiting for readers or the writer.
  int log = 0, done = 0;
  if (sqlite3_wal_checkpoint_v2(checkpointer_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK)
    return Status::IOError(std::string("workspace database: checkpoint: ") + sqlite3_errmsg(checkpointer_), EIO);
  return Status::Ok();
}

Status NamespaceDb::Error(const std::string& what) const {
  // A full disk (SQLITE_FULL, or an I/O error whose cause was ENOSPC: growing
  // the shared-memory index) is the user's to see as such.
  const int code = sqlite3_errcode(db_) & 0xff;
  const int sys = sqlite3_system_errno(db_);
  const bool full = code == SQLITE_FULL || (code == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT));
  return Status::IOError("workspace database: " + what + ": " + sqlite3_errmsg(db_), full ? ENOSPC : EIO);
}

Status NamespaceDb::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::IOError(std::string("workspace database: ") + msg, EIO);
  }
  return Status::Ok();
}

sqlite3_stmt* NamespaceDb::Prepare(const char* sql) {
  auto it = stmts_.find(sql);
  if (it != stmts_.end()) return it->second;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) != SQLITE_OK) return nullptr;
  stmts_[sql] = st;
  return st;
}

// ---- meta

Result<std::optional<std::string>> NamespaceDb::GetMeta(std::string_view key) {
  Query q(*this, "SELECT value FROM meta WHERE key = ?");
  q.Text(1, key);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return q.Error("reading meta");
  return std::optional<std::string>(q.ColBlob(0));
}

Status NamespaceDb::SetMeta(std::string_view key, std::string_view value) {
  Query q(*this, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  return q.Text(1, key).Blob(2, value).Run("writing meta");
}

Result<InodeId> NamespaceDb::AllocateIno(uint64_t count) {
  STRATA_ASSIGN_OR_RETURN(auto next, GetMeta("next_ino"));
  if (!next) return Status::IOError("workspace database has no inode counter", EIO);
  STRATA_ASSIGN_OR_RETURN(InodeId ino, DecodeInodeCounter(*next));
  // A batch rolled back by SQLite takes its counter with it, but the kernel
  // may still hold the numbers it handed out: never give them again.
  ino = std::max(ino, next_ino_floor_);
  STRATA_RETURN_IF_ERROR(SetMeta("next_ino", EncodeInodeCounter(ino + count)));
  next_ino_floor_ = ino + count;
  return ino;
}

// ---- inodes

namespace {
constexpr const char* kInodeColumns =
    "ino, mode, uid, gid, size, rdev, atime_ns, mtime_ns, ctime_ns, nlink, target, base_tree, base_len, "
    "changed, next_cookie, parent";
}  // namespace

Result<std::optional<InodeRow>> NamespaceDb::GetInode(InodeId ino) {
  static const std::string sql = std::string("SELECT ") + kInodeColumns + " FROM inodes WHERE ino = ?";
  Query q(*this, sql.c_str());
  q.Int(1, static_cast<int64_t>(ino));
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<InodeRow>();
  if (rc != SQLITE_ROW) return q.Error("reading an inode");
  InodeColumns c;
  c.ino = q.ColInt(0);
  c.mode = q.ColInt(1);
  c.uid = q.ColInt(2);
  c.gid = q.ColInt(3);
  c.size = q.ColInt(4);
  c.rdev = q.ColInt(5);
  c.atime_ns = q.ColInt(6);
  c.mtime_ns = q.ColInt(7);
  c.ctime_ns = q.ColInt(8);
  c.nlink = q.ColInt(9);
  c.target = q.ColBlob(10);
  if (!q.ColNull(11)) c.base_tree = q.ColBlob(11);
  c.base_len = q.ColInt(12);
  c.changed = q.ColInt(13);
  c.next_cookie = q.ColInt(14);
  c.parent = q.ColInt(15);
  STRATA_ASSIGN_OR_RETURN(InodeRow r, DecodeInodeRow(c));
  if (r.ino != ino) return BadRow("inode " + std::to_string(ino) + " read as another");
  return std::optional<InodeRow>(std::move(r));
}

Status NamespaceDb::InsertInode(const InodeRow& r, std::string_view base_chunks,
                                const std::optional<std::string>& origin) {
  BaseChunksMayHaveChanged();
  Query q(*this,
          "INSERT INTO inodes(ino, mode, uid, gid, size, rdev, atime_ns, mtime_ns, ctime_ns, nlink, target, "
          "base_tree, base_len, changed, next_cookie, parent, base_chunks, origin) "
          "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const InodeColumns c = EncodeInodeRow(r);
  q.Int(1, c.ino).Int(2, c.mode).Int(3, c.uid).Int(4, c.gid).Int(5, c.size).Int(6, c.rdev);
  q.Int(7, c.atime_ns).Int(8, c.mtime_ns).Int(9, c.ctime_ns).Int(10, c.nlink).Blob(11, c.target);
  if (c.base_tree) {
    q.Blob(12, *c.base_tree);
  } else {
    q.Null(12);
  }
  q.Int(13, c.base_len).Int(14, c.changed).Int(15, c.next_cookie).Int(16, c.parent);
  // A list of a chunk or more lives in base_chunks (kUpgradeFrom2 says why).
  q.Blob(17, base_chunks.size() > 1 ? std::string_view() : base_chunks);
  if (r.changed && track_changed_ != nullptr) track_changed_->insert(r.ino);
  if (origin) {
    q.Blob(18, *origin);
  } else {
    q.Null(18);
  }
  STRATA_RETURN_IF_ERROR(q.Run("inserting an inode"));
  if (base_chunks.size() <= 1) return Status::Ok();
  return PutBaseChunkList(r.ino, base_chunks);
}

Status NamespaceDb::UpdateInode(const InodeRow& r) {
  Query q(*this,
          "UPDATE inodes SET mode = ?, uid = ?, gid = ?, size = ?, rdev = ?, atime_ns = ?, mtime_ns = ?, "
          "ctime_ns = ?, nlink = ?, target = ?, base_tree = ?, base_len = ?, changed = ?, next_cookie = ?, "
          "parent = ? WHERE ino = ?");
  const InodeColumns c = EncodeInodeRow(r);
  q.Int(1, c.mode).Int(2, c.uid).Int(3, c.gid).Int(4, c.size).Int(5, c.rdev).Int(6, c.atime_ns);
  q.Int(7, c.mtime_ns).Int(8, c.ctime_ns).Int(9, c.nlink).Blob(10, c.target);
  if (c.base_tree) {
    q.Blob(11, *c.base_tree);
  } else {
    q.Null(11);
  }
  q.Int(12, c.base_len).Int(13, c.changed).Int(14, c.next_cookie).Int(15, c.parent).Int(16, c.ino);
  if (r.changed && track_changed_ != nullptr) track_changed_->insert(r.ino);
  return q.Run("updating an inode");
}

uint64_t NamespaceDb::NewBaseChunksGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Status NamespaceDb::PutBaseChunkList(InodeId ino, std::string_view base_chunks) {
  {
    Query q(*this, "DELETE FROM base_chunk_refs WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("writing base chunks"));
  }
  if (base_chunks.size() > 1) {
    Query q(*this, "INSERT OR REPLACE INTO base_chunks(ino, list) VALUES(?, ?)");
    return q.Int(1, ino).Blob(2, base_chunks).Run("writing base chunks");
  }
  Query q(*this, "DELETE FROM base_chunks WHERE ino = ?");
  return q.Int(1, ino).Run("writing base chunks");
}

Status NamespaceDb::DeleteInode(InodeId ino) {
  BaseChunksMayHaveChanged();
  {
    Query q(*this, "DELETE FROM base_chunks WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("deleting base chunks"));
  }
  {
    Query q(*this, "DELETE FROM base_chunk_refs WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("deleting base chunks"));
  }
  if (track_changed_ != nullptr) track_changed_->insert(ino);
  {
    Query q(*this, "DELETE FROM inodes WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("deleting an inode"));
  }
  {
    Query q(*this, "DELETE FROM xattrs WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("deleting xattrs"));
  }
  StopFollowing(ino);
  Query q(*this, "DELETE FROM extents WHERE ino = ?");
  return q.Int(1, ino).Run("deleting extents");
}

Result<std::string> NamespaceDb::GetBaseChunks(InodeId ino) {
  {
    Query ref(*this, "SELECT tree, name FROM base_chunk_refs WHERE ino = ?");
    ref.Int(1, ino);
    const int rc = ref.Step();
    if (rc == SQLITE_ROW) {
      STRATA_ASSIGN_OR_RETURN(Hash tree, DecodeIdBlob(ref.ColBlob(0), "chunk list tree"));
      const std::string name = ref.ColBlob(1);
      if (!resolver_) return Status::Unsupported("the base chunk list of inode " + std::to_string(ino) +
                                                 " is kept in tree " + tree.ToHex() + ", which is not read here");
      return resolver_(tree, name);
    }
    if (rc != SQLITE_DONE) return ref.Error("reading base chunks");
  }
  {
    Query list(*this, "SELECT list FROM base_chunks WHERE ino = ?");
    list.Int(1, ino);
    const int rc = list.Step();
    if (rc == SQLITE_ROW) return list.ColBlob(0);
    if (rc != SQLITE_DONE) return list.Error("reading base chunks");
  }
  Query q(*this, "SELECT base_chunks FROM inodes WHERE ino = ?");
  q.Int(1, ino);
  if (q.Step() != SQLITE_ROW) return q.Error("reading base chunks");
  return q.ColBlob(0);
}

Status NamespaceDb::SetBaseChunks(InodeId ino, std::string_view base_chunks) {
  BaseChunksMayHaveChanged();
  {
    Query q(*this, "UPDATE inodes SET base_chunks = ? WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(
        q.Blob(1, base_chunks.size() > 1 ? std::string_view() : base_chunks).Int(2, ino).Run("writing base chunks"));
  }
  return PutBaseChunkList(ino, base_chunks);
}

Status NamespaceDb::SetBaseChunksRef(InodeId ino, const Hash& tree, std::string_view name) {
  BaseChunksMayHaveChanged();
  {
    Query q(*this, "UPDATE inodes SET base_chunks = x'' WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("writing base chunks"));
  }
  {
    Query q(*this, "DELETE FROM base_chunks WHERE ino = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Run("writing base chunks"));
  }
  Query q(*this, "INSERT OR REPLACE INTO base_chunk_refs(ino, tree, name) VALUES(?, ?, ?)");
  const std::string_view id(reinterpret_cast<const char*>(tree.bytes.data()), tree.bytes.size());
  return q.Int(1, ino).Blob(2, id).Blob(3, name).Run("writing base chunks");
}

Status NamespaceDb::MarkCaptured(InodeId ino, std::string_view base_chunks) {
  BaseChunksMayHaveChanged();
  StopFollowing(ino);
  {
    Query q(*this, "UPDATE inodes SET base_len = size, changed = 0, base_chunks = ? WHERE ino = ?");
    q.Blob(1, base_chunks.size() > 1 ? std::string_view() : base_chunks).Int(2, ino);
    STRATA_RETURN_IF_ERROR(q.Run("marking a file captured"));
  }
  STRATA_RETURN_IF_ERROR(PutBaseChunkList(ino, base_chunks));
  Query q(*this, "DELETE FROM extents WHERE ino = ?");
  return q.Int(1, ino).Run("marking a file captured");
}

Result<std::optional<Hash>> NamespaceDb::GetTreeId(InodeId ino) {
  Query q(*this, "SELECT tree_id FROM inodes WHERE ino = ?");
  q.Int(1, ino);
  if (q.Step() != SQLITE_ROW) return q.Error("reading a tree id");
  if (q.ColNull(0)) return std::optional<Hash>();
  STRATA_ASSIGN_OR_RETURN(Hash id, DecodeIdBlob(q.ColBlob(0), "tree id"));
  return std::optional<Hash>(id);
}

Status NamespaceDb::SetTreeId(InodeId ino, const std::optional<Hash>& id) {
  Query q(*this, "UPDATE inodes SET tree_id = ? WHERE ino = ?");
  if (id) {
    q.Blob(1, std::string_view(reinterpret_cast<const char*>(id->bytes.data()), Hash::kSize));
  } else {
    q.Null(1);
  }
  return q.Int(2, ino).Run("writing a tree id");
}

Status NamespaceDb::ClearChanged(InodeId ino) {
  Query q(*this, "UPDATE inodes SET changed = 0 WHERE ino = ?");
  return q.Int(1, ino).Run("clearing changed");
}

Result<std::vector<std::pair<InodeId, std::string>>> NamespaceDb::NamesOf(InodeId ino) {
  Query q(*this, "SELECT parent, name FROM dentries WHERE ino = ?");
  q.Int(1, ino);
  std::vector<std::pair<InodeId, std::string>> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.emplace_back(q.ColInt(0), q.ColBlob(1));
  if (rc != SQLITE_DONE) return q.Error("finding an inode's names");
  return out;
}

Result<std::optional<std::string>> NamespaceDb::GetOrigin(InodeId ino) {
  Query q(*this, "SELECT origin FROM inodes WHERE ino = ?");
  q.Int(1, ino);
  if (q.Step() != SQLITE_ROW) return q.Error("reading an origin");
  if (q.ColNull(0)) return std::optional<std::string>();
  return std::optional<std::string>(q.ColBlob(0));
}

Result<std::optional<InodeId>> NamespaceDb::FindByOrigin(std::string_view origin) {
  Query q(*this, "SELECT ino FROM inodes WHERE origin = ?");
  q.Blob(1, origin);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<InodeId>();
  if (rc != SQLITE_ROW) return q.Error("finding a base path");
  return std::optional<InodeId>(q.ColInt(0));
}

Status NamespaceDb::ClearOrigin(InodeId ino) {
  Query q(*this, "UPDATE inodes SET origin = NULL WHERE ino = ?");
  return q.Int(1, ino).Run("clearing an origin");
}

namespace {
Result<std::vector<InodeId>> CollectIds(Query& q) {
  std::vector<InodeId> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(q.ColInt(0));
  if (rc != SQLITE_DONE) return q.Error("listing inodes");
  return out;
}
}  // namespace

Result<std::vector<InodeId>> NamespaceDb::InodesWithoutLinks() {
  Query q(*this, "SELECT ino FROM inodes WHERE nlink = 0");
  return CollectIds(q);
}

Result<std::vector<InodeId>> NamespaceDb::AllInodes() {
  Query q(*this, "SELECT ino FROM inodes");
  return CollectIds(q);
}

Status NamespaceDb::StoreReferences(std::vector<Hash>* trees, std::vector<std::string>* chunk_lists) {
  Query q(*this,
          "SELECT base_tree FROM inodes WHERE base_tree IS NOT NULL UNION "
          "SELECT tree_id FROM inodes WHERE tree_id IS NOT NULL UNION "
          "SELECT tree FROM base_chunk_refs");
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    STRATA_ASSIGN_OR_RETURN(Hash id, DecodeIdBlob(q.ColBlob(0), "tree id"));
    trees->push_back(id);
  }
  if (rc != SQLITE_DONE) return q.Error("listing trees");
  Query chunks(*this, "SELECT list FROM base_chunks WHERE length(list) > 1 UNION ALL "
                         "SELECT base_chunks FROM inodes WHERE length(base_chunks) > 1");
  while ((rc = chunks.Step()) == SQLITE_ROW) chunk_lists->push_back(chunks.ColBlob(0));
  if (rc != SQLITE_DONE) return chunks.Error("listing chunk lists");
  return Status::Ok();
}

Result<std::vector<InodeId>> NamespaceDb::ChangedInodes() {
  Query q(*this, "SELECT ino FROM inodes WHERE changed = 1");
  return CollectIds(q);
}

Result<uint64_t> NamespaceDb::CountChanged(bool with_root) {
  Query q(*this, with_root ? "SELECT count(*) FROM inodes WHERE changed = 1"
                           : "SELECT count(*) FROM inodes WHERE changed = 1 AND ino != 1");
  if (q.Step() != SQLITE_ROW) return q.Error("counting changed inodes");
  return static_cast<uint64_t>(q.ColInt(0));
}

// ---- directory entries

Result<std::optional<InodeId>> NamespaceDb::FindEntry(InodeId parent, std::string_view name) {
  Query q(*this, "SELECT ino FROM dentries WHERE parent = ? AND name = ?");
  q.Int(1, parent).Blob(2, name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<InodeId>();
  if (rc != SQLITE_ROW) return q.Error("looking up an entry");
  return std::optional<InodeId>(q.ColInt(0));
}

Status NamespaceDb::InsertEntry(InodeId parent, std::string_view name, InodeId ino, uint64_t cookie) {
  Query q(*this, "INSERT INTO dentries(parent, name, ino, cookie) VALUES(?, ?, ?, ?)");
  return q.Int(1, parent).Blob(2, name).Int(3, ino).Int(4, cookie).Run("inserting an entry");
}

Status NamespaceDb::DeleteEntry(InodeId parent, std::string_view name) {
  Query q(*this, "DELETE FROM dentries WHERE parent = ? AND name = ?");
  return q.Int(1, parent).Blob(2, name).Run("deleting an entry");
}

Status NamespaceDb::SetEntryIno(InodeId parent, std::string_view name, InodeId ino) {
  Query q(*this, "UPDATE dentries SET ino = ? WHERE parent = ? AND name = ?");
  return q.Int(1, ino).Int(2, parent).Blob(3, name).Run("updating an entry");
}

Result<bool> NamespaceDb::HasEntries(InodeId dir) {
  Query q(*this, "SELECT 1 FROM dentries WHERE parent = ? LIMIT 1");
  q.Int(1, dir);
  int rc = q.Step();
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) return q.Error("checking a directory");
  return false;
}

Status NamespaceDb::DeleteAllEntries() { return Run("DELETE FROM dentries"); }

Result<std::vector<DentryRow>> NamespaceDb::ListEntries(InodeId dir, uint64_t after, size_t max) {
  Query q(*this,
          "SELECT d.name, d.ino, i.mode, d.cookie FROM dentries d JOIN inodes i ON i.ino = d.ino "
          "WHERE d.parent = ? AND d.cookie > ? ORDER BY d.cookie LIMIT ?");
  q.Int(1, dir).Int(2, static_cast<int64_t>(after)).Int(3, static_cast<int64_t>(std::min<size_t>(max, INT64_MAX)));
  std::vector<DentryRow> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    out.push_back(DentryRow{q.ColBlob(0), static_cast<InodeId>(q.ColInt(1)), static_cast<uint32_t>(q.ColInt(2)),
                            static_cast<uint64_t>(q.ColInt(3))});
  }
  if (rc != SQLITE_DONE) return q.Error("listing a directory");
  return out;
}

// ---- xattrs

Result<std::optional<std::string>> NamespaceDb::GetXattr(InodeId ino, std::string_view name) {
  Query q(*this, "SELECT value FROM xattrs WHERE ino = ? AND name = ?");
  q.Int(1, ino).Blob(2, name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return q.Error("reading an xattr");
  return std::optional<std::string>(q.ColBlob(0));
}

Status NamespaceDb::PutXattr(InodeId ino, std::string_view name, std::string_view value) {
  Query q(*this, "INSERT OR REPLACE INTO xattrs(ino, name, value) VALUES(?, ?, ?)");
  return q.Int(1, ino).Blob(2, name).Blob(3, value).Run("writing an xattr");
}

Result<bool> NamespaceDb::DeleteXattr(InodeId ino, std::string_view name) {
  Query q(*this, "DELETE FROM xattrs WHERE ino = ? AND name = ?");
  STRATA_RETURN_IF_ERROR(q.Int(1, ino).Blob(2, name).Run("deleting an xattr"));
  return sqlite3_changes(db_) > 0;
}

Result<std::unordered_set<InodeId>> NamespaceDb::ChildrenWithXattrs(InodeId dir) {
  Query q(*this, "SELECT DISTINCT x.ino FROM dentries d JOIN xattrs x ON x.ino = d.ino WHERE d.parent = ?");
  q.Int(1, dir);
  std::unordered_set<InodeId> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.insert(static_cast<InodeId>(q.ColInt(0)));
  if (rc != SQLITE_DONE) return q.Error("listing xattrs");
  return out;
}

Result<std::vector<std::string>> NamespaceDb::ListXattrs(InodeId ino) {
  Query q(*this, "SELECT name FROM xattrs WHERE ino = ? ORDER BY name");
  q.Int(1, ino);
  std::vector<std::string> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(q.ColBlob(0));
  if (rc != SQLITE_DONE) return q.Error("listing xattrs");
  return out;
}

// ---- extents
//
// Extents of one inode never overlap and never touch (AddExtent merges), so
// the only extent that can start before a position and reach past it is the
// last one starting at or before it: two indexed probes find every candidate.

Result<std::vector<std::pair<InodeId, uint64_t>>> NamespaceDb::DataFileLengths() {
  std::vector<std::pair<InodeId, uint64_t>> out;
  Query q(*this, "SELECT ino, MAX(end) FROM extents GROUP BY ino");
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    STRATA_ASSIGN_OR_RETURN(Extent e, DecodeExtentRow(0, q.ColInt(1)));
    if (q.ColInt(0) <= 0) return Status::IOError("workspace database: an extent of inode " + std::to_string(q.ColInt(0)), EIO);
    out.emplace_back(static_cast<InodeId>(q.ColInt(0)), e.end);
  }
  if (rc != SQLITE_DONE) return q.Error("reading extents");
  return out;
}

Result<std::vector<Extent>> NamespaceDb::Extents(InodeId ino, uint64_t start, uint64_t end) {
  std::vector<Extent> out;
  // Appends every row of q, in order.
  auto rest = [&out](Query& q) -> Result<std::vector<Extent>> {
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      STRATA_ASSIGN_OR_RETURN(Extent e, DecodeExtentRow(q.ColInt(0), q.ColInt(1)));
      out.push_back(e);
    }
    if (rc != SQLITE_DONE) return q.Error("reading extents");
    return std::move(out);
  };
  if (start == 0) {
    // Nothing starts before 0: one probe (a commit asks this of every file
    // it captures). An extent at 0 is found even for an empty range, as the
    // first probe below finds it.
    Query q(*this, "SELECT start, end FROM extents WHERE ino = ? AND start < ? ORDER BY start");
    q.Int(1, ino).Int(2, static_cast<int64_t>(std::max<uint64_t>(end, 1)));
    return rest(q);
  }
  {
    Query q(*this, "SELECT start, end FROM extents WHERE ino = ? AND start <= ? ORDER BY start DESC LIMIT 1");
    q.Int(1, ino).Int(2, static_cast<int64_t>(start));
    int rc = q.Step();
    if (rc == SQLITE_ROW) {
      STRATA_ASSIGN_OR_RETURN(Extent e, DecodeExtentRow(q.ColInt(0), q.ColInt(1)));
      if (e.end > start) out.push_back(e);
    } else if (rc != SQLITE_DONE) {
      return q.Error("reading extents");
    }
  }
  Query q(*this, "SELECT start, end FROM extents WHERE ino = ? AND start > ? AND start < ? ORDER BY start");
  q.Int(1, ino).Int(2, static_cast<int64_t>(start)).Int(3, static_cast<int64_t>(end));
  return rest(q);
}

namespace {

// Bounds on what following extents keeps: a file written in more new ranges
// between two looks than this is counted again whole.
constexpr size_t kMaxFollowed = 64;
constexpr size_t kMaxNewlyCovered = 4096;

}  // namespace

void NamespaceDb::FollowExtents(InodeId ino) {
  if (followed_.size() >= kMaxFollowed && followed_.count(ino) == 0) followed_.clear();
  followed_[ino].clear();
}

bool NamespaceDb::TakeNewlyCovered(InodeId ino, std::vector<Extent>* covered) {
  auto it = followed_.find(ino);
  if (it == followed_.end()) return false;
  covered->clear();
  covered->swap(it->second);
  return true;
}

Status NamespaceDb::AddExtent(InodeId ino, uint64_t start, uint64_t end) {
  // Widen by one on both sides so that adjacent extents are found and merged too.
  STRATA_ASSIGN_OR_RETURN(auto near, Extents(ino, start == 0 ? 0 : start - 1, end + 1));
  if (auto followed = followed_.find(ino); followed != followed_.end()) {
    // What [start, end) adds: the gaps the extents near it leave (sorted, disjoint).
    uint64_t pos = start;
    for (const Extent& x : near) {
      if (x.start > pos && pos < end) followed->second.push_back(Extent{pos, std::min(x.start, end)});
      pos = std::max(pos, x.end);
    }
    if (pos < end) followed->second.push_back(Extent{pos, end});
    if (followed->second.size() > kMaxNewlyCovered) followed_.erase(followed);
  }
  // The two cases of most writes, in one statement or none: a rewrite inside
  // bytes already written, and an append to the extent that ends where it starts.
  if (near.size() == 1 && near[0].start <= start) {
    if (near[0].end >= end) return Status::Ok();
    Query q(*this, "UPDATE extents SET end = ? WHERE ino = ? AND start = ?");
    q.Int(1, static_cast<int64_t>(end)).Int(2, ino).Int(3, static_cast<int64_t>(near[0].start));
    return q.Run("extending an extent");
  }
  uint64_t s = start, e = end;
  for (const Extent& x : near) {
    s = std::min(s, x.start);
    e = std::max(e, x.end);
    Query q(*this, "DELETE FROM extents WHERE ino = ? AND start = ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Int(2, static_cast<int64_t>(x.start)).Run("deleting an extent"));
  }
  Query q(*this, "INSERT INTO extents(ino, start, end) VALUES(?, ?, ?)");
  return q.Int(1, ino).Int(2, static_cast<int64_t>(s)).Int(3, static_cast<int64_t>(e)).Run("adding an extent");
}

Status NamespaceDb::ClipExtents(InodeId ino, uint64_t size) {
  StopFollowing(ino);
  {
    Query q(*this, "DELETE FROM extents WHERE ino = ? AND start >= ?");
    STRATA_RETURN_IF_ERROR(q.Int(1, ino).Int(2, static_cast<int64_t>(size)).Run("clipping extents"));
  }
  Query q(*this, "UPDATE extents SET end = ? WHERE ino = ? AND start < ? AND end > ?");
  q.Int(1, static_cast<int64_t>(size)).Int(2, ino).Int(3, static_cast<int64_t>(size)).Int(4, static_cast<int64_t>(size));
  return q.Run("clipping extents");
}

Status NamespaceDb::RemoveExtentRange(InodeId ino, uint64_t start, uint64_t end) {
  StopFollowing(ino);
  STRATA_ASSIGN_OR_RETURN(auto hit, Extents(ino, start, end));
  for (const Extent& x : hit) {
    {
      Query q(*this, "DELETE FROM extents WHERE ino = ? AND start = ?");
      STRATA_RETURN_IF_ERROR(q.Int(1, ino).Int(2, static_cast<int64_t>(x.start)).Run("deleting an extent"));
    }
    // What lies outside [start, end) stays written; the pieces cannot touch
    // another extent, so no merging is needed.
    for (Extent keep : {Extent{x.start, std::min(x.end, start)}, Extent{std::max(x.start, end), x.end}}) {
      if (keep.start >= keep.end) continue;
      Query q(*this, "INSERT INTO extents(ino, start, end) VALUES(?, ?, ?)");
      q.Int(1, ino).Int(2, static_cast<int64_t>(keep.start)).Int(3, static_cast<int64_t>(keep.end));
      STRATA_RETURN_IF_ERROR(q.Run("splitting an extent"));
    }
  }
  return Status::Ok();
}

// ---- transactions

Status NamespaceDb::Run(const char* sql) { return Query(*this, sql).Run(sql); }

Status NamespaceDb::StartBatch() {
  if (batch_open_) return Status::Ok();
  STRATA_RETURN_IF_ERROR(Run("BEGIN IMMEDIATE"));
  batch_open_ = true;
  if (on_batch_opened_) on_batch_opened_();
  return Status::Ok();
}

Status NamespaceDb::OpenBatch() {
  // Under commit_each_ a batch holds one operation, which commits it.
  if (commit_each_ || in_operation_) return Status::Ok();
  return StartBatch();
}

Status NamespaceDb::BeginOperation(bool* outer) {
  *outer = false;
  if (in_operation_) return Status::Ok();
  STRATA_RETURN_IF_ERROR(StartBatch());
  STRATA_RETURN_IF_ERROR(Run("SAVEPOINT op"));
  in_operation_ = true;
  *outer = true;
  return Status::Ok();
}

Status NamespaceDb::EndOperation(bool success) {
  in_operation_ = false;
  if (!success) {
    BaseChunksMayHaveChanged();
    followed_.clear();  // the undone operation's extents may have been recorded
  }
  Status s = success ? Run("RELEASE op") : Run("ROLLBACK TO op");
  if (!success && s.ok()) s = Run("RELEASE op");
  if (success && s.ok()) batch_operations_++;
  if (sqlite3_get_autocommit(db_) != 0 && batch_open_) {
    // SQLite rolled the whole transaction back on its own (disk full, I/O
    // error): the batch's earlier operations are lost as in a crash.
    batch_open_ = false;
    batch_operations_ = 0;
    if (s.ok()) s = Status::IOError("workspace database: uncommitted operations were rolled back", EIO);
    NoteLostBatch(s);
  }
  if (success && s.ok() && commit_each_ && batch_open_) s = CommitOwnBatch();
  return s;
}

Status NamespaceDb::CommitOwnBatch() {
  Status s = Run("COMMIT");
  if (s.ok()) {
    batch_open_ = false;
    batch_operations_ = 0;
    return s;
  }
  // Still open (SQLITE_BUSY): undone, so that the caller's failure is true.
  if (sqlite3_get_autocommit(db_) == 0) (void)Run("ROLLBACK");
  batch_open_ = false;
  batch_operations_ = 0;
  // Only this operation was in it (the batch is empty when the mode starts,
  // and each operation commits its own): nothing answered is lost.
  NoteLostBatch(s, /*acknowledged=*/false);
  return s;
}

Status NamespaceDb::CommitBatch(uint64_t* operations) {
  if (operations != nullptr) *operations = 0;
  if (!batch_open_) return Status::Ok();
  Status s = Run("COMMIT");
  // A failed COMMIT may leave the transaction open (SQLITE_BUSY: it is
  // retried by the next call) or rolled back (SQLITE_FULL, I/O errors: its
  // operations are lost, reported here).
  batch_open_ = sqlite3_get_autocommit(db_) == 0;
  if (!batch_open_) {
    if (s.ok() && operations != nullptr) *operations = batch_operations_;
    batch_operations_ = 0;
    if (!s.ok()) NoteLostBatch(s);
  }
  return s;
}

void NamespaceDb::NoteLostBatch(const Status& why, bool acknowledged) {
  BaseChunksMayHaveChanged();
  followed_.clear();
  lost_batches_++;
  if (acknowledged) acknowledged_lost_++;
  lost_errno_ = why.errno_value() == ENOSPC ? ENOSPC : EIO;
}

Transaction::Transaction(NamespaceDb& db) : db_(db) { status_ = db_.BeginOperation(&owner_); }

Transaction::~Transaction() {
  if (owner_ && !done_) (void)db_.EndOperation(false);
}

Status Transaction::Commit() {
  STRATA_RETURN_IF_ERROR(status_);
  if (!owner_) return Status::Ok();
  done_ = true;
  return db_.EndOperation(true);
}

}  // namespace strata::workspace_internal
