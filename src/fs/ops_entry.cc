// Namespace operations: lookup, forget, attributes, creating, linking,
// removing and renaming entries.
#include <sys/stat.h>

#include <cstdio>

#include "fs/fs_context.h"
#include "util/time_ns.h"

namespace strata::fs {

int ToErrno(const Status& s) {
  if (s.ok()) return 0;
  if (s.errno_value() != 0) {
    if (s.errno_value() == EIO) std::fprintf(stderr, "strata: internal error: %s\n", s.message().c_str());
    return s.errno_value();
  }
  switch (s.code()) {
    case Status::Code::kNotFound: return ENOENT;
    case Status::Code::kAlreadyExists: return EEXIST;
    case Status::Code::kInvalidArgument: return EINVAL;
    case Status::Code::kUnavailable:  // a remote store that does not answer: fail, do not hang
      std::fprintf(stderr, "strata: store unavailable: %s\n", s.message().c_str());
      return EIO;
    default:
      std::fprintf(stderr, "strata: internal error: %s\n", s.message().c_str());
      return EIO;
  }
}

void FillStat(const Attr& a, struct stat* st) {
  *st = {};
  st->st_ino = a.ino;
  st->st_mode = a.mode;
  st->st_nlink = a.nlink;
  st->st_uid = a.uid;
  st->st_gid = a.gid;
  st->st_size = static_cast<off_t>(a.size);
  st->st_rdev = a.rdev;
  st->st_blksize = 4096;
  st->st_blocks = static_cast<blkcnt_t>(a.blocks);
  // Rounded down: a time before 1970 keeps tv_nsec in [0, 1e9).
  st->st_atim = ToTimespec(a.atime_ns);
  st->st_mtim = ToTimespec(a.mtime_ns);
  st->st_ctim = ToTimespec(a.ctime_ns);
}

void ReplyEntry(fuse_req_t req, const Attr& a) {
  Ctx(req).ws->Ref(a.ino);  // the kernel now holds one more lookup of this inode
  ReplyReferencedEntry(req, a);
}

void ReplyReferencedEntry(fuse_req_t req, const Attr& a) {
  Context& ctx = Ctx(req);
  fuse_entry_param e{};
  e.ino = a.ino;
  e.attr_timeout = ctx.options.cache_timeout;
  e.entry_timeout = ctx.options.cache_timeout;
  FillStat(a, &e.attr);
  if (fuse_reply_entry(req, &e) != 0) ctx.ws->Unref(a.ino, 1);  // the request was interrupted
}

namespace {
template <typename T>
bool Failed(fuse_req_t req, const Result<T>& r) {
  if (r.ok()) return false;
  ReplyErr(req, ToErrno(r.status()));
  return true;
}

Credentials Caller(fuse_req_t req) {
  const fuse_ctx* c = fuse_req_ctx(req);
  return {c->uid, c->gid, c->umask};  // the umask is ours to apply (FUSE_CAP_DONT_MASK)
}
}  // namespace

// "." and ".." come only from a kernel decoding a file handle (export
// support, set at init): "." of an inode it no longer holds, ".." of a
// directory whose parent it needs. Inode numbers are never reused within a
// workspace and are kept in its database, so a number names the same file
// for as long as the file exists, across remounts; the generation is 0. A
// number that names nothing now is ESTALE, the kernel's answer for a handle
// of a deleted file.
void LookupByNumber(fuse_req_t req, fuse_ino_t ino, bool parent_of) {
  Workspace& ws = *Ctx(req).ws;
  for (;;) {
    const uint64_t swaps = ws.ContentSwaps();
    InodeId target = ino;
    if (parent_of) {
      auto dir = ws.GetDirectoryState(ino);
      if (!dir.ok()) return (void)ReplyErr(req, dir.status().errno_value() == ENOENT ? ESTALE : ToErrno(dir.status()));
      target = dir->parent;
    }
    auto a = ws.GetAttr(target);
    if (!a.ok()) return (void)ReplyErr(req, a.status().errno_value() == ENOENT ? ESTALE : ToErrno(a.status()));
    // An inode that is held but has no name left (deleted while open) is not
    // given out again by its number, as on ext4.
    if (a->nlink == 0) return (void)ReplyErr(req, ESTALE);
    if (!ws.RefIfCurrent(a->ino, swaps)) continue;
    ReplyReferencedEntry(req, *a);
    return;
  }
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpScope scope(req, Op::kLookup);
  Workspace& ws = *Ctx(req).ws;
  if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
    return LookupByNumber(req, parent, name[1] == '.');
  // A reset or rebase may replace the content between the lookup and the
  // reference the answer needs: then the answer is of the old tree, its inode
  // perhaps deleted, and the lookup is made again in the new one.
  for (;;) {
    const uint64_t swaps = ws.ContentSwaps();
    auto a = ws.Lookup(parent, name);
    if (!a.ok() && a.status().errno_value() == ENOENT) {
      if (ws.ContentSwaps() != swaps) continue;
      // A negative entry: the kernel may remember the name is absent, since
      // only this daemon can create it.
      fuse_entry_param e{};
      e.entry_timeout = Ctx(req).options.cache_timeout;
      fuse_reply_entry(req, &e);
      return;
    }
    if (Failed(req, a)) return;
    if (!ws.RefIfCurrent(a->ino, swaps)) continue;
    ReplyReferencedEntry(req, *a);
    return;
  }
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  OpScope scope(req, Op::kForget);
  Ctx(req).ws->Unref(ino, nlookup);
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  OpScope scope(req, Op::kForget);
  for (size_t i = 0; i < count; i++) Ctx(req).ws->Unref(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  OpScope scope(req, Op::kGetattr);
  auto a = Ctx(req).ws->GetAttr(ino);
  if (Failed(req, a)) return;
  struct stat st;
  FillStat(*a, &st);
  fuse_reply_attr(req, &st, Ctx(req).options.cache_timeout);
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  OpScope scope(req, Op::kSetattr);
  SetAttrRequest r;
  if (to_set & FUSE_SET_ATTR_MODE) r.mode = attr->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) r.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) r.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) r.size = static_cast<uint64_t>(attr->st_size);
  const int64_t now = NowNs();
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) r.atime_ns = now;
  else if (to_set & FUSE_SET_ATTR_ATIME) r.atime_ns = JoinNs(attr->st_atim.tv_sec, attr->st_atim.tv_nsec);
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) r.mtime_ns = now;
  else if (to_set & FUSE_SET_ATTR_MTIME) r.mtime_ns = JoinNs(attr->st_mtim.tv_sec, attr->st_mtim.tv_nsec);
  auto a = Ctx(req).ws->SetAttr(ino, r);
  if (Failed(req, a)) return;
  struct stat st;
  FillStat(*a, &st);
  fuse_reply_attr(req, &st, Ctx(req).options.cache_timeout);
}

void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  OpScope scope(req, Op::kMknod);
  auto a = Ctx(req).ws->MakeNode(parent, name, mode, rdev, Caller(req));
  if (Failed(req, a)) return;
  ReplyEntry(req, *a);
}

void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  OpScope scope(req, Op::kMkdir);
  auto a = Ctx(req).ws->MakeDirectory(parent, name, mode, Caller(req));
  if (Failed(req, a)) return;
  ReplyEntry(req, *a);
}

void OpSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  OpScope scope(req, Op::kSymlink);
  auto a = Ctx(req).ws->MakeSymlink(parent, name, target, Caller(req));
  if (Failed(req, a)) return;
  ReplyEntry(req, *a);
}

void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  OpScope scope(req, Op::kLink);
  auto a = Ctx(req).ws->Link(ino, new_parent, new_name);
  if (Failed(req, a)) return;
  ReplyEntry(req, *a);
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  OpScope scope(req, Op::kReadlink);
  auto target = Ctx(req).ws->ReadLink(ino);
  if (Failed(req, target)) return;
  fuse_reply_readlink(req, target->c_str());
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpScope scope(req, Op::kUnlink);
  ReplyErr(req, ToErrno(Ctx(req).ws->Unlink(parent, name)));
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpScope scope(req, Op::kRmdir);
  ReplyErr(req, ToErrno(Ctx(req).ws->RemoveDirectory(parent, name)));
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
              unsigned int flags) {
  OpScope scope(req, Op::kRename);
  unsigned ours = 0;
  if (flags & RENAME_NOREPLACE) ours |= kRenameNoReplace;
  if (flags & RENAME_EXCHANGE) ours |= kRenameExchange;
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) return (void)ReplyErr(req, EINVAL);
  // The kernel has checked that the caller may make device nodes (CAP_MKNOD)
  // and that no exchange comes with it. Kernel overlayfs needs this of an
  // upper layer on FUSE (with xattrs and d_type) to mount.
  if (flags & RENAME_WHITEOUT)
    return (void)ReplyErr(
        req, ToErrno(Ctx(req).ws->RenameLeavingWhiteout(parent, name, new_parent, new_name, ours, Caller(req))));
  ReplyErr(req, ToErrno(Ctx(req).ws->Rename(parent, name, new_parent, new_name, ours)));
}

}  // namespace strata::fs
