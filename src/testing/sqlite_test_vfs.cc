#include "testing/sqlite_test_vfs.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace strata::testing {
namespace {

SqliteVfsShim* g_shim = nullptr;
// Inside PowerCutVfs::Sync on this thread: the fdatasync SQLite makes there
// is that sync, not an external one.
thread_local bool t_in_sync = false;

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

struct ShimCallbacks {
  using File = SqliteVfsShim::File;
  static File& F(sqlite3_file* f) { return *reinterpret_cast<File*>(f); }
  static sqlite3_file* Real(sqlite3_file* f) { return F(f).real; }

  static int Close(sqlite3_file* f) {
    int rc = Real(f)->pMethods->xClose(Real(f));
    delete F(f).path;
    F(f).path = nullptr;
    return rc;
  }
  static int Read(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
    return Real(f)->pMethods->xRead(Real(f), p, n, off);
  }
  static int Write(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) { return g_shim->Write(F(f), p, n, off); }
  static int Truncate(sqlite3_file* f, sqlite3_int64 to) { return g_shim->Truncate(F(f), to); }
  static int Sync(sqlite3_file* f, int flags) { return g_shim->Sync(F(f), flags); }
  static int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
  static int Lock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
  static int Unlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
  static int CheckReservedLock(sqlite3_file* f, int* out) {
    return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
  }
  static int FileControl(sqlite3_file* f, int op, void* arg) {
    return Real(f)->pMethods->xFileControl(Real(f), op, arg);
  }
  static int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
  static int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
  static int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
    return Real(f)->pMethods->xShmMap(Real(f), page, size, extend, out);
  }
  static int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
    return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
  static int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
  // No memory-mapped reads: every read goes through xRead (SQLite falls back
  // to it when xFetch hands out no pointer).
  static int Fetch(sqlite3_file*, sqlite3_int64, int, void** out) {
    *out = nullptr;
    return SQLITE_OK;
  }
  static int Unfetch(sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; }

  static constexpr sqlite3_io_methods kMethods = {
      3,         Close,      Read,     Write,   Truncate,   Sync,  FileSize,
      Lock,      Unlock,     CheckReservedLock, FileControl, SectorSize, DeviceCharacteristics,
      ShmMap,    ShmLock,    ShmBarrier,        ShmUnmap,    Fetch,      Unfetch};

  static int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
    auto* shim = static_cast<SqliteVfsShim*>(vfs->pAppData);
    File& sf = F(f);
    sf.real = reinterpret_cast<sqlite3_file*>(&sf + 1);
    sf.flags = flags;
    sf.path = nullptr;
    sf.base.pMethods = nullptr;
    const bool existed = name != nullptr && ::access(name, F_OK) == 0;
  int rc = shim->real_->xOpen(shim->real_, name, sf.real, flags, out_flags);
    if (sf.real->pMethods == nullptr) return rc;
    sf.path = new (std::nothrow) std::string(name != nullptr ? name : "");
    if (sf.path == nullptr) {
      sf.real->pMethods->xClose(sf.real);
      return SQLITE_NOMEM;
    }
    sf.base.pMethods = &kMethods;
    if (rc == SQLITE_OK) shim->Opened(sf, existed);
    return rc;
  }
  static int Delete(sqlite3_vfs* vfs, const char* path, int sync_dir) {
    return static_cast<SqliteVfsShim*>(vfs->pAppData)->Delete(path, sync_dir);
  }
};

SqliteVfsShim::SqliteVfsShim(const char* name) : name_(name) {
  if (g_shim != nullptr) throw std::logic_error("one SqliteVfsShim at a time");
  real_ = sqlite3_vfs_find(nullptr);
  if (real_ == nullptr) throw std::runtime_error("no default SQLite VFS");
  vfs_ = *real_;
  vfs_.zName = name_.c_str();
  vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
  vfs_.pAppData = this;
  vfs_.xOpen = ShimCallbacks::Open;
  vfs_.xDelete = ShimCallbacks::Delete;
  g_shim = this;
  if (sqlite3_vfs_register(&vfs_, 1) != SQLITE_OK) throw std::runtime_error("registering the SQLite VFS shim");
}

SqliteVfsShim::~SqliteVfsShim() {
  sqlite3_vfs_unregister(&vfs_);
  g_shim = nullptr;
}

// ---- PowerCutVfs

PowerCutVfs::PowerCutVfs(std::string dir) : SqliteVfsShim("strata-power-cut"), dir_(Canonical(dir) + "/") {}

bool PowerCutVfs::Covers(const std::string& path) const { return path.compare(0, dir_.size(), dir_) == 0; }

void PowerCutVfs::Opened(File& f, bool existed) {
  if (f.path->empty()) return;  // a temp file
  const std::string path = Canonical(*f.path);
  if (!Covers(path)) return;
  std::lock_guard lock(mu_);
  if (files_.count(path) != 0) return;
  Durable& d = files_[path];
  // A file that existed before its first open here is as durable as it is now.
  if (auto data = ReadWhole(path); existed && data) {
    d.exists = true;
    d.data = std::move(*data);
  }
  d.main_db = (f.flags & SQLITE_OPEN_MAIN_DB) != 0;
  d.dir_entry_on_sync = (f.flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL)) != 0;
}

void PowerCutVfs::Synced(const std::string& path) {
  std::lock_guard lock(mu_);
  if (cut_) return;
  auto it = files_.find(path);
  if (it == files_.end()) return;
  Durable& d = it->second;
  if (auto data = ReadWhole(path)) {
    d.data = std::move(*data);
    if (d.dir_entry_on_sync) d.exists = true;
  }
  if (++syncs_ >= cut_after_) cut_ = true;
}

int PowerCutVfs::Sync(File& f, int flags) {
  if (cut_ && Covers(Canonical(*f.path))) return SQLITE_IOERR_FSYNC;  // the power is off
  t_in_sync = true;
  int rc = RealSync(f, flags);
  t_in_sync = false;
  if (rc == SQLITE_OK) Synced(Canonical(*f.path));
  return rc;
}

bool PowerCutVfs::ExternalSyncFails(const std::string& path) const { return !t_in_sync && cut_ && Covers(Canonical(path)); }

void PowerCutVfs::NoteExternalSync(const std::string& path) {
  if (!t_in_sync) Synced(Canonical(path));
}

int PowerCutVfs::Delete(const char* path, int sync_dir) {
  int rc = SqliteVfsShim::Delete(path, sync_dir);
  const std::string p = Canonical(path);
  if (rc == SQLITE_OK && sync_dir && Covers(p)) {
    std::lock_guard lock(mu_);
    auto it = files_.find(p);
    if (it != files_.end() && !cut_) it->second.exists = false;
  }
  return rc;
}

void PowerCutVfs::RestoreToLastSync() {
  std::lock_guard lock(mu_);
  std::error_code ec;
  for (const auto& [path, d] : files_) {
    if (d.main_db) std::filesystem::remove(path + "-shm", ec);
    if (!d.exists) {
      std::filesystem::remove(path, ec);
      continue;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(d.data.data(), static_cast<std::streamsize>(d.data.size()));
    if (!out) throw std::runtime_error("restoring " + path);
  }
}

}  // namespace strata::testing
