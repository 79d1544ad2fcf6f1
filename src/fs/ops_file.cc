// File operations: open, create, read, write, release, fsync.
//
// There is no flush handler: writes reach the workspace as they happen, so a
// close has nothing to add, and a daemon without one tells the kernel (ENOSYS
// once) to stop sending FLUSH on every close — one round trip less per file.
#include <fcntl.h>

#include <memory>

#include "fs/fs_context.h"

namespace strata::fs {

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpScope scope(req, Op::kOpen);
  Context& ctx = Ctx(req);
  // libfuse asks for atomic O_TRUNC: the kernel leaves the truncation to open.
  if (fi->flags & O_TRUNC) {
    SetAttrRequest r;
    r.size = 0;
    auto a = ctx.ws->SetAttr(ino, r);
    if (!a.ok()) return (void)ReplyErr(req, ToErrno(a.status()));
  }
  // Nothing but this daemon changes the file, so the kernel's page cache stays
  // valid from one open to the next.
  fi->keep_cache = 1;
  if (fi->flags & O_DIRECT) fi->direct_io = 1;
  ctx.ws->Ref(ino);  // an open file keeps an unlinked inode alive
  if (fuse_reply_open(req, fi) != 0) ctx.ws->Unref(ino, 1);
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  OpScope scope(req, Op::kCreate);
  Context& ctx = Ctx(req);
  const fuse_ctx* caller = fuse_req_ctx(req);
  auto a = ctx.ws->MakeNode(parent, name, S_IFREG | (mode & 07777), 0, {caller->uid, caller->gid});
  if (!a.ok()) return (void)ReplyErr(req, ToErrno(a.status()));
  fuse_entry_param e{};
  e.ino = a->ino;
  e.attr_timeout = ctx.options.cache_timeout;
  e.entry_timeout = ctx.options.cache_timeout;
  FillStat(*a, &e.attr);
  fi->keep_cache = 1;
  if (fi->flags & O_DIRECT) fi->direct_io = 1;
  ctx.ws->Ref(a->ino);  // the lookup the entry gives the kernel
  ctx.ws->Ref(a->ino);  // the open file
  if (fuse_reply_create(req, &e, fi) != 0) ctx.ws->Unref(a->ino, 2);
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  OpScope scope(req, Op::kRead);
  std::unique_ptr<char[]> buf(new char[size]);
  auto n = Ctx(req).ws->Read(ino, static_cast<uint64_t>(off), size, buf.get());
  if (!n.ok()) return (void)ReplyErr(req, ToErrno(n.status()));
  fuse_reply_buf(req, buf.get(), *n);
}

void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off, fuse_file_info*) {
  OpScope scope(req, Op::kWrite);
  auto n = Ctx(req).ws->Write(ino, static_cast<uint64_t>(off), std::string_view(buf, size));
  if (!n.ok()) return (void)ReplyErr(req, ToErrno(n.status()));
  fuse_reply_write(req, *n);
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  OpScope scope(req, Op::kRelease);
  Ctx(req).ws->Unref(ino, 1);
  ReplyErr(req, 0);
}

void OpFsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  OpScope scope(req, Op::kFsync);
  ReplyErr(req, ToErrno(Ctx(req).ws->Sync(ino)));
}

}  // namespace strata::fs
