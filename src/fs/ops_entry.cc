// Namespace operations: lookup, forget, attributes, creating, linking,
// removing and renaming entries.
#include <sys/stat.h>

#include <cstdio>

#include "fs/fs_context.h"
#include "fs/set_id_bits.h"
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

void ReplyEntry(Call& call, const Attr& a) {
  call.ctx().ws->Ref(a.ino);  // the kernel now holds one more lookup of this inode
  ReplyReferencedEntry(call, a);
}

void ReplyReferencedEntry(Call& call, const Attr& a) {
  Context& ctx = call.ctx();
  EntryOut e;
  e.ino = a.ino;
  e.timeout = ctx.options.cache_timeout;
  FillStat(a, &e.attr);
  if (call.ReplyEntry(e) != 0) ctx.ws->Unref(a.ino, 1);  // the request was interrupted
}

namespace {
template <typename T>
bool Failed(Call& call, const Result<T>& r) {
  if (r.ok()) return false;
  ReplyErr(call, ToErrno(r.status()));
  return true;
}

Credentials Caller(const Call& call) {
  return {call.uid(), call.gid(), call.umask()};  // the umask is ours to apply (DONT_MASK)
}
}  // namespace

// "." and ".." come only from a kernel decoding a file handle (export
// support, set at init): "." of an inode it no longer holds, ".." of a
// directory whose parent it needs. Inode numbers are never reused within a
// workspace and are kept in its database, so a number names the same file
// for as long as the file exists, across remounts; the generation is 0. A
// number that names nothing now is ESTALE, the kernel's answer for a handle
// of a deleted file.
void LookupByNumber(Call& call, Ino ino, bool parent_of) {
  Workspace& ws = *call.ctx().ws;
  for (;;) {
    const uint64_t swaps = ws.ContentSwaps();
    InodeId target = ino;
    if (parent_of) {
      auto dir = ws.GetDirectoryState(ino);
      if (!dir.ok()) return (void)ReplyErr(call, dir.status().errno_value() == ENOENT ? ESTALE : ToErrno(dir.status()));
      target = dir->parent;
    }
    auto a = ws.GetAttr(target);
    if (!a.ok()) return (void)ReplyErr(call, a.status().errno_value() == ENOENT ? ESTALE : ToErrno(a.status()));
    // An inode that is held but has no name left (deleted while open) is not
    // given out again by its number, as on ext4.
    if (a->nlink == 0) return (void)ReplyErr(call, ESTALE);
    if (!ws.RefIfCurrent(a->ino, swaps)) continue;
    ReplyReferencedEntry(call, *a);
    return;
  }
}

void OpLookup(Call& call, Ino parent, const char* name) {
  OpScope scope(call, Op::kLookup);
  Workspace& ws = *call.ctx().ws;
  if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
    return LookupByNumber(call, parent, name[1] == '.');
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
      EntryOut e;
      e.timeout = call.ctx().options.cache_timeout;
      call.ReplyEntry(e);
      return;
    }
    if (Failed(call, a)) return;
    if (!ws.RefIfCurrent(a->ino, swaps)) continue;
    ReplyReferencedEntry(call, *a);
    return;
  }
}

void OpForget(Call& call, std::span<const Forget> forgets) {
  OpScope scope(call, Op::kForget);
  for (const Forget& f : forgets) call.ctx().ws->Unref(f.ino, f.nlookup);
  call.ReplyNone();
}

void OpGetattr(Call& call, Ino ino) {
  OpScope scope(call, Op::kGetattr);
  auto a = call.ctx().ws->GetAttr(ino);
  if (Failed(call, a)) return;
  struct stat st;
  FillStat(*a, &st);
  call.ReplyAttr(st, call.ctx().options.cache_timeout);
}

void OpSetattr(Call& call, Ino ino, const AttrChange& change) {
  OpScope scope(call, Op::kSetattr);
  SetAttrRequest r;
  if (change.mode) r.mode = *change.mode & 07777;
  r.uid = change.uid;
  r.gid = change.gid;
  r.size = change.size;
  const int64_t now = NowNs();
  if (change.atime_now) r.atime_ns = now;
  else if (change.atime) r.atime_ns = JoinNs(change.atime->tv_sec, change.atime->tv_nsec);
  if (change.mtime_now) r.mtime_ns = now;
  else if (change.mtime) r.mtime_ns = JoinNs(change.mtime->tv_sec, change.mtime->tv_nsec);
  // With KILLPRIV_V2 a chown or a truncation clears set-id bits here, in the
  // same change (set_id_bits.h); without it the kernel has put the new mode
  // in this request itself.
  if (call.ctx().kill_privs && change.kill_suidgid && !r.mode) {
    auto before = call.ctx().ws->GetAttr(ino);
    if (Failed(call, before)) return;
    const bool owner = r.uid || r.gid;
    r.mode = ModeAfter(call, owner ? SetIdChange::kOwner : SetIdChange::kData, before->mode, before->gid);
  }
  auto a = call.ctx().ws->SetAttr(ino, r);
  if (Failed(call, a)) return;
  struct stat st;
  FillStat(*a, &st);
  call.ReplyAttr(st, call.ctx().options.cache_timeout);
}

void OpMknod(Call& call, Ino parent, const char* name, mode_t mode, dev_t rdev) {
  OpScope scope(call, Op::kMknod);
  auto a = call.ctx().ws->MakeNode(parent, name, mode, rdev, Caller(call));
  if (Failed(call, a)) return;
  ReplyEntry(call, *a);
}

void OpMkdir(Call& call, Ino parent, const char* name, mode_t mode) {
  OpScope scope(call, Op::kMkdir);
  auto a = call.ctx().ws->MakeDirectory(parent, name, mode, Caller(call));
  if (Failed(call, a)) return;
  ReplyEntry(call, *a);
}

void OpSymlink(Call& call, const char* target, Ino parent, const char* name) {
  OpScope scope(call, Op::kSymlink);
  auto a = call.ctx().ws->MakeSymlink(parent, name, target, Caller(call));
  if (Failed(call, a)) return;
  ReplyEntry(call, *a);
}

void OpLink(Call& call, Ino ino, Ino new_parent, const char* new_name) {
  OpScope scope(call, Op::kLink);
  auto a = call.ctx().ws->Link(ino, new_parent, new_name);
  if (Failed(call, a)) return;
  ReplyEntry(call, *a);
}

void OpReadlink(Call& call, Ino ino) {
  OpScope scope(call, Op::kReadlink);
  auto target = call.ctx().ws->ReadLink(ino);
  if (Failed(call, target)) return;
  call.ReplyBytes(*target);
}

void OpUnlink(Call& call, Ino parent, const char* name) {
  OpScope scope(call, Op::kUnlink);
  ReplyErr(call, ToErrno(call.ctx().ws->Unlink(parent, name)));
}

void OpRmdir(Call& call, Ino parent, const char* name) {
  OpScope scope(call, Op::kRmdir);
  ReplyErr(call, ToErrno(call.ctx().ws->RemoveDirectory(parent, name)));
}

void OpRename(Call& call, Ino parent, const char* name, Ino new_parent, const char* new_name,
              unsigned int flags) {
  OpScope scope(call, Op::kRename);
  unsigned ours = 0;
  if (flags & RENAME_NOREPLACE) ours |= kRenameNoReplace;
  if (flags & RENAME_EXCHANGE) ours |= kRenameExchange;
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) return (void)ReplyErr(call, EINVAL);
  // The kernel has checked that the caller may make device nodes (CAP_MKNOD)
  // and that no exchange comes with it. Kernel overlayfs needs this of an
  // upper layer on FUSE (with xattrs and d_type) to mount.
  if (flags & RENAME_WHITEOUT)
    return (void)ReplyErr(
        call, ToErrno(call.ctx().ws->RenameLeavingWhiteout(parent, name, new_parent, new_name, ours, Caller(call))));
  ReplyErr(call, ToErrno(call.ctx().ws->Rename(parent, name, new_parent, new_name, ours)));
}

}  // namespace strata::fs
