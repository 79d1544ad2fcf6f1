// File data operations: Read, Write, Sync, and what a file holds (st_blocks).
//
// Write holds mu_ across its pwrite and its transaction, so the extents table
// and data/<ino> change together with respect to other operations. Read holds
// mu_ only while it copies what it needs out of the database (a ReadPlan); the
// pread of the data file and the fetch of base chunks run without it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <utility>
#include <vector>

#include "store/object.h"
#include "workspace/chunk_layout.h"
#include "workspace/file_space.h"
#include "workspace/rechunk.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {
namespace {

Status CheckRegular(const InodeRow& row) {
  if (S_ISDIR(row.mode)) return Errno(EISDIR, "data of a directory");
  if (!S_ISREG(row.mode)) return Errno(EINVAL, "data of a special file");
  return Status::Ok();
}

// The zero chunks of a store's chunker parameters and key (content-defined
// and fixed, chunk_layout.h), hashed once per process (a store's parameters never change, and a process opens few
// stores). The id of the empty chunk tells the keys apart: an encrypted
// store's zero chunk is cut by its own gear table and has a keyed id.
struct ZeroChunks {
  ChunkRef content_defined, fixed;
};

ZeroChunks ZeroChunksOf(const Store& store) {
  struct Known {
    ChunkerParams params;
    Hash key_mark;
    ZeroChunks chunks;
  };
  static Mutex mu;
  static std::vector<Known> known;
  const ChunkerParams& params = store.config().chunker;
  const Hash key_mark = store.ObjectId(ObjectType::kChunk, "");
  MutexLock lock(&mu);
  for (const Known& k : known) {
    if (k.params.min_size == params.min_size && k.params.avg_size == params.avg_size &&
        k.params.max_size == params.max_size && k.key_mark == key_mark)
      return k.chunks;
  }
  const Chunker chunker = store.NewChunker();
  ZeroChunk zero(chunker, [&store](std::string_view data) { return store.ObjectId(ObjectType::kChunk, data); });
  known.push_back(Known{params, key_mark, ZeroChunks{ChunkRef{zero.id(), zero.length()}, zero.fixed()}});
  return known.back().chunks;
}

// Past a read, the base chunks its plan holds for read-ahead (twice the
// detector's largest window).
constexpr uint64_t kReadAheadReach = 32ull << 20;
// Files whose decoded base chunk lists are kept (a few large ones read at once).
constexpr size_t kKnownBaseChunkLists = 16;

}  // namespace

Result<std::shared_ptr<const BaseChunkList>> SqliteWorkspace::BaseChunksOf(InodeId ino) const {
  const uint64_t generation = db_->base_chunks_generation();
  auto known = base_chunk_lists_.find(ino);
  if (known != base_chunk_lists_.end() && known->second.generation == generation) return known->second.list;
  STRATA_ASSIGN_OR_RETURN(std::string encoded, db_->GetBaseChunks(ino));
  STRATA_ASSIGN_OR_RETURN(std::vector<ChunkRef> chunks, DecodeChunkList(encoded));
  return KeepBaseChunks(ino, std::move(chunks));
}

std::shared_ptr<const BaseChunkList> SqliteWorkspace::KeepBaseChunks(InodeId ino, std::vector<ChunkRef> chunks) const {
  const ZeroChunks zero = ZeroChunksOf(store_);
  auto list = std::make_shared<const BaseChunkList>(std::move(chunks), std::vector{zero.content_defined, zero.fixed});
  if (base_chunk_lists_.size() >= kKnownBaseChunkLists && base_chunk_lists_.count(ino) == 0) base_chunk_lists_.clear();
  base_chunk_lists_[ino] = KnownBaseChunks{db_->base_chunks_generation(), list};
  return list;
}

Result<size_t> SqliteWorkspace::Read(InodeId ino, uint64_t offset, size_t size, ReadTarget* out) {
  ReadPlan plan;
  size_t n = 0;
  {
    MutexLock lock(&mu_);
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    STRATA_RETURN_IF_ERROR(CheckRegular(row));
    if (offset >= row.size || size == 0) return size_t{0};
    n = static_cast<size_t>(std::min<uint64_t>(size, row.size - offset));
    plan.ino = plan.data_ino = ino;
    plan.truncations = files_.truncations();
    plan.size = row.size;
    plan.base_len = row.base_len;
    if (offset < row.base_len) {
      STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const BaseChunkList> list, BaseChunksOf(ino));
      // The chunks of this read and of the read-ahead it may start.
      list->SliceInto(offset, std::min(row.base_len, offset + n + kReadAheadReach), &plan);
    }
    STRATA_ASSIGN_OR_RETURN(plan.extents, db_->Extents(ino, offset, offset + n));
    if (!plan.extents.empty()) {
      STRATA_ASSIGN_OR_RETURN(plan.file, files_.Get(ino, false));
    }
  }
  STRATA_RETURN_IF_ERROR(files_.Read(plan, offset, n, out));
  bytes_read_.fetch_add(n, std::memory_order_relaxed);
  return n;
}

Result<size_t> SqliteWorkspace::Write(InodeId ino, uint64_t offset, std::string_view data) {
  MutexLock lock(&mu_);
  WaitForCapture(ino);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  STRATA_RETURN_IF_ERROR(CheckRegular(row));
  if (data.empty()) return size_t{0};
  // As ext4: a write from the limit on is refused, one reaching past it is cut short.
  if (offset >= kMaxFileSize) return Errno(EFBIG, "write past the largest file size");
  data = data.substr(0, static_cast<size_t>(std::min<uint64_t>(data.size(), kMaxFileSize - offset)));
  const uint64_t end = offset + data.size();
  // Bytes first, then the transaction that makes them part of the file: a
  // crash in between leaves bytes no extent points at, never an extent
  // pointing at bytes that were not written.
  STRATA_RETURN_IF_ERROR(RoomForData(data.size()));
  STRATA_RETURN_IF_ERROR(files_.Write(ino, offset, data));
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_RETURN_IF_ERROR(db_->AddExtent(ino, offset, end));
  const int64_t now = NowNs();
  row.size = std::max(row.size, end);
  row.mtime_ns = row.ctime_ns = now;
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  bytes_written_.fetch_add(data.size(), std::memory_order_relaxed);
  return data.size();
}

Status SqliteWorkspace::Sync(InodeId ino) {
  {
    // What the kernel wrote straight to the data file (passthrough) reached
    // no Write(): its size and extents are recorded here, or a daemon killed
    // after this fsync returned would come back with the file as it was
    // before those writes (its data file cut to the recorded size).
    MutexLock lock(&mu_);
    STRATA_RETURN_IF_ERROR(RefreshDirect(ino));
  }
  // Data first: once the WAL is durable, its extents must point at durable bytes.
  STRATA_RETURN_IF_ERROR(files_.Sync(ino));
  {
    MutexLock lock(&mu_);
    counters_.syncs++;
    Status s = CommitPending();
    // Operations lost with a batch SQLite rolled back (perhaps by the
    // committer thread, before this call) are reported to the next Sync,
    // once, as a failed writeback is to the next fsync.
    if (db_->acknowledged_lost() != lost_batches_synced_) {
      lost_batches_synced_ = db_->acknowledged_lost();
      if (s.ok()) s = Errno(db_->lost_errno(), "operations were lost: the database could not commit them");
    }
    STRATA_RETURN_IF_ERROR(s);
  }
  // Done without mu_: later batches only append, and a checkpoint that
  // recycles the WAL has synced the database file first.
  return SyncWal();
}

Status SqliteWorkspace::SyncWal() {
  // With synchronous=NORMAL a committed batch is in the WAL file but not
  // necessarily on disk; one fdatasync of the WAL makes it durable.
  const std::string wal = dir_ + "/workspace.db-wal";
  Status s = store_.env()->SyncFile(wal);
  if (s.ok() || s.IsNotFound()) return Status::Ok();  // not found: everything is checkpointed into the database file
  return Status::IOError("syncing " + wal, EIO);
}

namespace {

// Files whose held base bytes HeldBytes keeps (a few large ones looked at often).
constexpr size_t kHeldBaseFiles = 64;

// The bytes of [0, base_len) the base holds: neither in a zero chunk nor
// replaced by an extent. From `cache` when it is current, else counted anew
// (every extent read once) and followed from then on.
Result<uint64_t> BaseHeld(NamespaceDb& db, const Store& store, const InodeRow& row, const BaseChunksGetter& base,
                          HeldBaseCache& cache) {
  const uint64_t generation = db.base_chunks_generation();
  std::shared_ptr<const BaseChunkList> list;
  if (row.base_len >= ZeroChunksOf(store).content_defined.length) {  // smaller files hold few zero chunks
    STRATA_ASSIGN_OR_RETURN(list, base(row.ino));
  }
  auto empty_in = [&](uint64_t start, uint64_t end) { return list ? list->EmptyBytesIn(start, end) : 0; };
  std::vector<Extent> covered;
  auto known = cache.find(row.ino);
  if (known != cache.end() && known->second.generation == generation && known->second.base_len == row.base_len &&
      db.TakeNewlyCovered(row.ino, &covered)) {
    // Each newly covered range was held unless it is past base_len or empty.
    for (const Extent& c : covered) {
      const uint64_t end = std::min(c.end, row.base_len);
      if (c.start >= end) continue;
      known->second.bytes -= std::min(known->second.bytes, end - c.start - empty_in(c.start, end));
    }
    return known->second.bytes;
  }
  std::vector<Extent> extents;
  if (row.changed) {
    STRATA_ASSIGN_OR_RETURN(extents, db.Extents(row.ino, 0, row.base_len));
  }
  uint64_t held = row.base_len - empty_in(0, row.base_len);
  for (const Extent& x : extents) {
    const uint64_t end = std::min(x.end, row.base_len);
    if (x.start < end) held -= std::min(held, end - x.start - empty_in(x.start, end));
  }
  db.FollowExtents(row.ino);
  if (cache.size() >= kHeldBaseFiles && known == cache.end()) cache.clear();
  cache[row.ino] = HeldBase{generation, row.base_len, held};
  return held;
}

}  // namespace

uint64_t HeldBytes(NamespaceDb& db, const FileData& files, const Store& store, const InodeRow& row,
                   const BaseChunksGetter& base, HeldBaseCache& cache) {
  const uint64_t written = row.changed ? files.AllocatedBytes(row.ino) : 0;
  if (row.base_len == 0) return written;
  auto held = BaseHeld(db, store, row, base, cache);
  if (!held.ok()) return row.size;
  return written + *held;
}

}  // namespace strata::workspace_internal
