// Opening and closing SQLite connections, counted for the whole process.
//
// Every connection strata opens (the store's index, a workspace's namespace
// and its checkpointer, the import cache) goes through these two calls, so
// that OpenSqliteConnections() says how many are open right now. A fork must
// not happen while one is (SQLite's locks and file descriptors do not survive
// a fork; a daemon forked beside an open store lost a commit's branch move
// without an error), and daemon::StartDaemon refuses to fork otherwise.
// Thread-safety: all three calls are safe from any thread.
#pragma once

#include <string>

struct sqlite3;

namespace strata {

// sqlite3_open_v2, counted. Whatever it returns, a non-null *db must be given
// to CloseSqliteConnection (SQLite hands out a handle for its error message
// even when the open failed).
int OpenSqliteConnection(const std::string& path, int flags, sqlite3** db);
// sqlite3_close, counted; a null db is ignored, as SQLite does. A close
// that SQLite refuses (a statement still prepared) leaves it counted.
void CloseSqliteConnection(sqlite3* db);
// How many connections are open in this process.
int OpenSqliteConnections();

}  // namespace strata
