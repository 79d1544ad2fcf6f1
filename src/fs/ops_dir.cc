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

// One per open directory (fi->fh): where the current listing ends.
struct DirHandle {
  explicit DirHandle(uint64_t end) : end_offset(end) {}
  Mutex mu;
  uint64_t end_offset GUARDED_BY(mu) = 0;
};

DirHandle* Handle(fuse_file_info* fi) { return reinterpret_cast<DirHandle*>(fi->fh); }

// Lists into a reply buffer of `size` bytes. With plus, each entry carries its
// attributes and takes a lookup reference, as READDIRPLUS requires. A listing
// shows the entries that existed when it started (at offset 0: opendir or
// rewinddir); later ones are left out, so a program that creates files while
// it lists a directory still reaches the end.
void ReplyDirectory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi, bool plus) {
  Context& ctx = Ctx(req);
  auto state = ctx.ws->GetDirectoryState(ino);
  if (!state.ok()) return (void)ReplyErr(req, ToErrno(state.status()));
  uint64_t end;
  {
    DirHandle* h = Handle(fi);
    MutexLock lock(&h->mu);
    if (off == 0) h->end_offset = state->end_offset;
    end = h->end_offset;
  }
  std::vector<char> buf(size);
  size_t used = 0;
  auto add = [&](const char* name, const struct stat& st, off_t next, const fuse_entry_param* e) {
    size_t n = plus ? fuse_add_direntry_plus(req, buf.data() + used, size - used, name, e, next)
                    : fuse_add_direntry(req, buf.data() + used, size - used, name, &st, next);
    if (n > size - used) return false;  // full: the kernel asks again from `off`
    used += n;
    return true;
  };
  // "." and "..": plain entries with their inode numbers (readdir(3) drops
  // entries whose inode is 0) but without attributes.
  for (off_t dot = off; dot < kFirstEntryOffset; dot++) {
    struct stat st {};
    st.st_mode = S_IFDIR;
    st.st_ino = dot == 0 ? ino : state->parent;
    fuse_entry_param e{};  // ino 0: the kernel links no dentry and takes no reference
    e.attr = st;
    if (!add(dot == 0 ? "." : "..", st, dot + 1, &e)) return (void)fuse_reply_buf(req, buf.data(), used);
  }
  uint64_t after = off <= kFirstEntryOffset ? 0 : static_cast<uint64_t>(off - kFirstEntryOffset);
  const size_t used_by_dots = used;
  // With plus, a reset or rebase that replaces the content between reading
  // the entries and referencing their inodes makes the entries stale (their
  // inodes perhaps deleted): the references taken are given back and the
  // entries read again, from the same offset, which names in both trees keep.
  for (;;) {
    const uint64_t swaps = ctx.ws->ContentSwaps();
    // A rough count of what fits; the loop stops at the real limit.
    auto entries = ctx.ws->ReadDirectory(ino, after, size / 32 + 1);
    if (!entries.ok()) return (void)ReplyErr(req, ToErrno(entries.status()));
    std::vector<InodeId> referenced;
    bool swapped = false;
    for (const DirEntry& d : *entries) {
      if (d.offset > end) break;  // created after the listing started
      struct stat st {};
      st.st_ino = d.ino;
      st.st_mode = d.type;
      fuse_entry_param e{};
      if (plus) {
        auto a = ctx.ws->GetAttr(d.ino);
        if (!a.ok()) continue;  // removed meanwhile
        e.ino = d.ino;
        e.attr_timeout = ctx.options.cache_timeout;
        e.entry_timeout = ctx.options.cache_timeout;
        FillStat(*a, &e.attr);
        if (!ctx.ws->RefIfCurrent(d.ino, swaps)) {
          swapped = true;
          break;
        }
      }
      if (!add(d.name.c_str(), st, kFirstEntryOffset + static_cast<off_t>(d.offset), &e)) {
        if (plus) ctx.ws->Unref(d.ino, 1);
        break;
      }
      if (plus) referenced.push_back(d.ino);
    }
    if (!swapped) break;
    for (InodeId r : referenced) ctx.ws->Unref(r, 1);
    used = used_by_dots;
  }
  fuse_reply_buf(req, buf.data(), used);
}
}  // namespace

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpScope scope(req, Op::kOpendir);
  auto a = Ctx(req).ws->GetAttr(ino);
  if (!a.ok()) return (void)ReplyErr(req, ToErrno(a.status()));
  if (!S_ISDIR(a->mode)) return (void)ReplyErr(req, ENOTDIR);
  auto state = Ctx(req).ws->GetDirectoryState(ino);
  if (!state.ok()) return (void)ReplyErr(req, ToErrno(state.status()));
  auto* h = new DirHandle(state->end_offset);  // a listing may also start by seeking
  fi->fh = reinterpret_cast<uint64_t>(h);
  fuse_reply_open(req, fi);
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  OpScope scope(req, Op::kReaddir);
  ReplyDirectory(req, ino, size, off, fi, /*plus=*/false);
}

void OpReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  OpScope scope(req, Op::kReaddirplus);
  ReplyDirectory(req, ino, size, off, fi, /*plus=*/true);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpScope scope(req, Op::kReleasedir);
  delete Handle(fi);
  ReplyErr(req, 0);
}

void OpFsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  OpScope scope(req, Op::kFsyncdir);
  // Namespace changes are in the workspace database; Sync makes them durable.
  ReplyErr(req, ToErrno(Ctx(req).ws->Sync(ino)));
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  OpScope scope(req, Op::kStatfs);
  // The space a workspace can use is the space left where its store lives.
  struct statvfs st {};
  if (statvfs(Ctx(req).options.state_dir.c_str(), &st) != 0) return (void)ReplyErr(req, errno);
  st.f_namemax = 255;
  fuse_reply_statfs(req, &st);
}

}  // namespace strata::fs
