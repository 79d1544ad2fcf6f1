#include "workspace/file_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/coding.h"

namespace strata::workspace_internal {
namespace {

// Beyond this many open data files, the table drops one: descriptors are a
// limited resource and reopening a file costs one open(2).
constexpr size_t kMaxOpenFiles = 256;

// Errors a user causes by filling the disk, passed on as they are; every other
// failure of our own files is EIO.
bool IsNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

// A data file is a regular file with one name: anything else (a device, a
// fifo, a hard link to a file elsewhere) was put there by someone else.
bool IsOwnRegularFile(const FileInfo& info) { return S_ISREG(info.mode) && info.links == 1; }

}  // namespace

std::unique_ptr<Directory> FileData::OpenDirectory(Env* env, const std::string& dir, Status* status) {
  auto opened = env->OpenDirectory(dir);
  if (opened.ok()) return std::move(opened).value();
  const int err = opened.status().IsNotFound() ? ENOENT : opened.status().errno_value();
  *status = Status::IOError("opening the data directory " + dir + " (" + std::strerror(err) + ")" +
                                (err == ELOOP || err == ENOTDIR ? ": it must be a directory, not a link" : ""),
                            EIO);
  return nullptr;
}

Result<std::vector<InodeId>> FileData::ListFiles() {
  STRATA_RETURN_IF_ERROR(dir_status_);
  std::vector<InodeId> out;
  auto names = data_dir_->List();
  if (!names.ok()) return Status::IOError("listing " + dir_, EIO);
  for (const std::string& n : *names) {
    // Only names a data file gets (decimal digits); others are not ours.
    if (n.empty() || n.size() > 19 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    out.push_back(std::strtoull(n.c_str(), nullptr, 10));
  }
  return out;
}

Status FileData::CheckLengthAt(Directory* data_dir, const std::string& dir, InodeId ino, uint64_t length) {
  const std::string path = dir + "/" + std::to_string(ino);
  if (data_dir == nullptr) return Status::IOError("the data directory " + dir + " is not open", EIO);
  auto info = data_dir->Stat(std::to_string(ino));
  if (!info.ok()) {
    if (info.status().IsNotFound())
      return Status::Corruption("data file " + path + " is missing; its extents need " +
                                std::to_string(length) + " bytes");
    return Status::IOError("stat " + path, EIO);
  }
  if (!IsOwnRegularFile(*info))
    return Status::Corruption("data file " + path + " is not a regular file of its own (a link or a special file)");
  if (info->size < length)
    return Status::Corruption("data file " + path + " holds " + std::to_string(info->size) +
                              " bytes; its extents need " + std::to_string(length));
  return Status::Ok();
}


std::string EncodeChunkList(const std::vector<ChunkRef>& chunks) {
  std::string out;
  PutVarint(&out, chunks.size());
  for (const ChunkRef& c : chunks) {
    out.append(reinterpret_cast<const char*>(c.id.bytes.data()), Hash::kSize);
    PutVarint(&out, c.length);
  }
  return out;
}

Result<std::vector<ChunkRef>> DecodeChunkList(std::string_view data) {
  Decoder d(data);
  uint64_t n;
  if (!d.GetVarint(&n) || n > data.size()) return Status::IOError("workspace: bad base chunk list", EIO);
  std::vector<ChunkRef> out(n);
  for (ChunkRef& c : out) {
    std::string_view id;
    if (!d.GetBytes(Hash::kSize, &id) || !d.GetVarint(&c.length))
      return Status::IOError("workspace: bad base chunk list", EIO);
    c.id = Hash::FromBytes(id.data());
  }
  if (!d.empty()) return Status::IOError("workspace: bad base chunk list", EIO);
  return out;
}

uint64_t FileData::AllocatedBytes(InodeId ino) const {
  if (data_dir_ == nullptr) return 0;
  auto info = data_dir_->Stat(std::to_string(ino));
  return info.ok() ? info->allocated : 0;
}

Result<std::shared_ptr<DataFile>> FileData::Get(InodeId ino, bool create) {
  MutexLock lock(&mu_);
  auto it = open_.find(ino);
  if (it != open_.end()) return it->second;
  STRATA_RETURN_IF_ERROR(dir_status_);
  const std::string path = PathOf(ino), name = std::to_string(ino);
  released_.Claim(name);  // a file released but still under this name is not this inode's any more
  // Refused before it is opened: opening a device or a fifo may do things.
  if (auto info = data_dir_->Stat(name); info.ok() && !IsOwnRegularFile(*info))
    return Status::IOError("data file " + path + " is not a regular file of its own (a link or a special file): refused", EIO);
  auto opened = data_dir_->OpenFile(name, create);
  if (!opened.ok()) {
    if (opened.status().IsNotFound() && !create) return std::shared_ptr<DataFile>();
    const int err = opened.status().IsNotFound() ? ENOENT : opened.status().errno_value();
    if (err == ELOOP || err == EXDEV)
      return Status::IOError("data file " + path + " is a symbolic link: refused", EIO);
    // Creating the file on a full disk (no room for its inode or directory
    // entry) is the user's to see as such, as a write there would be.
    return Status::IOError("opening " + path + " (" + std::strerror(err) + ")", IsNoSpace(err) ? err : EIO);
  }
  auto info = (*opened)->Stat();
  if (!info.ok() || !IsOwnRegularFile(*info))  // swapped in since the check
    return Status::IOError("data file " + path + " is not a regular file of its own (a link or a special file): refused", EIO);
  if (create) files_created_.fetch_add(1);  // maybe created: data/ needs a sync before it is durable
  if (open_.size() >= kMaxOpenFiles) open_.erase(open_.begin());  // users keep theirs alive
  auto file = std::make_shared<DataFile>(std::move(opened).value());
  open_[ino] = file;
  return file;
}

Status FileData::Write(InodeId ino, uint64_t offset, std::string_view data) {
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, true));
  bool waited_for_space = false;
  for (;;) {
    // Written again from the start after a wait: rewriting bytes already there is harmless.
    Status s = file->file().WriteAt(offset, data);
    if (s.ok()) return s;
    const int err = s.errno_value();
    if (IsNoSpace(err) && WaitForReleasedSpace(&waited_for_space)) continue;
    // A full disk is the user's to see as such; anything else is our I/O error.
    return Status::IOError("writing " + PathOf(ino), IsNoSpace(err) ? err : EIO);
  }
}

Status FileData::Extend(InodeId ino, uint64_t size) {
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, true));
  auto info = file->file().Stat();
  if (!info.ok()) return Status::IOError("stat " + PathOf(ino), EIO);
  if (info->size >= size) return Status::Ok();
  if (Status s = file->file().Truncate(size); !s.ok()) {
    const int err = s.errno_value();
    return Status::IOError("extending " + PathOf(ino), IsNoSpace(err) || err == EFBIG ? err : EIO);
  }
  return Status::Ok();
}

Status FileData::Truncate(InodeId ino, uint64_t size) {
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, false));
  if (!file) return Status::Ok();
  auto info = file->file().Stat();
  if (!info.ok()) return Status::IOError("stat " + PathOf(ino), EIO);
  if (info->size <= size) return Status::Ok();
  truncations_.fetch_add(1);  // before: a read planned earlier may then find the file short
  if (!file->file().Truncate(size).ok()) return Status::IOError("truncating " + PathOf(ino), EIO);
  return Status::Ok();
}

bool FileData::WaitForReleasedSpace(bool* waited) {
  if (*waited) return false;
  *waited = true;
  return released_.Drain();
}

void FileData::Remove(InodeId ino) {
  {
    MutexLock lock(&mu_);
    open_.erase(ino);
  }
  if (!dir_status_.ok()) return;
  released_.Release(std::to_string(ino));  // a missing file is the expected case for unchanged inodes
}

void FileData::RemoveLater(InodeId ino) {
  {
    MutexLock lock(&mu_);
    open_.erase(ino);
  }
  if (!dir_status_.ok()) return;
  released_.ReleaseLater(std::to_string(ino));
}

Status FileData::Sync(InodeId ino) {
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, false));
  if (file) {
    if (Status s = file->file().Sync(); !s.ok())
      return Status::IOError("syncing " + PathOf(ino), IsNoSpace(s.errno_value()) ? s.errno_value() : EIO);
  }
  // Every file created before this call must have its name durable when it
  // returns, also if another thread's fsync of data/ is in progress: that one
  // may have started before the creation. So a call waits for a sync that
  // started after the creations it must cover, or runs one itself.
  const uint64_t created = files_created_.load();
  if (created_synced_.load() >= created) return Status::Ok();
  MutexLock lock(&dir_sync_mu_);
  if (created_synced_.load() >= created) return Status::Ok();  // synced while this call waited
  const uint64_t covered = files_created_.load();
  STRATA_RETURN_IF_ERROR(dir_status_);
  if (!data_dir_->Sync().ok()) return Status::IOError("syncing " + dir_, EIO);
  created_synced_ = covered;
  return Status::Ok();
}

Status FileData::Punch(InodeId ino, uint64_t start, uint64_t end) {
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, false));
  if (!file || start >= end) return Status::Ok();
  Status punched = file->file().PunchHole(start, end - start);
  if (punched.ok()) return punched;
  if (punched.errno_value() != EOPNOTSUPP) {
    const int err = punched.errno_value();
    return Status::IOError("punching " + PathOf(ino), IsNoSpace(err) ? err : EIO);
  }
  // No hole punching here: write zeros over the part the file has.
  auto info = file->file().Stat();
  if (!info.ok()) return Status::IOError("stat " + PathOf(ino), EIO);
  end = std::min(end, info->size);
  const std::string zeros(std::min<uint64_t>(end > start ? end - start : 0, 1 << 20), '\0');
  for (uint64_t pos = start; pos < end; pos += zeros.size()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), end - pos));
    STRATA_RETURN_IF_ERROR(Write(ino, pos, std::string_view(zeros.data(), n)));
  }
  return Status::Ok();
}

Status FileData::Reserve(InodeId ino, uint64_t start, uint64_t end) {
  if (start >= end) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, true));
  bool waited_for_space = false;
  int err;
  do {
    Status s = file->file().Allocate(start, end - start);
    if (s.ok()) return s;
    err = s.errno_value();
  } while (IsNoSpace(err) && WaitForReleasedSpace(&waited_for_space));
  if (err == EOPNOTSUPP) return Status::Ok();  // best effort: writes will allocate as they come
  return Status::IOError("reserving space in " + PathOf(ino),
                         err == ENOSPC || err == EDQUOT || err == EFBIG ? err : EIO);
}

Result<std::vector<Extent>> FileData::DataRanges(InodeId ino, uint64_t start, uint64_t end) {
  std::vector<Extent> out;
  STRATA_ASSIGN_OR_RETURN(auto file, Get(ino, false));
  if (!file) return out;
  uint64_t pos = start;
  while (pos < end) {
    auto data = file->file().NextData(pos);
    if (!data.ok()) {
      const int err = data.status().errno_value();
      if (err == EINVAL || err == EOPNOTSUPP) {  // cannot tell: all data
        out.push_back(Extent{pos, end});
        break;
      }
      return Status::IOError("seeking in " + PathOf(ino), EIO);
    }
    if (!*data) break;  // only a hole (or the end of the file) follows
    if (**data >= end) break;
    auto hole = file->file().NextHole(**data);
    uint64_t stop = !hole.ok() ? end : std::min(end, *hole);
    out.push_back(Extent{**data, stop});
    pos = stop;
  }
  return out;
}

Status FileData::Read(const ReadPlan& plan, uint64_t offset, size_t n, char* out) {
  ReadTarget target(out);
  return Read(plan, offset, n, &target);
}

Status FileData::Read(const ReadPlan& plan, uint64_t offset, size_t n, ReadTarget* out) {
  // Before this read's own fetches, so the two overlap.
  // Internal reads (ino 0: a commit, a copy) go through files in order and use whole chunks.
  const bool sequential = plan.ino == 0 || (offset < plan.base_len && ReadAhead(plan, offset, n));
  uint64_t pos = offset;
  const uint64_t end = offset + n;
  // The first extent that may still matter.
  size_t next = std::upper_bound(plan.extents.begin(), plan.extents.end(), pos,
                                 [](uint64_t v, const Extent& e) { return v < e.end; }) -
                plan.extents.begin();
  while (pos < end) {
    while (next < plan.extents.size() && plan.extents[next].end <= pos) next++;
    if (next < plan.extents.size() && plan.extents[next].start <= pos) {
      // 1. Written bytes.
      uint64_t stop = std::min(end, plan.extents[next].end);
      size_t want = stop - pos, got = 0;
      char* dst = out->Space(want);
      if (!plan.file)
        return Status::Corruption("data file " + PathOf(plan.data_ino) + " is missing; its extents need at least " +
                                  std::to_string(plan.extents.back().end) + " bytes");
      if (!plan.file->file().ReadAt(pos, want, dst, &got).ok())
        return Status::IOError("reading data file " + PathOf(plan.data_ino), EIO);
      if (got < want) {
        // Shorter than its extent: damage, unless the plan is older than a
        // truncation (a read racing a truncate: zeros, as before it).
        if (truncations() == plan.truncations)
          return Status::Corruption("data file " + PathOf(plan.data_ino) + " ends at " + std::to_string(pos + got) +
                                    "; its extents need at least " + std::to_string(plan.extents.back().end) + " bytes");
        std::memset(dst + got, 0, want - got);
      }
      pos = stop;
      continue;
    }
    uint64_t gap_end = next < plan.extents.size() ? std::min(end, plan.extents[next].start) : end;
    if (pos < plan.base_len) {
      // 2. Unchanged bytes of the base file.
      uint64_t stop = std::min(gap_end, plan.base_len);
      STRATA_RETURN_IF_ERROR(ReadBase(plan, pos, stop - pos, sequential, out));
      pos = stop;
      continue;
    }
    // 3. Never written, not from the base.
    std::memset(out->Space(gap_end - pos), 0, gap_end - pos);
    pos = gap_end;
  }
  return Status::Ok();
}

bool FileData::ReadAhead(const ReadPlan& plan, uint64_t offset, size_t n) {
  SequentialDetector::Range ahead = detector_.OnRead(plan.ino, offset, n);
  const bool sequential = !ahead.empty();
  ahead.end = std::min(ahead.end, plan.base_len);
  if (ahead.empty()) return sequential;
  const ChunkCache::Executor run = [this](std::function<void()> task) { read_ahead_pool_.Submit(std::move(task)); };
  uint64_t chunk_start = plan.base_start;
  for (const ChunkRef& c : plan.base_chunks) {
    const uint64_t chunk_end = chunk_start + c.length;
    if (chunk_start >= ahead.end) break;
    // Chunks this read needs are the read's own demands.
    if (chunk_end > ahead.start && chunk_start >= offset + n) cache_.Prefetch(store_, c.id, c.length, run);
    chunk_start = chunk_end;
  }
  return true;
}

BaseChunkList::BaseChunkList(std::vector<ChunkRef> list, const std::vector<ChunkRef>& empty)
    : chunks(std::move(list)) {
  ends.reserve(chunks.size());
  uint64_t e = 0;
  for (const ChunkRef& c : chunks) {
    const uint64_t start = e;
    ends.push_back(e += c.length);
    if (std::find(empty.begin(), empty.end(), c) == empty.end()) continue;
    if (!empty_runs.empty() && empty_runs.back().end == start) {
      empty_runs.back().end = e;
    } else {
      empty_runs.push_back(Extent{start, e});
    }
  }
}

uint64_t BaseChunkList::EmptyBytesIn(uint64_t start, uint64_t end) const {
  uint64_t n = 0;
  // The first run ending after start, then every run starting before end.
  auto it = std::upper_bound(empty_runs.begin(), empty_runs.end(), start,
                             [](uint64_t v, const Extent& r) { return v < r.end; });
  for (; it != empty_runs.end() && it->start < end; ++it) n += std::min(it->end, end) - std::max(it->start, start);
  return n;
}

void BaseChunkList::SliceInto(uint64_t from, uint64_t to, ReadPlan* plan) const {
  const size_t first = std::upper_bound(ends.begin(), ends.end(), from) - ends.begin();
  size_t last = first;
  while (last < chunks.size() && (last == first || ends[last - 1] < to)) last++;
  plan->base_chunks.assign(chunks.begin() + first, chunks.begin() + last);
  plan->base_start = first == 0 ? 0 : ends[first - 1];
  plan->base_ends.clear();
}

Status FileData::ReadBase(const ReadPlan& plan, uint64_t offset, size_t n, bool sequential, ReadTarget* out) {
  if (plan.base_ends.size() != plan.base_chunks.size()) {
    plan.base_ends.clear();
    uint64_t e = plan.base_start;
    for (const ChunkRef& c : plan.base_chunks) plan.base_ends.push_back(e += c.length);
  }
  if (offset < plan.base_start) return Status::IOError("a read before the base chunks it was given", EIO);
  const size_t first = std::upper_bound(plan.base_ends.begin(), plan.base_ends.end(), offset) - plan.base_ends.begin();
  uint64_t chunk_start = first == 0 ? plan.base_start : plan.base_ends[first - 1];
  const uint64_t end = offset + n;
  for (size_t i = first; i < plan.base_chunks.size(); i++) {
    const ChunkRef& c = plan.base_chunks[i];
    uint64_t chunk_end = chunk_start + c.length;
    if (chunk_end > offset && chunk_start < end) {
      const uint64_t from = std::max(offset, chunk_start), to = std::min(end, chunk_end);
      if (!sequential) {
        // A read out of sequence decodes only the frames that hold its bytes.
        STRATA_ASSIGN_OR_RETURN(auto part, cache_.GetPart(store_, c.id, from - chunk_start, to - from));
        if (part.offset > from - chunk_start || part.offset + part.data->size() < to - chunk_start ||
            part.offset + part.data->size() > c.length)
          return Status::IOError("chunk " + c.id.ToHex() + " has another length than its tree says", EIO);
        out->Share(part.data, part.data->view().substr(from - chunk_start - part.offset, to - from));
      } else {
        STRATA_ASSIGN_OR_RETURN(auto bytes, cache_.Get(store_, c.id));
        if (bytes->size() != c.length)
          return Status::IOError("chunk " + c.id.ToHex() + " has another length than its tree says", EIO);
        out->Share(bytes, bytes->view().substr(from - chunk_start, to - from));
      }
    }
    chunk_start = chunk_end;
    if (chunk_start >= end) return Status::Ok();
  }
  return Status::IOError("base file is shorter than its size", EIO);
}

}  // namespace strata::workspace_internal
