// Direct access to a file's local bytes (workspace.h, OpenDirect): the
// kernel reads and writes the data file itself (FUSE passthrough), so its
// writes never reach Write(). What must stay right without them
// (docs/passthrough.md):
//  - what a commit captures: the size, the mtime and the written ranges. The
//    inode takes the first two from the data file whenever it may have
//    changed (RefreshDirect, from Inode(): every operation sees them), and
//    all of the file counts as written. That costs nothing a range would
//    save: a file eligible for direct access has no base bytes, so its
//    capture chunks every byte anyway.
//  - atime, when it follows the data file (FollowDataFileAtime): the
//    kernel's reads move only the data file's, so a data file handed out
//    gets the inode's atime, and the inode takes the data file's whenever a
//    read moved it (RefreshDirect).
//  - writes the kernel made durable (O_SYNC, O_DSYNC opens): such a writer
//    is noted durably before it gets the descriptor, and a workspace opened
//    after a crash takes those files from their data files (Recover).
//  - the point-in-time cut: a backing file cannot be taken back from an open
//    file, so a cut lets no new direct writer in until its capture ends, and
//    has the transport's hold (DirectWriteHold) keep the open ones' writes
//    off until their files are captured (HoldDirectWriters); it waits only
//    for writers the hold could not take. Opens meanwhile write through
//    Write(), which waits for the capture as it always does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_set>

#include "workspace/rechunk.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

namespace {

// The kernel needs the OS's own descriptor of the data file, which the Env
// (env.h) does not hand out: it is opened here, never following a link, and
// must be the regular file of one link FileData made.
Result<UniqueFd> OpenDescriptor(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Status::IOError("opening " + path + " for the kernel", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
    return Status::IOError("data file " + path + " is not a regular file of its own: refused", EIO);
  return fd;
}

struct Seen {
  uint64_t size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0, atime_ns = 0;
};

Result<Seen> StatOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IOError("stat of a data file", errno);
  auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; };
  return Seen{static_cast<uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim), ns(st.st_atim)};
}

// Gives the data file the atime atime_ns (mtime untouched).
Status SetAtime(int fd, int64_t atime_ns) {
  constexpr int64_t kNs = 1'000'000'000;
  const int64_t sec = atime_ns >= 0 ? atime_ns / kNs : -((-atime_ns + kNs - 1) / kNs);  // floor, for times before 1970
  const timespec times[2] = {{static_cast<time_t>(sec), static_cast<long>(atime_ns - sec * kNs)}, {0, UTIME_OMIT}};
  if (::futimens(fd, times) != 0) return Status::IOError("setting the atime of a data file", errno);
  return Status::Ok();
}

// The inode takes what its data file shows: when `written`, its size and
// mtime, all of it counted as written; when `read`, its atime.
Status TakeFromDataFile(NamespaceDb& db, InodeId ino, const Seen& info, bool written, bool read) {
  STRATA_ASSIGN_OR_RETURN(auto found, db.GetInode(ino));
  if (!found) return Status::Ok();  // deleted: nothing left to record
  InodeRow row = std::move(*found);
  Transaction txn(db);
  STRATA_RETURN_IF_ERROR(txn.status());
  if (written) {
    if (info.size < row.size) STRATA_RETURN_IF_ERROR(db.ClipExtents(ino, info.size));
    if (info.size > 0) STRATA_RETURN_IF_ERROR(db.AddExtent(ino, 0, info.size));
    row.size = info.size;
    row.mtime_ns = info.mtime_ns;
    row.ctime_ns = std::max(row.ctime_ns, info.ctime_ns);
    row.changed = true;
  }
  if (read) row.atime_ns = info.atime_ns;
  STRATA_RETURN_IF_ERROR(db.UpdateInode(row));
  return txn.Commit();
}

constexpr char kSyncedWritersKey[] = "synced_direct_writers";

}  // namespace

Result<int> SqliteWorkspace::OpenDirect(InodeId ino, bool write, bool synced_writes) {
  MutexLock lock(&mu_);
  if (write && (capture_active_ || direct_writes_held_ > 0))
    return Errno(EBUSY, "a commit holds a cut: writes go through the workspace until it is captured");
  // Noted before the kernel may write (a note left by an open that then
  // fails costs a needless look at Recover, and is dropped there).
  auto note_synced = [&]() REQUIRES(mu_) -> Status {
    if (!write || !synced_writes || !synced_writers_.insert(ino).second) return Status::Ok();
    Status s = SaveSyncedWriters(true);
    if (!s.ok()) synced_writers_.erase(ino);
    return s;
  };
  if (auto it = direct_.find(ino); it != direct_.end()) {
    if (write) {
      STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
      if (row.mode & (S_ISUID | S_ISGID)) return Status::Unsupported("set-id bits");
    }
    STRATA_RETURN_IF_ERROR(note_synced());
    (write ? it->second.writers : it->second.readers)++;
    return it->second.fd.get();
  }
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (!S_ISREG(row.mode)) return Status::Unsupported("not a regular file");
  // A write by some callers clears set-id bits, which the daemon does on
  // the writes it serves (fs/ops_file.cc); the kernel would not on these.
  if (write && (row.mode & (S_ISUID | S_ISGID))) return Status::Unsupported("set-id bits");
  if (row.base_len > 0) return Status::Unsupported("some of its bytes are the base commit's");
  STRATA_RETURN_IF_ERROR(files_.Extend(ino, 0));  // creates it if there is none
  STRATA_ASSIGN_OR_RETURN(UniqueFd fd, OpenDescriptor(files_.PathOf(ino)));
  // The data file becomes the file, read to its end by the kernel: bytes no
  // extent names (left by a crash between a write and its transaction) read
  // as zeros in the file, so they are punched out, and the data file is
  // exactly as long as the file.
  STRATA_ASSIGN_OR_RETURN(auto extents, db_->Extents(ino, 0, row.size));
  for (const Extent& gap : Uncovered({Extent{0, row.size}}, extents))
    STRATA_RETURN_IF_ERROR(files_.Punch(ino, gap.start, gap.end));
  STRATA_ASSIGN_OR_RETURN(Seen info, StatOf(fd.get()));
  if (info.size > row.size) {
    // Shortened only once the batch that clipped its extents is durable.
    shrunk_files_.insert(ino);
    STRATA_RETURN_IF_ERROR(CommitPending());
  }
  STRATA_RETURN_IF_ERROR(files_.Extend(ino, row.size));
  STRATA_ASSIGN_OR_RETURN(info, StatOf(fd.get()));
  // Only when they differ: setting it moves the data file's ctime, after
  // which the next read moves its atime under relatime.
  if (direct_atime_follows_ && info.atime_ns != row.atime_ns) {
    STRATA_RETURN_IF_ERROR(SetAtime(fd.get(), row.atime_ns));
    STRATA_ASSIGN_OR_RETURN(info, StatOf(fd.get()));
  }
  STRATA_RETURN_IF_ERROR(note_synced());
  DirectUse& use = direct_[ino];
  use.fd = std::move(fd);
  use.seen_ctime_ns = info.ctime_ns;
  use.seen_atime_ns = info.atime_ns;
  use.seen_size = info.size;
  (write ? use.writers : use.readers)++;
  return use.fd.get();
}

void SqliteWorkspace::CloseDirect(InodeId ino, bool write) {
  {
    MutexLock lock(&mu_);
    auto it = direct_.find(ino);
    if (it == direct_.end()) return;
    // What the kernel wrote (and, following, the atime its reads left)
    // becomes the inode's for good.
    if (write || direct_atime_follows_) {
      if (Status s = RefreshDirect(ino); !s.ok())
        std::fprintf(stderr, "strata: inode %llu: recording what was done to its data file directly: %s\n",
                     static_cast<unsigned long long>(ino), s.ToString().c_str());
    }
    (write ? it->second.writers : it->second.readers)--;
    // Its size is recorded above, in a transaction before any later one
    // (a truncation's, say), so the note may go without a sync.
    if (write && it->second.writers == 0 && synced_writers_.erase(ino) > 0) {
      if (Status s = SaveSyncedWriters(false); !s.ok())
        std::fprintf(stderr, "strata: inode %llu: dropping the note of its synced writer: %s\n",
                     static_cast<unsigned long long>(ino), s.ToString().c_str());
    }
    if (it->second.readers == 0 && it->second.writers == 0) direct_.erase(it);
  }
  if (write) direct_cv_.NotifyAll();
}

void SqliteWorkspace::FollowDataFileAtime() {
  MutexLock lock(&mu_);
  direct_atime_follows_ = true;
}

Status SqliteWorkspace::RefreshDirect(InodeId ino) {
  auto it = direct_.find(ino);
  if (it == direct_.end() || (it->second.writers == 0 && !direct_atime_follows_)) return Status::Ok();
  DirectUse& use = it->second;
  STRATA_ASSIGN_OR_RETURN(Seen info, StatOf(use.fd.get()));
  // Any write moves ctime (to a fine-grained time once it has been looked at).
  const bool written = use.writers > 0 && (info.ctime_ns != use.seen_ctime_ns || info.size != use.seen_size);
  // A read moved atime: the inode's atime, which moves no ctime and is no change to commit.
  const bool read = direct_atime_follows_ && info.atime_ns != use.seen_atime_ns;
  if (!written && !read) return Status::Ok();
  STRATA_RETURN_IF_ERROR(TakeFromDataFile(*db_, ino, info, written, read));
  if (written) {
    use.seen_ctime_ns = info.ctime_ns;
    use.seen_size = info.size;
  }
  use.seen_atime_ns = info.atime_ns;
  return Status::Ok();
}

Status SqliteWorkspace::RefreshDirectWriters() {
  for (const auto& [ino, use] : direct_)
    if (use.writers > 0) STRATA_RETURN_IF_ERROR(RefreshDirect(ino));
  return Status::Ok();
}

Status SqliteWorkspace::SaveSyncedWriters(bool durable) {
  std::string list;
  for (InodeId ino : synced_writers_) list += (list.empty() ? "" : " ") + std::to_string(ino);
  {
    Transaction txn(*db_);
    STRATA_RETURN_IF_ERROR(txn.status());
    STRATA_RETURN_IF_ERROR(db_->SetMeta(kSyncedWritersKey, list));
    STRATA_RETURN_IF_ERROR(txn.Commit());
  }
  if (!durable) return Status::Ok();
  // The transaction is part of the open batch: that is committed first.
  STRATA_RETURN_IF_ERROR(CommitPending());
  return SyncWal();
}

Status SqliteWorkspace::RecoverSyncedWriters() {
  STRATA_ASSIGN_OR_RETURN(auto list, db_->GetMeta(kSyncedWritersKey));
  if (!list || list->empty()) return Status::Ok();
  std::istringstream in(*list);
  for (InodeId ino; in >> ino;) {
    // The data file is the file while a direct writer has it (its length
    // kept the file's, MatchDirectLength), so it holds every synced write.
    auto fd = OpenDescriptor(files_.PathOf(ino));
    if (!fd.ok()) {
      // None: the file was deleted. Anything else is no file of ours to take.
      if (fd.status().errno_value() != ENOENT)
        std::fprintf(stderr, "strata: inode %llu: its synced writes are not taken: %s\n",
                     static_cast<unsigned long long>(ino), fd.status().ToString().c_str());
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(Seen info, StatOf(fd->get()));
    STRATA_RETURN_IF_ERROR(TakeFromDataFile(*db_, ino, info, true, false));
  }
  return SaveSyncedWriters(true);
}

Status SqliteWorkspace::MatchDirectLength(InodeId ino, uint64_t size) {
  auto it = direct_.find(ino);
  if (it == direct_.end()) return Status::Ok();
  if (shrunk_files_.count(ino)) STRATA_RETURN_IF_ERROR(CommitPending());  // shortens it, once durable
  STRATA_RETURN_IF_ERROR(files_.Extend(ino, size));
  // Space reserved past the end (fallocate with KEEP_SIZE) would read as
  // zeros past the end through the kernel: it is given back.
  STRATA_ASSIGN_OR_RETURN(Seen info, StatOf(it->second.fd.get()));
  if (info.size > size && ::ftruncate(it->second.fd.get(), static_cast<off_t>(size)) != 0)
    return Status::IOError("truncating " + files_.PathOf(ino), errno);
  // The workspace's own change, not one of the kernel's to take over.
  STRATA_ASSIGN_OR_RETURN(info, StatOf(it->second.fd.get()));
  it->second.seen_ctime_ns = info.ctime_ns;
  it->second.seen_size = info.size;
  return Status::Ok();
}

void SqliteWorkspace::SetWriteHold(DirectWriteHold* hold) {
  MutexLock lock(&mu_);
  write_hold_ = hold;
}

Status SqliteWorkspace::HoldDirectWriters(HeldDirectWrites* held) {
  direct_writes_held_++;  // no new direct writer from here
  // One name of each file with direct writers. A file with none (unlinked,
  // still open) is in no directory of the commit: nothing to wait for.
  std::vector<DirectWriteHold::File> named;
  std::map<InodeId, std::string> dir_paths;
  Status s = Status::Ok();
  for (const auto& [ino, use] : direct_) {
    if (use.writers == 0) continue;
    auto names = db_->NamesOf(ino);
    if (!names.ok()) s = names.status();
    if (!s.ok()) break;
    if (names->empty()) continue;
    auto dir = PathOfDirectory(names->front().first, dir_paths);
    if (!dir.ok()) s = dir.status();
    if (!s.ok()) break;
    const std::string& name = names->front().second;
    named.push_back({ino, dir->empty() ? name : *dir + "/" + name});
  }
  std::unordered_set<InodeId> holding;
  if (DirectWriteHold* hold = write_hold_; s.ok() && hold != nullptr && !named.empty()) {
    // The kernel's requests on these files reach the workspace while the
    // hold is taken: mu_ is let go meanwhile.
    mu_.Unlock();
    std::vector<InodeId> got = hold->Hold(named);
    mu_.Lock();
    if (!got.empty()) held->Set(hold);
    holding.insert(got.begin(), got.end());
  }
  auto waiting_for = [&]() REQUIRES(mu_) {
    uint64_t n = 0;
    for (const DirectWriteHold::File& f : named)
      if (!holding.count(f.ino))
        if (auto it = direct_.find(f.ino); it != direct_.end() && it->second.writers > 0) n++;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + kDirectWriterWait;
  while (s.ok() && waiting_for() > 0 && direct_cv_.WaitUntil(&mu_, deadline)) {
  }
  direct_writes_held_--;
  STRATA_RETURN_IF_ERROR(s);
  if (const uint64_t left = waiting_for(); left > 0)
    return Errno(EBUSY, std::to_string(left) + " file(s) stayed open for writing through FUSE passthrough for " +
                            std::to_string(kDirectWriterWait.count()) +
                            " s and could not be held for the cut; it waits until they are closed (or mount with "
                            "--passthrough off)");
  // What the held writers wrote up to the hold is the files' from here.
  for (InodeId ino : holding) STRATA_RETURN_IF_ERROR(RefreshDirect(ino));
  return Status::Ok();
}

}  // namespace strata::workspace_internal
