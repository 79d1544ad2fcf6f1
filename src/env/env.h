// Env: every touch of the OS that the store and the workspace make, behind
// one interface.
//
// Neither calls open/pwrite/fsync/rename directly; they ask an Env. The
// production Env is PosixEnv (Env::Default()). Tests substitute an Env that fails
// the Nth write, fsync or rename, or drops unsynced data, to prove crash safety.
// Durability rules live with the callers (pack writer, config writer, the
// workspace's data files) and are expressed only through the Sync calls here,
// so a fault Env can observe them.
//
// Thread-safety: an Env is shared by all threads. File objects are used by one
// thread at a time, except RandomAccessFile, whose reads may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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

// What fstat/fstatat tell of a file.
struct FileInfo {
  uint64_t size = 0;
  uint64_t allocated = 0;  // bytes of disk blocks it holds (st_blocks * 512)
  uint32_t mode = 0;       // st_mode: type and permissions
  uint64_t links = 0;      // st_nlink
};

// A file read and written in place at any offset (a workspace's data file).
// Failures are IOError with the errno of the call, so callers can tell a full
// disk (ENOSPC, EDQUOT) or an unsupported call (EOPNOTSUPP) from the rest.
// Thread-safety: every method may run concurrently with the others.
class RandomRWFile {
 public:
  virtual ~RandomRWFile() = default;
  // Reads up to n bytes at offset into out; *got is less than n only at the end of the file.
  virtual Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const = 0;
  // Writes all of data at offset.
  virtual Status WriteAt(uint64_t offset, std::string_view data) = 0;
  virtual Status Truncate(uint64_t size) = 0;
  // Reserves disk blocks for [offset, offset + length), lengthening the file if needed (fallocate).
  virtual Status Allocate(uint64_t offset, uint64_t length) = 0;
  // Makes [offset, offset + length) a hole that reads as zeros, keeping the size.
  virtual Status PunchHole(uint64_t offset, uint64_t length) = 0;
  // Makes the bytes written so far durable (fdatasync).
  virtual Status Sync() = 0;
  virtual Result<FileInfo> Stat() const = 0;
  // The first offset at or after `offset` that holds data (SEEK_DATA); nullopt
  // when only a hole follows. The next hole at or after offset (SEEK_HOLE; the
  // end of the file counts as one).
  virtual Result<std::optional<uint64_t>> NextData(uint64_t offset) const = 0;
  virtual Result<uint64_t> NextHole(uint64_t offset) const = 0;
};

// A directory held open: every name given to it is a single component looked
// up in that directory (not a path), never following a symbolic link and
// never leaving it, even if the directory was moved or its path replaced by a
// link since it was opened. A missing name is NotFound; other failures are
// IOError with the call's errno (ELOOP or EXDEV for a refused link).
// Thread-safety: every method may run concurrently with the others.
class Directory {
 public:
  virtual ~Directory() = default;
  virtual const std::string& path() const = 0;  // for messages
  // Opens name for reading and writing (non-blocking, so a FIFO planted there
  // cannot hang the call), creating it (mode 0600) when create.
  virtual Result<std::unique_ptr<RandomRWFile>> OpenFile(const std::string& name, bool create) = 0;
  // The file name itself, a link not followed.
  virtual Result<FileInfo> Stat(const std::string& name) = 0;
  virtual Result<std::vector<std::string>> List() = 0;  // without "." and ".."
  // Makes the directory's entries (creations, removals) durable.
  virtual Status Sync() = 0;
  // The directory name in this one (created, mode 0700, if missing and create).
  virtual Result<std::unique_ptr<Directory>> OpenSubdirectory(const std::string& name, bool create) = 0;
  // Moves name to to_name in `to`, never replacing a file there (AlreadyExists).
  // REQUIRES: `to` comes from the same Env.
  virtual Status MoveTo(const std::string& name, Directory& to, const std::string& to_name) = 0;
  virtual Status Remove(const std::string& name) = 0;
};

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
  // Renames from (a file or a directory) to `to` only if nothing is there:
  // AlreadyExists otherwise, whatever `to` is (renameat2 RENAME_NOREPLACE).
  virtual Status RenameNoReplace(const std::string& from, const std::string& to) = 0;
  // Removes path and, when it is a directory, everything below it. Links are
  // removed, never followed. A path that is not there is no error.
  virtual Status RemoveTree(const std::string& path) = 0;
  // Makes the directory's entries (creations, renames) durable.
  virtual Status SyncDir(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;

  // Whether a process with this pid exists; used to tell the temp files of a
  // live writer from those a crashed one left behind.
  virtual bool ProcessAlive(int pid) = 0;
  // The id of this boot of the machine (/proc/sys/kernel/random/boot_id),
  // which differs after every restart: whether the kernel's page cache, and
  // with it every unsynced write, has survived since it was last read.
  virtual Result<std::string> BootId() = 0;

  // Locks path (created if missing). With wait, blocks until granted;
  // without, a lock held elsewhere is Conflict at once.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) = 0;

  // The directory at path, its last component not followed if a link (ELOOP).
  virtual Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) = 0;
  // Makes the bytes of the existing file at path durable (fdatasync).
  virtual Status SyncFile(const std::string& path) = 0;
  // Bytes the filesystem holding path has for ordinary use: statvfs f_bavail,
  // without the blocks kept for root (a daemon writes for its users).
  virtual Result<uint64_t> FreeSpace(const std::string& path) = 0;

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
