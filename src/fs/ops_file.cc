// File operations: open, create, read, write, release, fsync, and on ranges:
// fallocate, lseek (SEEK_DATA / SEEK_HOLE), copy_file_range.
//
// There is no flush handler: writes reach the workspace as they happen, so a
// close has nothing to add, and a daemon without one tells the kernel (ENOSYS
// once) to stop sending FLUSH on every close — one round trip less per file.
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>

#include "fs/fs_context.h"
#include "fs/set_id_bits.h"

namespace strata::fs {

namespace {
// Whether a write, truncation or fallocate by the caller clears set-id bits.
// With KILLPRIV_V2 the kernel says so (fi.kill_suidgid) where it can; without
// it, or where it does not say, root stands for CAP_FSETID. Without V2 the
// kernel also clears setuid (and setgid with group-exec) by a SETATTR of its
// own first, so what is left here is the setgid of a file whose group the
// caller is outside of, which ext4 clears and the kernel's FUSE code does not.
bool ChangeKillsSetId(Call& call, std::optional<bool> kernel_says) {
  if (call.ctx().kill_privs && kernel_says) return *kernel_says;
  return call.uid() != 0;
}
}  // namespace

// No open sets direct_io (FOPEN_DIRECT_IO), not even one with O_DIRECT:
// with it the kernel sends that descriptor's reads and writes straight to the
// daemon and leaves the inode's page cache alone, so a buffered reader of the
// same file (kept cache) goes on reading the pages from before a direct write.
// Kernels invalidate there only when FUSE_DIRECT_IO_ALLOW_MMAP is negotiated,
// which libfuse 3.14 cannot. Without direct_io, O_DIRECT takes the kernel's
// generic direct I/O path, as on ext4: it writes back dirty pages of the range
// and drops the cached ones before and after a direct write, and a direct read
// sees buffered writes. The requests reach the daemon as ordinary READ and
// WRITE requests (asynchronous for AIO), still bypassing the page cache.
void OpOpen(Call& call, Ino ino, const FileInfo& fi) {
  OpScope scope(call, Op::kOpen);
  Context& ctx = call.ctx();
  // The kernel treats this as a successful open, and never asks again.
  if (ctx.no_open) return (void)call.SendError(ENOSYS);
  // Without it, libfuse asks for atomic O_TRUNC: the kernel leaves the truncation to open,
  // and with it the clearing of set-id bits a truncation does.
  if (fi.flags & O_TRUNC) {
    SetAttrRequest r;
    r.size = 0;
    auto before = ctx.ws->GetAttr(ino);
    if (!before.ok()) return (void)ReplyErr(call, ToErrno(before.status()));
    if (ChangeKillsSetId(call, fi.kill_suidgid)) r.mode = ModeAfter(call, SetIdChange::kData, before->mode, before->gid);
    auto a = ctx.ws->SetAttr(ino, r);
    if (!a.ok()) return (void)ReplyErr(call, ToErrno(a.status()));
  }
  // Nothing but this daemon changes the file, so the kernel's page cache stays
  // valid from one open to the next. Not even O_DIRECT sets direct_io (above).
  if ((fi.flags & O_ACCMODE) != O_RDONLY) ctx.write_opens->Note(ino);
  OpenOut out;
  out.keep_cache = true;
  ctx.ws->Ref(ino);  // an open file keeps an unlinked inode alive
  if (call.ReplyOpen(out) != 0) ctx.ws->Unref(ino, 1);
}

void OpCreate(Call& call, Ino parent, const char* name, mode_t mode, const FileInfo& fi) {
  OpScope scope(call, Op::kCreate);
  Context& ctx = call.ctx();
  // When files open without asking, a created file is better made by MKNOD:
  // the kernel then opens it on its own and sends no RELEASE at its close,
  // where a file opened by CREATE needs one. ENOSYS makes it do that from now on.
  if (ctx.no_open) return (void)call.SendError(ENOSYS);
  auto a = ctx.ws->MakeNode(parent, name, S_IFREG | (mode & 07777), 0, {call.uid(), call.gid(), call.umask()});
  if (!a.ok()) return (void)ReplyErr(call, ToErrno(a.status()));
  EntryOut e;
  e.ino = a->ino;
  e.timeout = ctx.options.cache_timeout;
  FillStat(*a, &e.attr);
  if ((fi.flags & O_ACCMODE) != O_RDONLY) ctx.write_opens->Note(a->ino);
  OpenOut out;
  out.keep_cache = true;
  ctx.ws->Ref(a->ino);  // the lookup the entry gives the kernel
  ctx.ws->Ref(a->ino);  // the open file
  if (call.ReplyCreate(e, out) != 0) ctx.ws->Unref(a->ino, 2);
}

void OpRead(Call& call, Ino ino, size_t size, off_t off) {
  OpScope scope(call, Op::kRead);
  Context& ctx = call.ctx();
  // Gathered: the reply points into the cached chunks instead of a copy of them.
  ReadTarget target(size);
  auto n = ctx.ws->Read(ino, static_cast<uint64_t>(off), size, &target);
  if (!n.ok()) return (void)ReplyErr(call, ToErrno(n.status()));
  // The kernel leaves atime to the daemon and asks for it again after this
  // reply. A read-only mount moves none (the kernel does not ask there). A
  // failure to record the time fails no read (an internal one is logged).
  if (ctx.options.atime != AtimeMode::kNoatime && !ctx.options.read_only) {
    (void)ToErrno(ctx.ws->NoteRead(
        ino, ctx.options.atime == AtimeMode::kStrictatime ? AtimeRule::kStrict : AtimeRule::kRelative));
  }
  call.ReplyData(target.pieces());
}

namespace {
// Workers waiting for the kernel to write back or drop cached pages (direct
// writes, seeks). Each waits for reads that other workers must serve, so at
// most half of them may wait at once.
std::atomic<unsigned> workers_waiting_on_kernel{0};

// Asks the kernel to drop the cached pages of [off, off + len) of ino (first
// writing back dirty ones), waiting until it has; false when it did not, as
// half the workers wait so already.
bool DropCachedPages(Context& ctx, Ino ino, off_t off, off_t len) {
  bool dropped = false;
  if (ctx.notifier != nullptr && workers_waiting_on_kernel.fetch_add(1) < ctx.options.max_threads / 2) {
    dropped = ctx.notifier->InvalInode(ino, off, len) == 0;
  }
  workers_waiting_on_kernel.fetch_sub(1);
  return dropped;
}
}  // namespace

void OpWrite(Call& call, Ino ino, const char* buf, size_t size, off_t off, const FileInfo& fi) {
  OpScope scope(call, Op::kWrite);
  Context& ctx = call.ctx();
  auto n = ctx.ws->Write(ino, static_cast<uint64_t>(off), std::string_view(buf, size));
  if (!n.ok()) return (void)ReplyErr(call, ToErrno(n.status()));
  // A write through an O_DIRECT descriptor bypasses the page cache, and the
  // kernel drops the cached pages of its range before sending it, but after
  // it only when the write was synchronous: an asynchronous one (Linux AIO,
  // io_uring) completes without that. A buffered read meanwhile may have put
  // the old bytes back, and would be read again after the write returned
  // (ext4 drops them at completion). So they are dropped here, after the
  // bytes are in the workspace and before the reply: a read whose page the
  // kernel holds locked is waited for, a later one gets the new bytes. The
  // dispatcher sends such writes to a worker (request_loop.h), as the wait
  // may be on reads it has yet to take from the device. Not the write-back of
  // a cached page (writepage): that page is under write-back, and waiting for
  // it from here would wait for this very write.
  if ((fi.flags & O_DIRECT) && !fi.writepage && *n > 0) {
    DropCachedPages(ctx, ino, off, static_cast<off_t>(*n));
  }
  // A write-back of cached pages comes from the kernel, not the writer.
  if (!fi.writepage && *n > 0 && ChangeKillsSetId(call, fi.kill_suidgid))
    ClearSetIdAfter(call, SetIdChange::kData, ino);
  call.ReplyWrite(*n);
}

void OpRelease(Call& call, Ino ino) {
  OpScope scope(call, Op::kRelease);
  call.ctx().ws->Unref(ino, 1);
  ReplyErr(call, 0);
}

void OpFsync(Call& call, Ino ino) {
  OpScope scope(call, Op::kFsync);
  ReplyErr(call, ToErrno(call.ctx().ws->Sync(ino)));
}

// The kernel checks the mode, the range and the open flags before it asks,
// and updates its cached size afterwards.
void OpFallocate(Call& call, Ino ino, int mode, off_t offset, off_t length) {
  OpScope scope(call, Op::kFallocate);
  if (offset < 0 || length <= 0) return (void)ReplyErr(call, EINVAL);
  Status s = call.ctx().ws->Allocate(ino, mode, static_cast<uint64_t>(offset), static_cast<uint64_t>(length));
  // The kernel marks no FALLOCATE, even with KILLPRIV_V2 (its file_modified
  // leaves the bits to the daemon then).
  if (s.ok() && ChangeKillsSetId(call, std::nullopt)) ClearSetIdAfter(call, SetIdChange::kData, ino);
  ReplyErr(call, ToErrno(s));
}

// Only SEEK_DATA and SEEK_HOLE come here; the kernel answers the others itself.
void OpLseek(Call& call, Ino ino, off_t off, int whence) {
  OpScope scope(call, Op::kLseek);
  Context& ctx = call.ctx();
  if (off < 0) return (void)ReplyErr(call, ENXIO);
  // The kernel asks without writing back the dirty pages it holds (written
  // through a shared mapping, or any write with the writeback cache), and a
  // hole must never hide data. So it is told to write back and drop its pages
  // from off on first; that blocks until the writes it sends are served by
  // other threads. Should half the threads be waiting so already, this seek
  // does not wait but calls everything up to the end of the file data, which
  // is always a correct answer.
  if (!DropCachedPages(ctx, ino, off, 0)) {
    auto a = ctx.ws->GetAttr(ino);
    if (!a.ok()) return (void)ReplyErr(call, ToErrno(a.status()));
    if (static_cast<uint64_t>(off) >= a->size) return (void)ReplyErr(call, ENXIO);
    call.ReplyLseek(whence == SEEK_DATA ? off : static_cast<off_t>(a->size));
    return;
  }
  auto pos = ctx.ws->SeekData(ino, static_cast<uint64_t>(off), whence);
  if (!pos.ok()) return (void)ReplyErr(call, ToErrno(pos.status()));
  call.ReplyLseek(static_cast<off_t>(*pos));
}

void OpCopyFileRange(Call& call, Ino ino_in, off_t off_in, Ino ino_out, off_t off_out, size_t len, int flags) {
  OpScope scope(call, Op::kCopyFileRange);
  if (flags != 0 || off_in < 0 || off_out < 0) return (void)ReplyErr(call, EINVAL);
  // The reply carries a 32-bit count. Copying less than asked is allowed: the
  // caller goes on from where the copy ended.
  constexpr size_t kMaxCopy = size_t{1} << 30;
  auto n = call.ctx().ws->CopyRange(ino_in, static_cast<uint64_t>(off_in), ino_out, static_cast<uint64_t>(off_out),
                                  std::min(len, kMaxCopy));
  if (!n.ok()) return (void)ReplyErr(call, ToErrno(n.status()));
  call.ReplyWrite(static_cast<size_t>(*n));
}

}  // namespace strata::fs
