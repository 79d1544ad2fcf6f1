// Test-only SQLite VFSes: a shim over the default VFS whose file operations
// a test overrides (SqliteVfsShim), and one built on it that keeps what each
// file held at its last sync and can cut the power (PowerCutVfs).
//
// Registered as the default VFS while the object lives, so every connection
// opened meanwhile (the code under test opens with the default VFS) goes
// through it; connections opened before keep the VFS they were opened with.
// One shim at a time. Destroy it only after closing the connections that
// use it.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace strata::testing {

class SqliteVfsShim {
 public:
  // A file opened through the shim.
  struct File {
    sqlite3_file base;
    sqlite3_file* real;  // the default VFS's file, in the same allocation
    std::string* path;   // as SQLite named it ("" for temp files); owned
    int flags;           // SQLITE_OPEN_* of the open
  };

  explicit SqliteVfsShim(const char* name);
  virtual ~SqliteVfsShim();
  SqliteVfsShim(const SqliteVfsShim&) = delete;
  SqliteVfsShim& operator=(const SqliteVfsShim&) = delete;

  // The operations a test may change; each default calls the real VFS
  // (RealWrite and so on).
  // After a successful open; `existed`: the file was there before it.
  virtual void Opened(File&, bool /*existed*/) {}
  virtual int Write(File& f, const void* p, int n, sqlite3_int64 off) { return RealWrite(f, p, n, off); }
  virtual int Truncate(File& f, sqlite3_int64 size) { return RealTruncate(f, size); }
  virtual int Sync(File& f, int flags) { return RealSync(f, flags); }
  virtual int Delete(const char* path, int sync_dir) { return real_->xDelete(real_, path, sync_dir); }

 protected:
  static int RealWrite(File& f, const void* p, int n, sqlite3_int64 off) {
    return f.real->pMethods->xWrite(f.real, p, n, off);
  }
  static int RealTruncate(File& f, sqlite3_int64 size) { return f.real->pMethods->xTruncate(f.real, size); }
  static int RealSync(File& f, int flags) { return f.real->pMethods->xSync(f.real, flags); }
  static int RealFileSize(File& f, sqlite3_int64* size) { return f.real->pMethods->xFileSize(f.real, size); }

 private:
  friend struct ShimCallbacks;
  sqlite3_vfs vfs_;
  sqlite3_vfs* real_;
  std::string name_;
};

// Power loss under SQLite. For every file opened through it under `dir`
// (database, -wal, -journal), it keeps the contents as of the file's last
// sync; after the cut, RestoreToLastSync() puts every such file back as it
// was then, as the disk would hold it after a power cut:
//  - writes and truncations since a file's last sync are lost, all of them
//    (the model of LevelDB's fault-injection Env: no torn writes, no
//    reordering among unsynced writes);
//  - a file that existed when it was first opened through this VFS is taken
//    as durable with the contents it had then (tests create those files and
//    sync them before);
//  - a file created through this VFS exists after the cut only once it was
//    synced, and only when it is a journal or a WAL: SQLite's unix VFS syncs
//    the directory at the first sync of a newly created journal or WAL
//    (UNIXFILE_DIRSYNC), not of a new main database, whose directory entry
//    is then taken as lost (conservative);
//  - a deletion is durable only when SQLite asked for the directory to be
//    synced (xDelete's syncDir); otherwise the file comes back with its
//    synced contents;
//  - the -shm file is memory, not disk: it is removed.
// Syncs of covered files by the code under test itself (an fdatasync of the
// WAL outside SQLite) count when the test reports them (NoteExternalSync).
// Syncs are numbered from 1; CutAfterSync(k) cuts the power right after the
// k-th; CutNow() cuts it at once. From then on every sync of a covered file fails (SQLITE_IOERR_FSYNC,
// or EIO for an external one: ExternalSyncFails), so the code under test
// learns nothing more is durable and must not act as if it were (a process
// that ignored it would be caught); writes still reach the real files until
// the test closes its connections and calls RestoreToLastSync(). This is the
// run-on of a power cut: the process stops at its next sync, which fails.
// Thread-safe.
class PowerCutVfs : public SqliteVfsShim {
 public:
  explicit PowerCutVfs(std::string dir);

  void CutAfterSync(uint64_t k) { cut_after_ = k; }
  void CutNow() {
    std::lock_guard lock(mu_);
    cut_ = true;
  }
  bool cut() const { return cut_.load(); }
  uint64_t syncs() const { return syncs_.load(); }

  // Whether a sync of `path` by the code under test itself fails (after the cut).
  bool ExternalSyncFails(const std::string& path) const;
  // The code under test synced the file at `path` itself.
  void NoteExternalSync(const std::string& path);
  // REQUIRES: no connection open on the covered files.
  void RestoreToLastSync();

  int Sync(File& f, int flags) override;
  int Delete(const char* path, int sync_dir) override;
  void Opened(File& f, bool existed) override;

 private:
  struct Durable {
    bool exists = false;
    bool main_db = false;
    bool dir_entry_on_sync = false;  // a new journal or WAL: its first sync makes its name durable
    std::string data;
  };
  bool Covers(const std::string& path) const;
  void Synced(const std::string& path);

  const std::string dir_;
  std::atomic<uint64_t> cut_after_{UINT64_MAX};
  std::atomic<uint64_t> syncs_{0};
  std::atomic<bool> cut_{false};
  std::mutex mu_;
  std::map<std::string, Durable> files_;  // GUARDED_BY(mu_)
};

}  // namespace strata::testing
