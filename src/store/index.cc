#include "store/index.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>

#include "store/store.h"
#include "util/sqlite_statement.h"
#include "util/sqlite_connection.h"

namespace strata {

IndexObjectRow EncodeIndexObjectRow(const PackEntry& e) {
  IndexObjectRow row;
  row.oid.assign(reinterpret_cast<const char*>(e.id.bytes.data()), Hash::kSize);
  row.offset = static_cast<int64_t>(e.offset);
  row.stored_len = static_cast<int64_t>(e.stored_len);
  row.raw_len = static_cast<int64_t>(e.raw_len);
  row.type = static_cast<int64_t>(e.type);
  row.codec = static_cast<int64_t>(e.codec);
  return row;
}

Result<PackEntry> DecodeIndexObjectRow(const IndexObjectRow& row) {
  if (row.oid.size() != Hash::kSize) return Status::Corruption("index row with a malformed object id");
  PackEntry e;
  e.id = Hash::FromBytes(row.oid.data());
  auto bad = [&](const char* why) { return Status::Corruption("index row of object " + e.id.ToHex() + " " + why); };
  if (row.type < 0 || row.type > 255 || !IsValidObjectType(static_cast<uint8_t>(row.type)) || row.codec < 0 ||
      row.codec > 255 || !IsValidCodec(static_cast<uint8_t>(row.codec)))
    return bad("has an unknown type or codec");
  if (row.offset < static_cast<int64_t>(kPackHeaderSize) || row.stored_len < 0 ||
      row.stored_len > std::numeric_limits<int64_t>::max() - row.offset)
    return bad("places it outside any pack");
  if (row.raw_len < 0 || static_cast<uint64_t>(row.raw_len) > kMaxObjectSize)
    return bad("gives it a size the format does not allow");
  e.offset = static_cast<uint64_t>(row.offset);
  e.stored_len = static_cast<uint64_t>(row.stored_len);
  e.raw_len = static_cast<uint64_t>(row.raw_len);
  e.type = static_cast<ObjectType>(row.type);
  e.codec = static_cast<Codec>(row.codec);
  return e;
}

namespace {
// Pack files are named by their checksum in lower-case hex; an index row
// naming one otherwise (upper case included) names no pack of this store.
bool IsPackName(std::string_view name) {
  auto id = PackNameToHash(name);
  return id && name.substr(0, Hash::kSize * 2) == id->ToHex();
}
}  // namespace

Result<IndexPackRow> DecodeIndexPackRow(std::string_view name, int64_t size) {
  if (!IsPackName(name)) return Status::Corruption("index names a pack '" + std::string(name) + "'");
  if (size < static_cast<int64_t>(kPackHeaderSize + kPackTrailerSize))
    return Status::Corruption("index gives pack " + std::string(name) + " an impossible size");
  return IndexPackRow{std::string(name), static_cast<uint64_t>(size)};
}

Result<Hash> DecodeIndexRefRow(std::string_view name, std::string_view oid) {
  if (!IsValidRefName(name)) return Status::Corruption("index holds a ref with an invalid name");
  if (oid.size() != Hash::kSize) return Status::Corruption("ref " + std::string(name) + " holds a malformed id");
  return Hash::FromBytes(oid.data());
}

namespace {

constexpr int kSchemaVersion = 1;

// Came after the first stores of schema version 1, which do not have it: it
// is made by the first forget, and a store without it has forgotten nothing.
constexpr const char* kForgottenTable =
    "CREATE TABLE IF NOT EXISTS forgotten(oid BLOB PRIMARY KEY, forgotten_ns INTEGER NOT NULL) WITHOUT ROWID";

// A prepared statement (SqliteStatement), finalized on scope exit, with binds
// chosen by the C++ type of the index's columns: integers, names as text, ids
// as blobs.
class Stmt : public SqliteStatement {
 public:
  Stmt(sqlite3* db, const char* sql) : SqliteStatement(db, sql) {}

  bool ok() const { return prepared(); }
  Stmt& Bind(int i, int64_t v) {
    BindInt(i, v);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) {
    BindText(i, v);
    return *this;
  }
  Stmt& Bind(int i, const Hash& h) {
    BindBlob(i, h);
    return *this;
  }
  Stmt& Bind(int i, std::string_view blob) {
    BindBlob(i, blob);
    return *this;
  }
  // Columns oid, offset, stored_len, raw_len, type, codec from `first` on.
  IndexObjectRow ObjectRow(int first) {
    return IndexObjectRow{ColBlob(first),     ColInt(first + 1), ColInt(first + 2),
                          ColInt(first + 3), ColInt(first + 4), ColInt(first + 5)};
  }
  Status Error(const std::string& what) const { return Status::IOError("index " + what + ": " + ErrorMessage(), EIO); }
};

// BEGIN IMMEDIATE ... COMMIT; rolls back unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    ok_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~Transaction() {
    if (ok_ && !done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool ok() const { return ok_; }
  Status Commit() {
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
      return Status::IOError(std::string("index commit: ") + sqlite3_errmsg(db_), EIO);
    done_ = true;
    return Status::Ok();
  }

 private:
  sqlite3* db_;
  bool ok_ = false, done_ = false;
};

Status PrepareError(sqlite3* db) { return Status::IOError(std::string("index: ") + sqlite3_errmsg(db), EIO); }

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS packs(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                 size INTEGER NOT NULL, objects INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS objects(oid BLOB PRIMARY KEY, pack INTEGER NOT NULL, offset INTEGER NOT NULL,
                                   stored_len INTEGER NOT NULL, raw_len INTEGER NOT NULL,
                                   type INTEGER NOT NULL, codec INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS objects_by_pack ON objects(pack);
CREATE TABLE IF NOT EXISTS refs(name TEXT PRIMARY KEY, oid BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
)sql";

}  // namespace

Result<std::unique_ptr<Index>> Index::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  // NOFOLLOW: a link anywhere in the path is refused (the store's path is
  // canonical, so only one planted inside the store can be there).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0);
  if (OpenSqliteConnection(path, flags, &db) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    const bool link = db != nullptr && sqlite3_extended_errcode(db) == SQLITE_CANTOPEN_SYMLINK;
    CloseSqliteConnection(db);
    if (link)
      return Status::IOErrorWithMessage(
          "index " + path + " is (or lies under) a symbolic link; strata follows no links inside a store", ELOOP);
    return Status::IOError("opening index " + path + ": " + msg, EIO);
  }
  std::unique_ptr<Index> index(new Index(db));
  MutexLock lock(&index->mu_);  // not shared yet: taken for Exec's contract only
  sqlite3_busy_timeout(db, 30000);
  // Every commit is durable in the WAL already (synchronous=FULL); the last
  // connection to close would also copy the WAL into the file, three more
  // disk flushes at the end of every command (a fork, each exec). SQLite's
  // automatic checkpoints keep the WAL short instead.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  if (Status s = index->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"); !s.ok()) {
    // SQLite reads the file only now: garbage there is a damaged store, as
    // a missing index is (Store::Open), not an I/O error.
    const int code = sqlite3_errcode(db) & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
      return Status::Corruption("index " + path + " is damaged: " + sqlite3_errmsg(db));
    return s;
  }
  if (create) {
    STRATA_RETURN_IF_ERROR(index->Exec(kSchema));
    Stmt st(db, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)");
    if (!st.ok() || st.Bind(1, std::to_string(kSchemaVersion)).Step() != SQLITE_DONE)
      return st.Error("writing schema version");
  }
  Stmt st(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!st.ok() || st.Step() != SQLITE_ROW) return Status::Corruption("index " + path + " has no schema version");
  if (st.ColText(0) != std::to_string(kSchemaVersion))
    return Status::Unsupported("index " + path + " has schema version " + st.ColText(0) + "; this strata reads " +
                               std::to_string(kSchemaVersion));
  return index;
}

Index::~Index() {
  sqlite3_finalize(lookup_);
  CloseSqliteConnection(db_);
}

Status Index::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::IOError("index: " + msg, EIO);
  }
  return Status::Ok();
}

Result<std::optional<ObjectLocation>> Index::Lookup(const Hash& id) {
  MutexLock lock(&mu_);
  if (lookup_ == nullptr &&
      sqlite3_prepare_v2(db_,
                         "SELECT p.name, o.offset, o.stored_len, o.raw_len, o.type, o.codec FROM objects o "
                         "JOIN packs p ON p.id = o.pack WHERE o.oid = ?",
                         -1, &lookup_, nullptr) != SQLITE_OK)
    return PrepareError(db_);
  sqlite3_reset(lookup_);
  sqlite3_bind_blob(lookup_, 1, id.bytes.data(), Hash::kSize, SQLITE_STATIC);
  int rc = sqlite3_step(lookup_);
  if (rc == SQLITE_DONE) return std::optional<ObjectLocation>();
  if (rc != SQLITE_ROW) return Status::IOError(std::string("index lookup: ") + sqlite3_errmsg(db_), EIO);
  auto text = reinterpret_cast<const char*>(sqlite3_column_text(lookup_, 0));
  std::string pack = text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(lookup_, 0))) : std::string();
  IndexObjectRow row{std::string(reinterpret_cast<const char*>(id.bytes.data()), Hash::kSize),
                     sqlite3_column_int64(lookup_, 1), sqlite3_column_int64(lookup_, 2),
                     sqlite3_column_int64(lookup_, 3), sqlite3_column_int64(lookup_, 4),
                     sqlite3_column_int64(lookup_, 5)};
  sqlite3_reset(lookup_);  // ends the read transaction now, not at the next lookup
  ObjectLocation loc;
  STRATA_ASSIGN_OR_RETURN(loc.entry, DecodeIndexObjectRow(row));
  if (!IsPackName(pack)) return Status::Corruption("index places object " + id.ToHex() + " in pack '" + pack + "'");
  loc.pack = std::move(pack);
  return std::optional<ObjectLocation>(std::move(loc));
}

Status Index::AddPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  STRATA_RETURN_IF_ERROR(InsertPack(name, size, entries));
  return txn.Commit();
}

Status Index::InsertPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries) {
  Stmt find(db_, "SELECT id FROM packs WHERE name = ?");
  if (!find.ok()) return PrepareError(db_);
  if (find.Bind(1, name).Step() == SQLITE_ROW) return Status::Ok();  // indexed already
  Stmt add(db_, "INSERT INTO packs(name, size, objects) VALUES(?, ?, ?)");
  if (!add.ok() || add.Bind(1, name).Bind(2, static_cast<int64_t>(size)).Bind(3, static_cast<int64_t>(entries.size())).Step() != SQLITE_DONE)
    return add.Error("adding pack " + name);
  const int64_t pack_id = sqlite3_last_insert_rowid(db_);
  // OR IGNORE: an object already indexed in another pack keeps its first home.
  Stmt obj(db_,
           "INSERT OR IGNORE INTO objects(oid, pack, offset, stored_len, raw_len, type, codec) "
           "VALUES(?, ?, ?, ?, ?, ?, ?)");
  if (!obj.ok()) return PrepareError(db_);
  for (const PackEntry& e : entries) {
    const IndexObjectRow row = EncodeIndexObjectRow(e);
    obj.Bind(1, std::string_view(row.oid)).Bind(2, pack_id).Bind(3, row.offset);
    obj.Bind(4, row.stored_len).Bind(5, row.raw_len).Bind(6, row.type).Bind(7, row.codec);
    if (obj.Step() != SQLITE_DONE) return obj.Error("adding objects of pack " + name);
    obj.Reset();
  }
  return Status::Ok();
}

Result<std::map<std::string, uint64_t>> Index::ListPacks() {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT name, size FROM packs");
  if (!st.ok()) return PrepareError(db_);
  std::map<std::string, uint64_t> packs;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    STRATA_ASSIGN_OR_RETURN(IndexPackRow pack, DecodeIndexPackRow(st.ColText(0), st.ColInt(1)));
    packs[pack.name] = pack.size;
  }
  if (rc != SQLITE_DONE) return st.Error("listing packs");
  return packs;
}

Result<uint64_t> Index::PackCount() {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT count(*) FROM packs");
  if (!st.ok() || st.Step() != SQLITE_ROW) return PrepareError(db_);
  return static_cast<uint64_t>(st.ColInt(0));
}

Result<std::vector<PackEntry>> Index::ObjectsInPack(const std::string& pack) {
  MutexLock lock(&mu_);
  Stmt st(db_,
          "SELECT o.oid, o.offset, o.stored_len, o.raw_len, o.type, o.codec FROM objects o "
          "JOIN packs p ON p.id = o.pack WHERE p.name = ?");
  if (!st.ok()) return PrepareError(db_);
  st.Bind(1, pack);
  std::vector<PackEntry> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    auto e = DecodeIndexObjectRow(st.ObjectRow(0));
    if (!e.ok()) return e.status().WithContext("pack " + pack);
    out.push_back(*e);
  }
  if (rc != SQLITE_DONE) return st.Error("listing objects of " + pack);
  return out;
}

Result<std::vector<std::string>> Index::PacksWithObjectsElsewhere() {
  MutexLock lock(&mu_);
  Stmt st(db_,
          "SELECT p.name, p.size FROM packs p "
          "WHERE p.objects > (SELECT count(*) FROM objects o WHERE o.pack = p.id)");
  if (!st.ok()) return PrepareError(db_);
  std::vector<std::string> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    STRATA_ASSIGN_OR_RETURN(IndexPackRow pack, DecodeIndexPackRow(st.ColText(0), st.ColInt(1)));
    out.push_back(std::move(pack.name));
  }
  if (rc != SQLITE_DONE) return st.Error("listing packs with objects indexed elsewhere");
  return out;
}

Status Index::AddMissingObjects(const std::string& name, const std::vector<PackEntry>& entries) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  Stmt obj(db_,
           "INSERT OR IGNORE INTO objects(oid, pack, offset, stored_len, raw_len, type, codec) "
           "SELECT ?, id, ?, ?, ?, ?, ? FROM packs WHERE name = ?");
  if (!obj.ok()) return PrepareError(db_);
  for (const PackEntry& e : entries) {
    const IndexObjectRow row = EncodeIndexObjectRow(e);
    obj.Bind(1, std::string_view(row.oid)).Bind(2, row.offset).Bind(3, row.stored_len);
    obj.Bind(4, row.raw_len).Bind(5, row.type).Bind(6, row.codec).Bind(7, name);
    if (obj.Step() != SQLITE_DONE) return obj.Error("adding objects of pack " + name);
    obj.Reset();
  }
  return txn.Commit();
}

Result<std::vector<Hash>> Index::FindByPrefix(ObjectType type, const std::string& hex_prefix, size_t limit) {
  // The prefix spans [prefix000..., prefixfff...] in byte order.
  std::string low = hex_prefix + std::string(Hash::kSize * 2 - hex_prefix.size(), '0');
  std::string high = hex_prefix + std::string(Hash::kSize * 2 - hex_prefix.size(), 'f');
  auto lo = Hash::FromHex(low), hi = Hash::FromHex(high);
  if (!lo || !hi) return Status::InvalidArgument("'" + hex_prefix + "' is not a hex id prefix");
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT oid FROM objects WHERE oid BETWEEN ? AND ? AND type = ? LIMIT ?");
  if (!st.ok()) return PrepareError(db_);
  st.Bind(1, *lo).Bind(2, *hi).Bind(3, static_cast<int64_t>(type)).Bind(4, static_cast<int64_t>(limit));
  std::vector<Hash> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW)
    if (auto h = st.ColHash(0)) out.push_back(*h);
  if (rc != SQLITE_DONE) return st.Error("prefix search");
  return out;
}

Result<std::map<int, TypeTotals>> Index::TotalsByType() {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT type, count(*), sum(raw_len), sum(stored_len) FROM objects GROUP BY type");
  if (!st.ok()) return PrepareError(db_);
  std::map<int, TypeTotals> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW)
    out[static_cast<int>(st.ColInt(0))] = {static_cast<uint64_t>(st.ColInt(1)), static_cast<uint64_t>(st.ColInt(2)),
                                        static_cast<uint64_t>(st.ColInt(3))};
  if (rc != SQLITE_DONE) return st.Error("totals");
  return out;
}

Result<std::vector<std::pair<Hash, uint64_t>>> Index::ListObjects() {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT oid, stored_len FROM objects ORDER BY oid");
  if (!st.ok()) return PrepareError(db_);
  std::vector<std::pair<Hash, uint64_t>> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    auto h = st.ColHash(0);
    if (!h) return Status::Corruption("index row with a malformed object id");
    if (st.ColInt(1) < 0) return Status::Corruption("index row of object " + h->ToHex() + " has a negative size");
    out.emplace_back(*h, static_cast<uint64_t>(st.ColInt(1)));
  }
  if (rc != SQLITE_DONE) return st.Error("listing objects");
  return out;
}

Status Index::DeleteObjects(const std::vector<Hash>& ids) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  Stmt del(db_, "DELETE FROM objects WHERE oid = ?");
  if (!del.ok()) return PrepareError(db_);
  for (const Hash& id : ids) {
    if (del.Bind(1, id).Step() != SQLITE_DONE) return del.Error("deleting object " + id.ToHex());
    del.Reset();
  }
  return txn.Commit();
}

Result<std::vector<PackUsage>> Index::ListPackUsage() {
  MutexLock lock(&mu_);
  Stmt st(db_,
          "SELECT p.name, p.size, count(o.oid), coalesce(sum(o.stored_len), 0) FROM packs p "
          "LEFT JOIN objects o ON o.pack = p.id GROUP BY p.id ORDER BY p.name");
  if (!st.ok()) return PrepareError(db_);
  std::vector<PackUsage> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    STRATA_ASSIGN_OR_RETURN(IndexPackRow pack, DecodeIndexPackRow(st.ColText(0), st.ColInt(1)));
    if (st.ColInt(2) < 0 || st.ColInt(3) < 0) return Status::Corruption("index: negative usage of pack " + pack.name);
    out.push_back({pack.name, pack.size, static_cast<uint64_t>(st.ColInt(2)), static_cast<uint64_t>(st.ColInt(3))});
  }
  if (rc != SQLITE_DONE) return st.Error("pack usage");
  return out;
}

Status Index::ReplacePacks(const std::optional<NewPack>& added, const std::vector<std::string>& removed) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  if (added) {
    Stmt add(db_, "INSERT OR IGNORE INTO packs(name, size, objects) VALUES(?, ?, ?)");
    if (!add.ok() || add.Bind(1, added->name).Bind(2, static_cast<int64_t>(added->size))
                             .Bind(3, static_cast<int64_t>(added->entries.size())).Step() != SQLITE_DONE)
      return add.Error("adding pack " + added->name);
    Stmt obj(db_,
             "INSERT OR REPLACE INTO objects(oid, pack, offset, stored_len, raw_len, type, codec) "
             "SELECT ?, id, ?, ?, ?, ?, ? FROM packs WHERE name = ?");
    if (!obj.ok()) return PrepareError(db_);
    for (const PackEntry& e : added->entries) {
      const IndexObjectRow row = EncodeIndexObjectRow(e);
      obj.Bind(1, std::string_view(row.oid)).Bind(2, row.offset).Bind(3, row.stored_len);
      obj.Bind(4, row.raw_len).Bind(5, row.type).Bind(6, row.codec).Bind(7, added->name);
      if (obj.Step() != SQLITE_DONE) return obj.Error("moving objects to pack " + added->name);
      obj.Reset();
    }
  }
  Stmt forget_objects(db_, "DELETE FROM objects WHERE pack = (SELECT id FROM packs WHERE name = ?)");
  Stmt forget_pack(db_, "DELETE FROM packs WHERE name = ?");
  if (!forget_objects.ok() || !forget_pack.ok()) return PrepareError(db_);
  for (const std::string& name : removed) {
    if (forget_objects.Bind(1, name).Step() != SQLITE_DONE) return forget_objects.Error("forgetting pack " + name);
    if (forget_pack.Bind(1, name).Step() != SQLITE_DONE) return forget_pack.Error("forgetting pack " + name);
    forget_objects.Reset();
    forget_pack.Reset();
  }
  Stmt bump(db_,
            "INSERT INTO counters(name, value) VALUES('gc_generation', 1) "
            "ON CONFLICT(name) DO UPDATE SET value = value + 1");
  if (!bump.ok() || bump.Step() != SQLITE_DONE) return bump.Error("updating the gc generation");
  return txn.Commit();
}

Result<std::optional<Hash>> Index::GetRef(const std::string& name) {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT oid FROM refs WHERE name = ?");
  if (!st.ok()) return PrepareError(db_);
  int rc = st.Bind(1, name).Step();
  if (rc == SQLITE_DONE) return std::optional<Hash>();
  if (rc != SQLITE_ROW) return st.Error("reading ref " + name);
  STRATA_ASSIGN_OR_RETURN(Hash h, DecodeIndexRefRow(name, st.ColBlob(0)));
  return std::optional<Hash>(h);
}

Result<std::map<std::string, Hash>> Index::ListRefs() {
  MutexLock lock(&mu_);
  Stmt st(db_, "SELECT name, oid FROM refs ORDER BY name");
  if (!st.ok()) return PrepareError(db_);
  std::map<std::string, Hash> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    const std::string name = st.ColText(0);
    STRATA_ASSIGN_OR_RETURN(Hash h, DecodeIndexRefRow(name, st.ColBlob(1)));
    out[name] = h;
  }
  if (rc != SQLITE_DONE) return st.Error("listing refs");
  return out;
}

Status Index::CheckRef(const std::string& name, const std::optional<Hash>& expected) {
  Stmt get(db_, "SELECT oid FROM refs WHERE name = ?");
  if (!get.ok()) return PrepareError(db_);
  int rc = get.Bind(1, name).Step();
  std::optional<Hash> current;
  if (rc == SQLITE_ROW) current = get.ColHash(0);
  else if (rc != SQLITE_DONE) return get.Error("reading ref " + name);
  if (current == expected) return Status::Ok();
  return Status::Conflict("head moved: branch '" + name + "' is at " +
                          (current ? current->ToHex().substr(0, 12) : std::string("nothing")) + ", expected " +
                          (expected ? expected->ToHex().substr(0, 12) : std::string("no branch")));
}

Status Index::CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  STRATA_RETURN_IF_ERROR(CheckRef(name, expected));
  STRATA_RETURN_IF_ERROR(WriteRef(name, target));
  return txn.Commit();
}

Status Index::WriteRef(const std::string& name, const Hash& target) {
  Stmt put(db_, "INSERT INTO refs(name, oid) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET oid = excluded.oid");
  if (!put.ok() || put.Bind(1, name).Bind(2, target).Step() != SQLITE_DONE) return put.Error("updating ref " + name);
  return Status::Ok();
}

Status Index::Publish(const IndexPublish& p, Status* moved) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  if (p.pack) STRATA_RETURN_IF_ERROR(InsertPack(p.pack->name, p.pack->size, p.pack->entries));
  for (const auto& [name, delta] : p.counters)
    if (delta > 0) STRATA_RETURN_IF_ERROR(BumpCounter(name, delta));
  *moved = CheckRef(p.ref, p.expected);
  if (moved->ok()) {
    // A ref may only name a commit this index places in a pack (the rows
    // just inserted count).
    Stmt type(db_, "SELECT type FROM objects WHERE oid = ?");
    if (!type.ok()) return PrepareError(db_);
    const int rc = type.Bind(1, p.target).Step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return type.Error("looking up " + p.target.ToHex());
    if (rc == SQLITE_DONE || type.ColInt(0) != static_cast<int64_t>(ObjectType::kCommit))
      *moved = Status::InvalidArgument("cannot point branch '" + p.ref + "' at " + p.target.ToHex() +
                                       ": no such commit in the store");
  }
  if (moved->ok()) STRATA_RETURN_IF_ERROR(WriteRef(p.ref, p.target));
  return txn.Commit();
}

Status Index::DeleteRef(const std::string& name, const Hash& expected) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  STRATA_RETURN_IF_ERROR(CheckRef(name, expected));
  Stmt del(db_, "DELETE FROM refs WHERE name = ?");
  if (!del.ok() || del.Bind(1, name).Step() != SQLITE_DONE) return del.Error("deleting ref " + name);
  return txn.Commit();
}

Status Index::AddCounter(const std::string& name, uint64_t delta) {
  MutexLock lock(&mu_);
  return BumpCounter(name, delta);
}

Status Index::BumpCounter(const std::string& name, uint64_t delta) {
  Stmt st(db_,
          "INSERT INTO counters(name, value) VALUES(?, ?) "
          "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value");
  if (!st.ok() || st.Bind(1, name).Bind(2, static_cast<int64_t>(delta)).Step() != SQLITE_DONE)
    return st.Error("updating counter " + name);
  return Status::Ok();
}

namespace {
// A counter's value (0 if it was never set), inside or outside a transaction.
Result<uint64_t> ReadCounter(sqlite3* db, const std::string& name) {
  Stmt st(db, "SELECT value FROM counters WHERE name = ?");
  if (!st.ok()) return PrepareError(db);
  int rc = st.Bind(1, name).Step();
  if (rc == SQLITE_DONE) return uint64_t{0};
  if (rc != SQLITE_ROW) return st.Error("reading counter " + name);
  return static_cast<uint64_t>(st.ColInt(0));
}
}  // namespace

Result<uint64_t> Index::GetCounter(const std::string& name) {
  MutexLock lock(&mu_);
  return ReadCounter(db_, name);
}

namespace {
constexpr uint64_t kGenerationSpace = uint64_t{1} << 32;

Status SetCounter(sqlite3* db, const std::string& name, uint64_t value) {
  Stmt st(db, "INSERT INTO counters(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value");
  if (!st.ok() || st.Bind(1, name).Bind(2, static_cast<int64_t>(value)).Step() != SQLITE_DONE)
    return st.Error("updating counter " + name);
  return Status::Ok();
}
// A store's seal counters, read inside a transaction: its current
// generation, the seals reserved under it, and the end of what it owns (the
// generations granted away are another store's to seal under).
struct SealCounters {
  uint64_t generation = 0, used = 0, end = 0;
  // Whether ReserveSeals refuses: nothing owned, or the last one used up.
  bool UsedUp(uint64_t limit, uint32_t max_generation) const {
    return generation >= end || (used >= limit && generation >= std::min<uint64_t>(max_generation, end - 1));
  }
};
Result<SealCounters> ReadSealCounters(sqlite3* db, const std::string& gen_counter, const std::string& used_counter,
                                      const std::string& given_counter) {
  SealCounters c;
  STRATA_ASSIGN_OR_RETURN(c.generation, ReadCounter(db, gen_counter));
  STRATA_ASSIGN_OR_RETURN(c.used, ReadCounter(db, used_counter));
  STRATA_ASSIGN_OR_RETURN(uint64_t given, ReadCounter(db, given_counter));
  c.end = kGenerationSpace - std::min(given, kGenerationSpace);
  return c;
}
}  // namespace

Result<Index::SealReservation> Index::ReserveSeals(const std::string& gen_counter, const std::string& used_counter,
                                                   const std::string& given_counter, uint64_t want, uint64_t limit,
                                                   uint32_t max_generation) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return Status::IOError(std::string("index: ") + sqlite3_errmsg(db_), EIO);
  STRATA_ASSIGN_OR_RETURN(SealCounters c, ReadSealCounters(db_, gen_counter, used_counter, given_counter));
  uint64_t generation = c.generation, used = c.used;
  const uint64_t end = c.end;
  if (generation >= end)
    return Status::InvalidArgument("owns no key generation to seal under (it was made with the key of another "
                                   "store: 'strata remote add' of that store's remote gives it some)");
  const uint64_t last = std::min<uint64_t>(max_generation, end - 1);
  if (used >= limit) {
    if (generation >= last)
      return Status::Unsupported("has sealed " + std::to_string(used) + " objects under its last key generation (" +
                                 std::to_string(generation) + ")");
    generation++;
    used = 0;
    STRATA_RETURN_IF_ERROR(SetCounter(db_, gen_counter, generation));
  }
  SealReservation r{static_cast<uint32_t>(generation), std::min(want, limit - used)};
  STRATA_RETURN_IF_ERROR(SetCounter(db_, used_counter, used + r.count));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return r;
}

Result<SealRange> Index::GrantSeals(const std::string& gen_counter, const std::string& given_counter,
                                           uint64_t max_count) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return Status::IOError(std::string("index: ") + sqlite3_errmsg(db_), EIO);
  STRATA_ASSIGN_OR_RETURN(uint64_t generation, ReadCounter(db_, gen_counter));
  STRATA_ASSIGN_OR_RETURN(uint64_t given, ReadCounter(db_, given_counter));
  const uint64_t end = kGenerationSpace - std::min(given, kGenerationSpace);
  // The current generation stays the store's, in use or not.
  const uint64_t free = end > generation + 1 ? end - generation - 1 : 0;
  const uint64_t count = std::min(max_count, free / 2);
  if (count == 0)
    return Status::Unsupported("has no key generations left to hand to another store (it owns " +
                               std::to_string(end > generation ? end - generation : 0) + ")");
  STRATA_RETURN_IF_ERROR(SetCounter(db_, given_counter, given + count));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return SealRange{end - count, end};
}

Status Index::AdoptSeals(const std::string& gen_counter, const std::string& used_counter,
                         const std::string& given_counter, const SealRange& range) {
  if (range.first >= range.end || range.end > kGenerationSpace)
    return Status::InvalidArgument("key generations [" + std::to_string(range.first) + ", " +
                                   std::to_string(range.end) + ") are no range of generations");
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return Status::IOError(std::string("index: ") + sqlite3_errmsg(db_), EIO);
  STRATA_ASSIGN_OR_RETURN(uint64_t used, ReadCounter(db_, used_counter));
  STRATA_ASSIGN_OR_RETURN(uint64_t generation, ReadCounter(db_, gen_counter));
  if (used != 0 || generation != 0)
    return Status::InvalidArgument("has sealed objects already; it cannot take other key generations");
  STRATA_RETURN_IF_ERROR(SetCounter(db_, gen_counter, range.first));
  STRATA_RETURN_IF_ERROR(SetCounter(db_, given_counter, kGenerationSpace - range.end));
  return txn.Commit();
}

Result<bool> Index::ExtendSeals(const std::string& gen_counter, const std::string& used_counter,
                                const std::string& given_counter, const SealRange& range, uint64_t limit,
                                uint32_t max_generation) {
  if (range.first >= range.end || range.end - 1 > max_generation)
    return Status::InvalidArgument("key generations [" + std::to_string(range.first) + ", " +
                                   std::to_string(range.end) + ") are no range of generations");
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return Status::IOError(std::string("index: ") + sqlite3_errmsg(db_), EIO);
  STRATA_ASSIGN_OR_RETURN(SealCounters c, ReadSealCounters(db_, gen_counter, used_counter, given_counter));
  // Another process of the store may have extended it first.
  if (!c.UsedUp(limit, max_generation)) return false;
  STRATA_RETURN_IF_ERROR(SetCounter(db_, gen_counter, range.first));
  STRATA_RETURN_IF_ERROR(SetCounter(db_, used_counter, 0));
  STRATA_RETURN_IF_ERROR(SetCounter(db_, given_counter, kGenerationSpace - range.end));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return true;
}

Result<SealRange> Index::OwnedSeals(const std::string& gen_counter, const std::string& given_counter) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(uint64_t generation, ReadCounter(db_, gen_counter));
  STRATA_ASSIGN_OR_RETURN(uint64_t given, ReadCounter(db_, given_counter));
  const uint64_t end = kGenerationSpace - std::min(given, kGenerationSpace);
  return SealRange{generation, std::max(end, generation)};
}

Result<bool> Index::HasForgottenTable() {
  Stmt st(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forgotten'");
  if (!st.ok()) return PrepareError(db_);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return st.Error("looking for the forgotten table");
}

Status Index::AddForgotten(const std::vector<Hash>& commits, int64_t when_ns) {
  MutexLock lock(&mu_);
  Transaction txn(db_);
  if (!txn.ok()) return PrepareError(db_);
  STRATA_RETURN_IF_ERROR(Exec(kForgottenTable));
  // A commit forgotten twice keeps the time it was first forgotten.
  Stmt put(db_, "INSERT OR IGNORE INTO forgotten(oid, forgotten_ns) VALUES(?, ?)");
  if (!put.ok()) return PrepareError(db_);
  for (const Hash& id : commits) {
    if (put.Bind(1, id).Bind(2, when_ns).Step() != SQLITE_DONE)
      return put.Error("recording forgotten commit " + id.ToHex());
    put.Reset();
  }
  return txn.Commit();
}

Result<std::unordered_set<Hash>> Index::ListForgotten() {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(bool exists, HasForgottenTable());
  if (!exists) return std::unordered_set<Hash>();
  Stmt st(db_, "SELECT oid FROM forgotten");
  if (!st.ok()) return PrepareError(db_);
  std::unordered_set<Hash> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    auto id = st.ColHash(0);
    if (!id) return Status::Corruption("index holds a forgotten commit with a malformed id");
    out.insert(*id);
  }
  if (rc != SQLITE_DONE) return st.Error("listing forgotten commits");
  return out;
}

Result<bool> Index::IsForgotten(const Hash& commit) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(bool exists, HasForgottenTable());
  if (!exists) return false;
  Stmt st(db_, "SELECT 1 FROM forgotten WHERE oid = ?");
  if (!st.ok()) return PrepareError(db_);
  int rc = st.Bind(1, commit).Step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return st.Error("reading the forgotten commits");
}

}  // namespace strata
