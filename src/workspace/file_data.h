// FileData: the bytes of workspace files, outside SQLite.
//
// Each changed regular file has a sparse file data/<ino> holding the bytes
// written to it at their file offsets. Which ranges of it are meaningful is
// the extents table's business (NamespaceDb); a byte outside every extent is
// never read from data/<ino>, so a crash between a pwrite and the transaction
// that records it leaves only unreferenced bytes behind.
//
// A read of [offset, offset+n) is put together from three sources, per range:
//   1. a written extent        → pread of data/<ino>
//   2. else below base_len     → the base file's chunks (through ChunkCache)
//   3. else                    → zeros (holes, or a file truncated and regrown)
//
// How long a data file must be: as long as the end of its last extent (every
// operation that adds an extent writes, or extends, the file that far first;
// only a truncation the database recorded shortens it, after the batch). A
// data file that is shorter, or missing while extents name it, is damage: a
// read of the bytes it lacks fails (Corruption, the path in the message)
// instead of reading zeros, so neither a program nor a commit takes zeros
// for the file's bytes. (After a power cut, see SqliteWorkspace::Recover.)
//
// Every file call goes through the workspace's Env. Every data file is
// opened inside data/, itself opened once refusing a symlink (env.h:
// Directory: never following a link, never leaving the directory), and must
// be a regular file with one link: a store whose data/<ino> was replaced by a
// link to a file elsewhere gets EIO, and the daemon (root, perhaps) never
// reads or writes that file.
//
// Open data files are kept in a small table of shared descriptors, so a read
// in progress keeps its descriptor valid even if the inode is deleted meanwhile.
//
// Base reads that form a sequential stream (read_ahead.h) start background
// fetches of the chunks ahead of them (ChunkCache::Prefetch) on a few
// read-ahead threads of this FileData, so the next requests find their chunks
// loaded or in flight instead of fetching them one after the other.
//
// Thread-safety: all methods may be called concurrently; Read() takes no lock
// of the workspace and only this class's table lock for a lookup.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "env/env.h"
#include "store/store.h"
#include "store/tree.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "workspace/chunk_cache.h"
#include "workspace/namespace_db.h"
#include "workspace/read_ahead.h"
#include "workspace/read_target.h"
#include "workspace/released_files.h"

namespace strata::workspace_internal {

// An open data/<ino>; closed when the last user lets go.
class DataFile {
 public:
  explicit DataFile(std::unique_ptr<RandomRWFile> file) : file_(std::move(file)) {}
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;
  RandomRWFile& file() const { return *file_; }

 private:
  const std::unique_ptr<RandomRWFile> file_;
};

// Base chunk lists are stored in the inode row as: varint count, then per chunk
// the 32-byte id and a varint length.
std::string EncodeChunkList(const std::vector<ChunkRef>& chunks);
Result<std::vector<ChunkRef>> DecodeChunkList(std::string_view data);

// Everything a read needs, taken from the database under the workspace lock
// and then used without it.
struct ReadPlan {
  InodeId ino = 0;  // a program's read of this inode; 0 (internal reads): no read-ahead
  InodeId data_ino = 0;  // whose data file the extents are in (always set)
  // FileData::truncations() when the plan was taken, under the workspace
  // lock: a data file shorter than the plan's extents is damage unless a
  // truncation came since (a read racing a truncate reads zeros there).
  uint64_t truncations = 0;
  uint64_t size = 0;
  uint64_t base_len = 0;
  std::vector<ChunkRef> base_chunks;  // only when base_len > 0: all, or those a read needs
  uint64_t base_start = 0;            // the file offset of base_chunks[0]
  // Where each base chunk ends, built by the first read of the base: a plan
  // read many times (a commit's capture) finds its chunks by binary search.
  mutable std::vector<uint64_t> base_ends;
  std::vector<Extent> extents;        // those overlapping the range, by start
  std::shared_ptr<DataFile> file;     // null when there is no data file
};

// A file's base chunk list decoded once, with where each chunk ends: a read
// of a large file takes only the chunks it needs (a 10 GiB image cut into
// 8 KiB chunks has 1.3 million of them).
struct BaseChunkList {
  // `empty`: the chunks that hold nothing (the zero chunks, file_space.h).
  explicit BaseChunkList(std::vector<ChunkRef> list, const std::vector<ChunkRef>& empty = {});
  // Sets plan's base_chunks to those overlapping [from, to) and its base_start.
  void SliceInto(uint64_t from, uint64_t to, ReadPlan* plan) const;
  // How many bytes of [start, end) lie in chunks that hold nothing.
  uint64_t EmptyBytesIn(uint64_t start, uint64_t end) const;

  std::vector<ChunkRef> chunks;
  std::vector<uint64_t> ends;
  std::vector<Extent> empty_runs;  // where those chunks lie, runs of them merged, by start
};

class FileData {
 public:
  // dir: data/, reached through env (which must outlive this).
  FileData(Env* env, std::string dir, Store& store, ChunkCache& cache)
      : dir_(std::move(dir)),
        data_dir_(OpenDirectory(env, dir_, &dir_status_)),
        store_(store),
        cache_(cache),
        released_(data_dir_.get(), "released"),
        read_ahead_pool_(kReadAheadThreads, 64) {}

  const std::string& dir() const { return dir_; }
  // Whether data/ opened as a directory of its own (not a symlink); when it
  // did not, every data file operation fails with EIO. Open checks it.
  const Status& directory_status() const { return dir_status_; }
  // The data files as found in data/ (names of numbers only; others are not ours).
  Result<std::vector<InodeId>> ListFiles();
  // Corruption naming the path unless data/<ino> is a regular file of its own
  // holding at least `length` bytes (the end of its last extent).
  Status CheckLength(InodeId ino, uint64_t length) { return CheckLengthAt(data_dir_.get(), dir_, ino, length); }
  // The same for the data directory dir, open as data_dir (fsck: no FileData).
  static Status CheckLengthAt(Directory* data_dir, const std::string& dir, InodeId ino, uint64_t length);
  // Opens a data directory as the constructor does (refusing a symlink);
  // null, and *status says why, when it cannot.
  static std::unique_ptr<Directory> OpenDirectory(Env* env, const std::string& dir, Status* status);
  ChunkCache& chunk_cache() { return cache_; }
  // The disk blocks data/<ino> holds, in bytes; 0 without one.
  uint64_t AllocatedBytes(InodeId ino) const;
  std::string PathOf(InodeId ino) const { return dir_ + "/" + std::to_string(ino); }

  // The open data file of ino; null (and ok) when it does not exist and
  // create is false.
  Result<std::shared_ptr<DataFile>> Get(InodeId ino, bool create);
  // pwrites all of data at offset, creating the file (sparse) if needed.
  Status Write(InodeId ino, uint64_t offset, std::string_view data);
  // Lengthens the data file (creating it) to at least size, as a hole.
  Status Extend(InodeId ino, uint64_t size);
  // Shrinks the data file to size if it exists and is longer (frees space).
  Status Truncate(InodeId ino, uint64_t size);
  // How many data files Truncate has shortened so far.
  uint64_t truncations() const { return truncations_.load(); }
  // Deletes the data file; a missing one is fine. It is gone from its name
  // at once, its space comes back a little later (ReleasedFiles).
  void Remove(InodeId ino);
  // The same, its name freed by a thread of this class a little later
  // (ReleasedFiles::ReleaseLater): for the thousands a commit releases at
  // once. Get() of the inode meanwhile finds no file, or a new one.
  void RemoveLater(InodeId ino);
  // Data files removed whose space is not back yet.
  uint64_t RemovalsPending() { return released_.pending(); }
  // fdatasync of the data file (if any) and of data/ if files were created.
  Status Sync(InodeId ino);

  // Makes [start, end) of the data file read as zeros and hold no space
  // (fallocate PUNCH_HOLE; writes zeros where the filesystem cannot punch).
  // No data file: nothing to do, a missing file reads as zeros.
  Status Punch(InodeId ino, uint64_t start, uint64_t end);
  // Reserves disk space for [start, end) of the data file (fallocate, which
  // may lengthen it). ENOSPC / EDQUOT / EFBIG when the space is not there; a
  // filesystem that cannot reserve is not an error.
  Status Reserve(InodeId ino, uint64_t start, uint64_t end);
  // The parts of [start, end) where the data file holds data rather than a
  // hole, by lseek(SEEK_DATA / SEEK_HOLE); all of it where the filesystem does
  // not tell holes apart, none of it without a data file.
  Result<std::vector<Extent>> DataRanges(InodeId ino, uint64_t start, uint64_t end);

  // Fills out with the n bytes at offset, in order. REQUIRES: offset + n <= plan.size.
  Status Read(const ReadPlan& plan, uint64_t offset, size_t n, ReadTarget* out);
  // The same into out[0, n).
  Status Read(const ReadPlan& plan, uint64_t offset, size_t n, char* out);

 private:
  // On a full disk: waits once (*waited) for the space of removed files still
  // being deleted; whether there was any, so the failed call is worth a retry.
  bool WaitForReleasedSpace(bool* waited);
  // `sequential`: the read continues a sequential stream, so whole chunks
  // are loaded (read-ahead loads the next ones); else only the frames it needs.
  Status ReadBase(const ReadPlan& plan, uint64_t offset, size_t n, bool sequential, ReadTarget* out);
  // Prefetches the base chunks in the detector's window after a read of
  // [offset, offset + n), if the read continues a sequential stream.
  // Returns whether the read is part of a sequential stream.
  bool ReadAhead(const ReadPlan& plan, uint64_t offset, size_t n);

  // Threads that load prefetched chunks; the cache bounds how many run at once.
  static constexpr size_t kReadAheadThreads = 8;

  const std::string dir_;
  Status dir_status_;
  const std::unique_ptr<Directory> data_dir_;  // data/, before released_ (which lives in it)
  Store& store_;
  ChunkCache& cache_;
  Mutex mu_;
  std::unordered_map<InodeId, std::shared_ptr<DataFile>> open_ GUARDED_BY(mu_);
  // Files created (or maybe created) so far, and how many of them the last
  // completed fsync of data/ covers; dir_sync_mu_ orders those fsyncs.
  std::atomic<uint64_t> files_created_{0};
  std::atomic<uint64_t> truncations_{0};
  std::atomic<uint64_t> created_synced_{0};
  Mutex dir_sync_mu_;
  SequentialDetector detector_;
  ReleasedFiles released_;  // data/released/: Remove() moves files there
  // Last: destroyed first, so no prefetch outlives what it uses.
  ThreadPool read_ahead_pool_;
};

}  // namespace strata::workspace_internal
