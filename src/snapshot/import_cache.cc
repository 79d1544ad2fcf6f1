#include "snapshot/import_cache.h"

#include <sqlite3.h>

#include "util/coding.h"
#include "util/sqlite_statement.h"
#include "util/time_ns.h"
#include "util/sqlite_connection.h"

namespace strata {
namespace {

const char* kSchema =
    "CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER,"
    " mtime_ns INTEGER, ctime_ns INTEGER, chunks BLOB) WITHOUT ROWID";

std::string EncodeChunks(const std::vector<ChunkRef>& chunks) {
  std::string out;
  for (const ChunkRef& c : chunks) {
    out.append(reinterpret_cast<const char*>(c.id.bytes.data()), Hash::kSize);
    PutFixed64(&out, c.length);
  }
  return out;
}

bool DecodeChunks(std::string_view data, std::vector<ChunkRef>* out) {
  Decoder d(data);
  while (!d.empty()) {
    std::string_view id;
    ChunkRef c;
    if (!d.GetBytes(Hash::kSize, &id) || !d.GetFixed64(&c.length)) return false;
    c.id = Hash::FromBytes(id.data());
    out->push_back(c);
  }
  return true;
}

Status SqlError(sqlite3* db, const std::string& what) {
  return Status::IOError("import cache: " + what + ": " + sqlite3_errmsg(db), EIO);
}

// Rows whose path starts with "root/": [root + "/", root + "0"), '0' being the byte after '/'.
std::pair<std::string, std::string> PrefixRange(const std::string& root) { return {root + "/", root + "0"}; }

}  // namespace

ImportCache::ImportCache(sqlite3* db) : db_(db) {
  racy_after_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        (std::chrono::system_clock::now() - kRacyWindow).time_since_epoch())
                        .count();
}

ImportCache::~ImportCache() { CloseSqliteConnection(db_); }

Result<std::unique_ptr<ImportCache>> ImportCache::Open(const std::string& db_path) {
  sqlite3* db = nullptr;
  if (OpenSqliteConnection(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) != SQLITE_OK) {
    Status s = SqlError(db, "opening " + db_path);
    CloseSqliteConnection(db);
    return s;
  }
  std::unique_ptr<ImportCache> cache(new ImportCache(db));
  sqlite3_busy_timeout(db, 30000);
  // A lost cache only costs a slower import, so it need not be synced.
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;", nullptr, nullptr, nullptr) != SQLITE_OK ||
      sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)
    return SqlError(db, "creating tables");
  return cache;
}

Status ImportCache::Load(const std::string& root) {
  root_ = root;
  auto [lo, hi] = PrefixRange(root);
  SqliteStatement st(db_, "SELECT path, dev, ino, size, mtime_ns, ctime_ns, chunks FROM files"
                          " WHERE path >= ? AND path < ?");
  if (!st.prepared()) return SqlError(db_, "loading");
  st.BindText(1, lo).BindText(2, hi);
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    Entry e;
    e.st.dev = static_cast<dev_t>(st.ColInt(1));
    e.st.ino = static_cast<ino_t>(st.ColInt(2));
    e.st.size = static_cast<uint64_t>(st.ColInt(3));
    const SplitTime mtime = SplitNs(st.ColInt(4)), ctime = SplitNs(st.ColInt(5));
    e.st.mtime_sec = mtime.sec;
    e.st.mtime_nsec = mtime.nsec;
    e.st.ctime_sec = ctime.sec;
    e.st.ctime_nsec = ctime.nsec;
    // A row that does not decode is simply not used: the file is read again.
    if (!DecodeChunks(st.ColBlob(6), &e.chunks)) continue;
    loaded_.emplace(st.ColText(0), std::move(e));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "loading");
  return Status::Ok();
}

const std::vector<ChunkRef>* ImportCache::Find(const std::string& path, const FileStat& st) const {
  auto it = loaded_.find(path);
  if (it == loaded_.end()) return nullptr;
  const FileStat& old = it->second.st;
  bool same = old.dev == st.dev && old.ino == st.ino && old.size == st.size && old.mtime_sec == st.mtime_sec &&
              old.mtime_nsec == st.mtime_nsec && old.ctime_sec == st.ctime_sec && old.ctime_nsec == st.ctime_nsec;
  return same ? &it->second.chunks : nullptr;
}

void ImportCache::Record(const std::string& path, const FileStat& st, const std::vector<ChunkRef>& chunks) {
  if (JoinNs(st.ctime_sec, st.ctime_nsec) >= racy_after_ns_ || JoinNs(st.mtime_sec, st.mtime_nsec) >= racy_after_ns_)
    return;
  recorded_.emplace_back(path, Entry{st, chunks});
}

Status ImportCache::Save() {
  if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) return SqlError(db_, "saving");
  auto [lo, hi] = PrefixRange(root_);
  bool ok;
  {  // both finalized before the COMMIT
    SqliteStatement del(db_, "DELETE FROM files WHERE path >= ? AND path < ?");
    SqliteStatement ins(db_, "INSERT OR REPLACE INTO files VALUES(?, ?, ?, ?, ?, ?, ?)");
    ok = del.prepared() && ins.prepared() && del.BindText(1, lo).BindText(2, hi).Step() == SQLITE_DONE;
    for (size_t i = 0; ok && i < recorded_.size(); i++) {
      const auto& [path, e] = recorded_[i];
      ins.Reset();
      ins.BindText(1, path)
          .BindInt(2, static_cast<int64_t>(e.st.dev))
          .BindInt(3, static_cast<int64_t>(e.st.ino))
          .BindInt(4, static_cast<int64_t>(e.st.size))
          .BindInt(5, JoinNs(e.st.mtime_sec, e.st.mtime_nsec))
          .BindInt(6, JoinNs(e.st.ctime_sec, e.st.ctime_nsec))
          .BindBlob(7, EncodeChunks(e.chunks));
      ok = ins.Step() == SQLITE_DONE;
    }
  }
  if (!ok || sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Status s = SqlError(db_, "saving");
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return s;
  }
  recorded_.clear();
  return Status::Ok();
}

}  // namespace strata
