// Operations on ranges of file data: Allocate (fallocate), SeekData (lseek
// SEEK_DATA / SEEK_HOLE) and CopyRange (copy_file_range).
//
// What a byte of a file holds, by precedence (docs/format/workspace.md):
//   inside an extent  → data/<ino>: data where that file holds a block there,
//                       a hole where it has none (reads as zeros)
//   below base_len    → the base commit's byte: data
//   otherwise         → a hole
// So a punched or zeroed range needs no record of its own. Above base_len its
// extents are dropped. Below base_len the range becomes an extent over a hole
// punched into data/<ino> (or base_len drops to the range's start when the
// range reaches it): it reads as zeros, holds no space, and SEEK_HOLE finds it
// by asking data/<ino>. For crashes this is a write of zeros: data/<ino>
// changes first, the extents in the operation's transaction after it.
//
// Locking as in data_ops.cc: Allocate and SeekData hold mu_ throughout, I/O of
// data/<ino> included. CopyRange goes in pieces; per piece it plans under mu_,
// reads without it and writes under it again, so a long copy does not stall
// every other operation.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "workspace/file_space.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

static_assert(kAllocKeepSize == FALLOC_FL_KEEP_SIZE && kAllocPunchHole == FALLOC_FL_PUNCH_HOLE &&
              kAllocZeroRange == FALLOC_FL_ZERO_RANGE);

namespace {

// CopyRange moves at most this much per round of plan, read and write.
constexpr uint64_t kCopyPiece = 4 << 20;
// SeekData looks at this much of the file at first, doubling each round, so
// finding the next hole does not read every extent of a large file.
constexpr uint64_t kSeekWindow = 64 << 20;

enum class Source { kWritten, kBase, kHole };

struct Span {
  uint64_t start = 0, end = 0;
  Source source = Source::kHole;
};

Status CheckFile(const InodeRow& row, int special_errno) {
  if (S_ISDIR(row.mode)) return Errno(EISDIR, "data of a directory");
  if (!S_ISREG(row.mode)) return Errno(special_errno, "data of a special file");
  return Status::Ok();
}

// Where the bytes of [start, min(end, size)) of row come from, in order and
// covering the range, adjacent spans of one source merged. REQUIRES mu_.
Result<std::vector<Span>> Spans(NamespaceDb& db, FileData& files, const InodeRow& row, uint64_t start,
                                uint64_t end) {
  std::vector<Span> out;
  end = std::min(end, row.size);
  if (start >= end) return out;
  auto add = [&out](uint64_t s, uint64_t e, Source source) {
    if (s >= e) return;
    if (!out.empty() && out.back().end == s && out.back().source == source) {
      out.back().end = e;
    } else {
      out.push_back(Span{s, e, source});
    }
  };
  auto add_gap = [&](uint64_t s, uint64_t e) {  // outside every extent
    add(s, std::min(e, row.base_len), Source::kBase);
    add(std::max(s, row.base_len), e, Source::kHole);
  };
  STRATA_ASSIGN_OR_RETURN(auto extents, db.Extents(row.ino, start, end));
  uint64_t pos = start;
  for (const Extent& x : extents) {
    const uint64_t xs = std::max(x.start, start), xe = std::min(x.end, end);
    add_gap(pos, xs);
    STRATA_ASSIGN_OR_RETURN(auto data, files.DataRanges(row.ino, xs, xe));
    uint64_t p = xs;
    for (const Extent& d : data) {
      add(p, d.start, Source::kHole);
      add(d.start, d.end, Source::kWritten);
      p = d.end;
    }
    add(p, xe, Source::kHole);
    pos = xe;
  }
  add_gap(pos, end);
  return out;
}

// SEEK_DATA / SEEK_HOLE answer by block of this size, as ext4 does with 4 KiB
// blocks: a block holding any data is data from its first byte to its last.
constexpr uint64_t kSeekBlock = 4096;

// The holes among spans (in order, covering a range that starts on a block
// boundary and ends on one or at size), by whole block: only the blocks a
// hole span covers entirely, the last partial block of the file included.
std::vector<Extent> BlockHoles(const std::vector<Span>& spans, uint64_t size) {
  std::vector<Extent> holes;
  for (const Span& s : spans) {
    if (s.source != Source::kHole) continue;
    const uint64_t start = (s.start + kSeekBlock - 1) / kSeekBlock * kSeekBlock;
    const uint64_t end = s.end == size ? size : s.end / kSeekBlock * kSeekBlock;
    if (start >= end) continue;
    if (!holes.empty() && holes.back().end == start) {
      holes.back().end = end;
    } else {
      holes.push_back(Extent{start, end});
    }
  }
  return holes;
}

// The database half of making [start, end) of row read as zeros: its extents
// go; the part below base_len, which would read the base, becomes an extent
// (over bytes that read as zeros), or base_len drops to start when the range
// reaches it. Updates row.base_len; the caller writes row. An extent added
// has its data file made that long (a hole), as every extent has.
// REQUIRES: mu_ held, a transaction open, data/<ino> reads zeros in [start, end).
Status ZeroInDb(NamespaceDb& db, FileData& files, InodeRow& row, uint64_t start, uint64_t end) {
  if (start >= end) return Status::Ok();
  STRATA_RETURN_IF_ERROR(db.RemoveExtentRange(row.ino, start, end));
  if (start >= row.base_len) return Status::Ok();
  if (end >= row.base_len) {
    row.base_len = start;
    return Status::Ok();
  }
  STRATA_RETURN_IF_ERROR(files.Extend(row.ino, end));
  return db.AddExtent(row.ino, start, end);
}

}  // namespace

Status SqliteWorkspace::Allocate(InodeId ino, int mode, uint64_t offset, uint64_t length) {
  const bool keep_size = mode & kAllocKeepSize, punch = mode & kAllocPunchHole, zero = mode & kAllocZeroRange;
  // The combinations fallocate(2) itself refuses are refused the same way.
  if ((mode & ~(kAllocKeepSize | kAllocPunchHole | kAllocZeroRange)) != 0 || (punch && (zero || !keep_size)))
    return Errno(EOPNOTSUPP, "fallocate mode " + std::to_string(mode));
  if (length == 0) return Errno(EINVAL, "fallocate of an empty range");
  const uint64_t end = offset + length;
  if (end < offset || end > kMaxFileSize) return Errno(EFBIG, "fallocate past the largest file size");
  MutexLock lock(&mu_);
  WaitForCapture(ino);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  STRATA_RETURN_IF_ERROR(CheckFile(row, ENODEV));
  // Zeroing stops at the end of the file: everything past it reads as zeros.
  const uint64_t zero_end = punch || zero ? std::min(end, row.size) : offset;
  // data/<ino> first (zeros, reserved space), then the transaction, as Write does.
  STRATA_RETURN_IF_ERROR(files_.Punch(ino, offset, zero_end));
  if (!punch) {
    // Bytes that will still come from the base are in the store already.
    uint64_t base_len = row.base_len;
    if (offset < base_len && zero_end >= base_len) base_len = offset;
    const uint64_t from = std::max(offset, base_len);
    if (from < end) STRATA_RETURN_IF_ERROR(RoomForData(end - from));
    STRATA_RETURN_IF_ERROR(files_.Reserve(ino, from, end));
  }
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_RETURN_IF_ERROR(ZeroInDb(*db_, files_, row, offset, zero_end));
  if (!keep_size) row.size = std::max(row.size, end);
  row.mtime_ns = row.ctime_ns = NowNs();
  row.changed = true;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return MatchDirectLength(ino, row.size);
}

Result<uint64_t> SqliteWorkspace::SeekData(InodeId ino, uint64_t offset, int whence) {
  if (whence != SEEK_DATA && whence != SEEK_HOLE) return Errno(EINVAL, "seek: whence " + std::to_string(whence));
  const bool want_hole = whence == SEEK_HOLE;
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  STRATA_RETURN_IF_ERROR(CheckFile(row, EINVAL));
  if (offset >= row.size) return Errno(ENXIO, "seek at or past the end of the file");
  // Windows start and end on block boundaries (or at the end of the file), so
  // the blocks a window's spans touch are that window's alone.
  uint64_t window = kSeekWindow;
  for (uint64_t pos = offset / kSeekBlock * kSeekBlock; pos < row.size;) {
    const uint64_t end = row.size - pos > window ? pos + window : row.size;
    STRATA_ASSIGN_OR_RETURN(auto spans, Spans(*db_, files_, row, pos, end));
    for (const Extent& hole : BlockHoles(spans, row.size)) {
      if (want_hole) {
        if (hole.end > offset) return std::max(hole.start, offset);
      } else if (hole.start > offset) {
        return offset;  // data from offset up to this hole
      } else if (hole.end > offset && hole.end < end) {
        return hole.end;  // data right after the hole offset is in
      } else if (hole.end > offset) {
        offset = end;  // offset's hole runs on to the end of the window
      }
    }
    // No hole at or after offset in this window: offset is data, if it is here.
    if (!want_hole && offset < end) return offset;
    pos = end;
    window = std::min<uint64_t>(window * 2, uint64_t{1} << 40);
  }
  if (want_hole) return row.size;  // the implicit hole at the end
  return Errno(ENXIO, "no data after the offset");
}

Result<uint64_t> SqliteWorkspace::CopyRange(InodeId in, uint64_t in_offset, InodeId out, uint64_t out_offset,
                                            uint64_t length) {
  if (in_offset + length < in_offset || out_offset + length < out_offset)
    return Errno(EOVERFLOW, "copy range wraps around");
  uint64_t count = 0;
  // The base chunk list out took over from in, when it did (see below).
  std::string shared_chunks;
  {
    MutexLock lock(&mu_);
    STRATA_ASSIGN_OR_RETURN(InodeRow src, Inode(in));
    STRATA_ASSIGN_OR_RETURN(InodeRow dst, Inode(out));
    // The checks and their order are those of copy_file_range(2).
    if (S_ISDIR(src.mode) || S_ISDIR(dst.mode)) return Errno(EISDIR, "copy from or to a directory");
    if (!S_ISREG(src.mode) || !S_ISREG(dst.mode)) return Errno(EINVAL, "copy from or to a special file");
    count = in_offset >= src.size ? 0 : std::min(length, src.size - in_offset);
    if (out_offset >= kMaxFileSize) return Errno(EFBIG, "copy past the largest file size");
    count = std::min(count, kMaxFileSize - out_offset);
    if (in == out && out_offset + count > in_offset && out_offset < in_offset + count)
      return Errno(EINVAL, "copy between overlapping ranges of one file");
    if (count == 0) return uint64_t{0};
    // Copying a base file into an empty one from the start (what cp does):
    // out takes over in's base chunk list, so the base bytes are shared, not
    // copied; the loop below then copies only what in changed.
    // Not into a file the kernel reads directly, which must hold every byte.
    if (in != out && in_offset == 0 && out_offset == 0 && dst.size == 0 && src.base_len > 0 &&
        direct_.count(out) == 0) {
      STRATA_ASSIGN_OR_RETURN(shared_chunks, db_->GetBaseChunks(in));
      Transaction txn(*db_);
      STRATA_RETURN_IF_ERROR(txn.status());
      STRATA_RETURN_IF_ERROR(db_->SetBaseChunks(out, shared_chunks));
      dst.base_len = dst.size = std::min(src.base_len, count);
      dst.mtime_ns = dst.ctime_ns = NowNs();
      dst.changed = true;
      STRATA_RETURN_IF_ERROR(db_->UpdateInode(dst));
      STRATA_RETURN_IF_ERROR(txn.Commit());
    }
  }

  std::string buf;
  // Copies [done, done + *n) of the range; *n is at most kCopyPiece and 0 when
  // in has become shorter than the range meanwhile. Sets *again, having
  // changed nothing, when base bytes it did not read turn out to be needed.
  auto copy_piece = [&](uint64_t done, uint64_t* n, bool* again) -> Status {
    const uint64_t src_pos = in_offset + done, dst_pos = out_offset + done;
    std::vector<Span> spans;
    ReadPlan plan;
    // Base spans that out reads from the same chunks at the same offsets.
    bool base_shared = false;
    {
      MutexLock lock(&mu_);
      STRATA_ASSIGN_OR_RETURN(InodeRow src, Inode(in));
      *n = src_pos >= src.size ? 0 : std::min({count - done, kCopyPiece, src.size - src_pos});
      if (*n == 0) return Status::Ok();
      STRATA_ASSIGN_OR_RETURN(spans, Spans(*db_, files_, src, src_pos, src_pos + *n));
      plan.data_ino = in;
      plan.truncations = files_.truncations();
      plan.size = src.size;
      plan.base_len = src.base_len;
      auto has = [&spans](Source s) {
        return std::any_of(spans.begin(), spans.end(), [s](const Span& x) { return x.source == s; });
      };
      if (has(Source::kBase)) {
        STRATA_ASSIGN_OR_RETURN(std::string chunks, db_->GetBaseChunks(in));
        base_shared = !shared_chunks.empty() && chunks == shared_chunks;
        if (!base_shared) {
          STRATA_ASSIGN_OR_RETURN(plan.base_chunks, DecodeChunkList(chunks));
        }
      }
      if (has(Source::kWritten)) {
        STRATA_ASSIGN_OR_RETURN(plan.extents, db_->Extents(in, src_pos, src_pos + *n));
        STRATA_ASSIGN_OR_RETURN(plan.file, files_.Get(in, false));
      }
    }
    // Read what has to be copied as bytes; holes stay holes.
    const bool base_read_skipped = base_shared;
    buf.resize(*n);
    for (const Span& s : spans) {
      if (s.source == Source::kHole || (s.source == Source::kBase && base_read_skipped)) continue;
      STRATA_RETURN_IF_ERROR(files_.Read(plan, s.start, s.end - s.start, buf.data() + (s.start - src_pos)));
    }

    MutexLock lock(&mu_);
    WaitForCapture(out);
    STRATA_ASSIGN_OR_RETURN(InodeRow dst, Inode(out));
    if (base_shared) {
      STRATA_ASSIGN_OR_RETURN(std::string chunks, db_->GetBaseChunks(out));
      base_shared = chunks == shared_chunks;  // unless out was truncated to 0 and refilled meanwhile
    }
    // What each span becomes in out, decided before anything changes.
    enum class Action { kWrite, kZero, kKeep };
    std::vector<Action> actions;
    for (const Span& s : spans) {
      const uint64_t d_end = dst_pos + (s.end - src_pos);
      if (s.source == Source::kHole) {
        actions.push_back(Action::kZero);
      } else if (s.source != Source::kBase || !base_read_skipped) {
        actions.push_back(Action::kWrite);
      } else if (base_shared && d_end <= dst.base_len) {
        actions.push_back(Action::kKeep);  // out reads these bytes from the same chunks at the same offsets
      } else {
        // out was truncated (or refilled) meanwhile: these bytes are needed after all.
        shared_chunks.clear();
        *again = true;
        return Status::Ok();
      }
    }
    // Bytes first (written or punched into data/<out>), then the transaction.
    uint64_t to_write = 0;
    for (size_t i = 0; i < spans.size(); i++) {
      if (actions[i] == Action::kWrite) to_write += spans[i].end - spans[i].start;
    }
    STRATA_RETURN_IF_ERROR(RoomForData(to_write));
    for (size_t i = 0; i < spans.size(); i++) {
      const uint64_t d = dst_pos + (spans[i].start - src_pos), len = spans[i].end - spans[i].start;
      if (actions[i] == Action::kWrite) {
        STRATA_RETURN_IF_ERROR(files_.Write(out, d, std::string_view(buf).substr(spans[i].start - src_pos, len)));
      } else if (actions[i] == Action::kZero) {
        STRATA_RETURN_IF_ERROR(files_.Punch(out, d, d + len));
      }
    }
    Transaction txn(*db_);
    STRATA_RETURN_IF_ERROR(txn.status());
    for (size_t i = 0; i < spans.size(); i++) {
      const uint64_t d = dst_pos + (spans[i].start - src_pos), len = spans[i].end - spans[i].start;
      if (actions[i] == Action::kWrite) {
        STRATA_RETURN_IF_ERROR(db_->AddExtent(out, d, d + len));
      } else if (actions[i] == Action::kZero) {
        STRATA_RETURN_IF_ERROR(ZeroInDb(*db_, files_, dst, d, d + len));
      }
    }
    dst.size = std::max(dst.size, dst_pos + *n);
    dst.mtime_ns = dst.ctime_ns = NowNs();
    dst.changed = true;
    STRATA_RETURN_IF_ERROR(db_->UpdateInode(dst));
    STRATA_RETURN_IF_ERROR(txn.Commit());
    return MatchDirectLength(out, dst.size);
  };

  uint64_t done = 0;
  while (done < count) {
    uint64_t n = 0;
    bool again = false;
    Status s = copy_piece(done, &n, &again);
    // As a local filesystem: an error after some bytes were copied ends the
    // copy short; the caller's next call gets the error.
    if (!s.ok()) return done > 0 ? Result<uint64_t>(done) : Result<uint64_t>(s);
    if (again) continue;
    if (n == 0) break;
    done += n;
  }
  return done;
}

}  // namespace strata::workspace_internal
