// Directory operations: listing (plain and plus), fsyncdir, statfs.
//
// Offsets: 1 is after ".", 2 after "..", and 2 + c after the workspace entry
// whose offset is c. Workspace offsets stay valid while the directory changes,
// so a listing interrupted by creates and removes neither repeats nor skips
// entries that were there throughout.
#include <sys/statvfs.h>

#include <vector>

#include "fs/fs_context.h"
#include "util/mutex.h"

namespace strata::fs {

namespace {
constexpr off_t kFirstEntryOffset = 2;

// One per open directory (FileInfo::fh): where the current listing ends.
struct DirHandle {
  explicit DirHandle(uint64_t end) : end_offset(end) {}
  Mutex mu;
  uint64_t end_offset GUARDED_BY(mu) = 0;
};

DirHandle* Handle(const FileInfo& fi) { return reinterpret_cast<DirHandle*>(fi.fh); }

// Lists into a reply buffer of `size` bytes. With plus, each entry carries its
// attributes and takes a lookup reference, as READDIRPLUS requires. A listing
// shows the entries that existed when it started (at offset 0: opendir or
// rewinddir); later ones are left out, so a program that creates files while
// it lists a directory still reaches the end.
void ReplyDirectory(Call& call, Ino ino, size_t size, off_t off, const FileInfo& fi, bool plus) {
  Context& ctx = call.ctx();
  auto state = ctx.ws->GetDirectoryState(ino);
  if (!state.ok()) return (void)ReplyErr(call, ToErrno(state.status()));
  uint64_t end;
  {
    DirHandle* h = Handle(fi);
    MutexLock lock(&h->mu);
    if (off == 0) h->end_offset = state->end_offset;
    end = h->end_offset;
  }
  DirentSink& sink = call.Dirents(size);
  // False when full: the kernel asks again from `off`.
  auto add = [&](const char* name, const struct stat& st, off_t next, const EntryOut& e) {
    return plus ? sink.AddPlus(name, e, next) : sink.Add(name, st, next);
  };
  // "." and "..": plain entries with their inode numbers (readdir(3) drops
  // entries whose inode is 0) but without attributes.
  for (off_t dot = off; dot < kFirstEntryOffset; dot++) {
    struct stat st {};
    st.st_mode = S_IFDIR;
    st.st_ino = dot == 0 ? ino : state->parent;
    EntryOut e;  // ino 0: the kernel links no dentry and takes no reference
    e.attr = st;
    if (!add(dot == 0 ? "." : "..", st, dot + 1, e)) return (void)call.ReplyDirents();
  }
  uint64_t after = off <= kFirstEntryOffset ? 0 : static_cast<uint64_t>(off - kFirstEntryOffset);
  const size_t used_by_dots = sink.used();
  // With plus, a reset or rebase that replaces the content between reading
  // the entries and referencing their inodes makes the entries stale (their
  // inodes perhaps deleted): the references taken are given back and the
  // entries read again, from the same offset, which names in both trees keep.
  for (;;) {
    const uint64_t swaps = ctx.ws->ContentSwaps();
    // A rough count of what fits; the loop stops at the real limit.
    auto entries = ctx.ws->ReadDirectory(ino, after, size / 32 + 1);
    if (!entries.ok()) return (void)ReplyErr(call, ToErrno(entries.status()));
    std::vector<InodeId> referenced;
    bool swapped = false;
    for (const DirEntry& d : *entries) {
      if (d.offset > end) break;  // created after the listing started
      struct stat st {};
      st.st_ino = d.ino;
      st.st_mode = d.type;
      EntryOut e;
      if (plus) {
        auto a = ctx.ws->GetAttr(d.ino);
        if (!a.ok()) continue;  // removed meanwhile
        e.ino = d.ino;
        e.timeout = ctx.options.cache_timeout;
        FillStat(*a, &e.attr);
        if (!ctx.ws->RefIfCurrent(d.ino, swaps)) {
          swapped = true;
          break;
        }
      }
      if (!add(d.name.c_str(), st, kFirstEntryOffset + static_cast<off_t>(d.offset), e)) {
        if (plus) ctx.ws->Unref(d.ino, 1);
        break;
      }
      if (plus) referenced.push_back(d.ino);
    }
    if (!swapped) break;
    for (InodeId r : referenced) ctx.ws->Unref(r, 1);
    sink.Rewind(used_by_dots);
  }
  call.ReplyDirents();
}
}  // namespace

void OpOpendir(Call& call, Ino ino) {
  OpScope scope(call, Op::kOpendir);
  auto a = call.ctx().ws->GetAttr(ino);
  if (!a.ok()) return (void)ReplyErr(call, ToErrno(a.status()));
  if (!S_ISDIR(a->mode)) return (void)ReplyErr(call, ENOTDIR);
  auto state = call.ctx().ws->GetDirectoryState(ino);
  if (!state.ok()) return (void)ReplyErr(call, ToErrno(state.status()));
  auto* h = new DirHandle(state->end_offset);  // a listing may also start by seeking
  OpenOut out;
  out.fh = reinterpret_cast<uint64_t>(h);
  // The kernel keeps the listing and serves the next opens from it: a warm
  // `find` or `git status` then sends no READDIR at all. It drops the listing
  // itself when a request of its own changes the directory (create, unlink,
  // rename, link: the directory's version moves) and at a changed mtime;
  // what the daemon changes behind it (reset, rebase) is invalidated through
  // FuseServer::Invalidate. Views that follow the store are listed afresh.
  if (!state->changes_unseen) out.keep_cache = out.cache_dir = true;
  if (call.ReplyOpen(out) != 0) delete h;  // no RELEASEDIR comes for an open the kernel never saw
}

void OpReaddir(Call& call, Ino ino, size_t size, off_t off, const FileInfo& fi) {
  OpScope scope(call, Op::kReaddir);
  ReplyDirectory(call, ino, size, off, fi, /*plus=*/false);
}

void OpReaddirplus(Call& call, Ino ino, size_t size, off_t off, const FileInfo& fi) {
  OpScope scope(call, Op::kReaddirplus);
  ReplyDirectory(call, ino, size, off, fi, /*plus=*/true);
}

void OpReleasedir(Call& call, const FileInfo& fi) {
  OpScope scope(call, Op::kReleasedir);
  delete Handle(fi);
  ReplyErr(call, 0);
}

void OpFsyncdir(Call& call, Ino ino) {
  OpScope scope(call, Op::kFsyncdir);
  // Namespace changes are in the workspace database; Sync makes them durable.
  ReplyErr(call, ToErrno(call.ctx().ws->Sync(ino)));
}

void OpStatfs(Call& call) {
  OpScope scope(call, Op::kStatfs);
  // The space a workspace can use is the space left where its store lives.
  struct statvfs st {};
  if (statvfs(call.ctx().options.state_dir.c_str(), &st) != 0) return (void)ReplyErr(call, errno);
  st.f_namemax = 255;
  call.ReplyStatfs(st);
}

}  // namespace strata::fs
