#include "util/sqlite_statement.h"

#include <sqlite3.h>

namespace strata {

SqliteStatement::SqliteStatement(sqlite3* db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st_);  // a no-op on null; SQLite leaves it null on failure
    st_ = nullptr;
  }
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), st_(other.st_), owned_(other.owned_) {
  other.st_ = nullptr;
}

SqliteStatement::~SqliteStatement() {
  if (st_ == nullptr) return;
  if (owned_) {
    sqlite3_finalize(st_);
  } else {
    Reset();
  }
}

SqliteStatement& SqliteStatement::BindInt(int i, int64_t v) {
  if (st_) sqlite3_bind_int64(st_, i, v);
  return *this;
}

SqliteStatement& SqliteStatement::BindText(int i, std::string_view v) {
  if (st_) sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int i, std::string_view v) {
  if (st_) sqlite3_bind_blob(st_, i, v.empty() ? "" : v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int i, const Hash& h) {
  return BindBlob(i, std::string_view(reinterpret_cast<const char*>(h.bytes.data()), Hash::kSize));
}

SqliteStatement& SqliteStatement::BindNull(int i) {
  if (st_) sqlite3_bind_null(st_, i);
  return *this;
}

int SqliteStatement::Step() { return st_ ? sqlite3_step(st_) : SQLITE_ERROR; }

void SqliteStatement::Reset() {
  if (st_ == nullptr) return;
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

int64_t SqliteStatement::ColInt(int c) const { return sqlite3_column_int64(st_, c); }

bool SqliteStatement::ColNull(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }

std::string SqliteStatement::ColText(int c) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c))) : std::string();
}

std::string SqliteStatement::ColBlob(int c) const {
  auto p = static_cast<const char*>(sqlite3_column_blob(st_, c));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c))) : std::string();
}

std::optional<Hash> SqliteStatement::ColHash(int c) const {
  if (sqlite3_column_bytes(st_, c) != static_cast<int>(Hash::kSize)) return std::nullopt;
  return Hash::FromBytes(sqlite3_column_blob(st_, c));
}

std::string SqliteStatement::ErrorMessage() const { return sqlite3_errmsg(db_); }

}  // namespace strata
