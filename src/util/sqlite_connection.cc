#include "util/sqlite_connection.h"

#include <sqlite3.h>

#include <atomic>

namespace strata {
namespace {

std::atomic<int> open_connections{0};

}  // namespace

int OpenSqliteConnection(const std::string& path, int flags, sqlite3** db) {
  const int rc = sqlite3_open_v2(path.c_str(), db, flags, nullptr);
  if (*db != nullptr) open_connections.fetch_add(1, std::memory_order_relaxed);
  return rc;
}

void CloseSqliteConnection(sqlite3* db) {
  if (db == nullptr) return;
  // SQLITE_BUSY (a statement still prepared) leaves the connection open.
  if (sqlite3_close(db) == SQLITE_OK) open_connections.fetch_sub(1, std::memory_order_relaxed);
}

int OpenSqliteConnections() { return open_connections.load(std::memory_order_relaxed); }

}  // namespace strata
