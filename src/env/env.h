// Env: every touch of the OS that the store makes, behind one interface.
//
// The store never calls open/pwrite/fsync/rename directly; it asks an Env. The
// production Env is PosixEnv (Env::Default()). Tests substitute an Env that fails
// the Nth write, fsync or rename, or drops unsynced data, to prove crash safety.
// Durability rules live with the callers (pack writer, config writer) and are
// expressed only through Sync() and SyncDir(), so a fault Env can observe them.
//
// Thread-safety: an Env is shared by all threads. File objects are used by one
// thread at a time, except RandomAccessFile, whose reads may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/buffer.h"
#include "util/status.h"

namespace strata {

// A file being written front to back.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // All of data, or nothing: a failed Append (a full disk halfway through)
  // cuts the file back to where it was, so that the caller may go on. When
  // even that fails, this and every later call fail.
  virtual Status Append(std::string_view data) = 0;
  // Makes everything appended so far durable (fdatasync).
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  virtual uint64_t Size() const = 0;
};

// A file read at arbitrary offsets, safely from several threads at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads exactly n bytes at offset into out (resized); a short file is Corruption.
  virtual Status Read(uint64_t offset, size_t n, std::string* out) const = 0;
  // The same n bytes in a Buffer (the data path's memory, never zero-filled
  // first). This default goes through Read and copies; files that can read
  // straight into a Buffer override it.
  virtual Result<Buffer> ReadBuffer(uint64_t offset, size_t n) const;
  virtual uint64_t Size() const = 0;
};

// A lock on a file (flock), held until destroyed. Shared locks coexist;
// an exclusive one excludes every other lock on the file, in this process too.
// The kernel drops it when its process dies, so a crash never leaves it held.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

enum class LockMode { kShared, kExclusive };

class Env {
 public:
  virtual ~Env() = default;
  static Env* Default();  // the process-wide PosixEnv; never deleted

  // Creates a new file; fails with AlreadyExists if it is there.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  virtual Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) = 0;
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  // Writes a whole file so that after a crash either the old or the new content
  // is there: temp file, fsync, rename, fsync of the directory.
  virtual Status WriteFileAtomically(const std::string& path, std::string_view data) = 0;

  virtual bool Exists(const std::string& path) = 0;
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;
  virtual Status CreateDir(const std::string& path) = 0;  // ok if it exists
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Makes the directory's entries (creations, renames) durable.
  virtual Status SyncDir(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;

  // Whether a process with this pid exists; used to tell the temp files of a
  // live writer from those a crashed one left behind.
  virtual bool ProcessAlive(int pid) = 0;

  // Locks path (created if missing). With wait, blocks until granted;
  // without, a lock held elsewhere is Conflict at once.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) = 0;

  // An Env confined to the directory `root` (a store): every path given to it
  // must be `root` itself or root + "/" + a plain relative name (beneath.h),
  // and is reached from a descriptor of root taken now, one component at a
  // time, never following a symbolic link; other paths are InvalidArgument.
  // It must not outlive this Env. The default, for test Envs that wrap
  // another, forwards every call to this Env unconfined.
  virtual Result<std::unique_ptr<Env>> Beneath(const std::string& root);
};

// Raises this process's soft RLIMIT_NOFILE to its hard limit (at start, in
// main); returns the soft limit in force afterwards.
uint64_t RaiseFdLimitToHard();

}  // namespace strata
