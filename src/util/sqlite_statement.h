// A prepared SQLite statement with RAII, shared by every SQLite database of
// strata: the store's index, the workspace's namespace and the import cache.
//
// Either it owns its statement (prepared from SQL, finalized when it goes) or
// it borrows one that a database keeps prepared (reset and unbound when it
// goes, so that the next user finds it clean). Binds copy their values
// (SQLITE_TRANSIENT): the caller's strings need not outlive the statement.
// A statement that failed to prepare makes every Step fail with SQLITE_ERROR,
// so a caller checks either prepared() or the result of Step.
// Thread-safety: as the connection it was prepared on (none of its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/hash.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strata {

class SqliteStatement {
 public:
  // Prepares sql on db; see prepared().
  SqliteStatement(sqlite3* db, const char* sql);
  // Borrows st (which may be null: a statement that could not be prepared).
  static SqliteStatement Borrow(sqlite3* db, sqlite3_stmt* st) { return SqliteStatement(db, st); }
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement& operator=(SqliteStatement&&) = delete;

  bool prepared() const { return st_ != nullptr; }
  sqlite3* db() const { return db_; }

  // Parameters count from 1.
  SqliteStatement& BindInt(int i, int64_t v);
  SqliteStatement& BindText(int i, std::string_view v);
  // A zero-length blob is still a blob, not NULL.
  SqliteStatement& BindBlob(int i, std::string_view v);
  SqliteStatement& BindBlob(int i, const Hash& h);
  SqliteStatement& BindNull(int i);

  // SQLITE_ROW, SQLITE_DONE or an error code (SQLITE_ERROR when not prepared).
  int Step();
  // Back to the start, parameters unbound; ends a read transaction at once.
  void Reset();

  // Columns of the current row count from 0.
  int64_t ColInt(int c) const;
  bool ColNull(int c) const;
  std::string ColText(int c) const;
  std::string ColBlob(int c) const;
  // nullopt unless the column holds exactly Hash::kSize bytes.
  std::optional<Hash> ColHash(int c) const;

  // The connection's message for its last error.
  std::string ErrorMessage() const;

 private:
  SqliteStatement(sqlite3* db, sqlite3_stmt* borrowed) : db_(db), st_(borrowed), owned_(false) {}
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  bool owned_ = true;
};

}  // namespace strata
