// libfuse's operation table, one operation per line, and capability
// negotiation: each entry unpacks libfuse's arguments into the transport's
// neutral form (fs/call.h) and calls the handler (fs/ops_*.cc).
#include "fs/fs_context.h"
#include "fs/libfuse/device_io.h"
#include "fs/libfuse/libfuse_call.h"
#include "fs/libfuse/libfuse_ops.h"

#include <linux/fuse.h>

#include <utility>
#include <vector>

namespace strata::fs {

namespace {
void OpInit(void* userdata, fuse_conn_info* conn) {
  Context& ctx = *static_cast<Context*>(userdata);
  const MountOptions& options = ctx.options;
  // Large requests: fewer round trips for sequential I/O. 1 MiB is the most
  // libfuse's request buffer holds (and the kernel's default max_pages_limit);
  // libfuse derives max_pages, the largest READ, from max_write.
  conn->max_write = 1 << 20;
  // The kernel keeps the smaller of this and its bdi's read_ahead_kb, which
  // FuseServer::Mount raises to the same value.
  conn->max_readahead = options.readahead_kib << 10;
  // Kernel-side permission checks are requested at mount (default_permissions).
  // POSIX ACLs, as on ext4: the kernel then checks them and caches them, and
  // leaves the rest to the workspace (keeping the mode in step with the
  // access ACL, default ACLs inherited by new entries). A default ACL replaces
  // the umask, so the kernel must pass the umask on instead of applying it
  // (DONT_MASK); without that, no ACLs.
  constexpr unsigned kAcls = FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
  if ((conn->capable & kAcls) == kAcls) conn->want |= kAcls;
  if (options.writeback_cache && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  else
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  // Only this daemon changes the files, so the kernel's cached pages stay
  // valid: they must not be dropped each time a file's mtime, refreshed after
  // a write, differs from the one the kernel saw before (libfuse's default).
  // What changes a file behind the kernel's back invalidates it explicitly.
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
  // File handles (name_to_handle_at, open_by_handle_at, an NFS export): the
  // kernel may then look up "." and ".." by inode number (ops_entry.cc).
  if (conn->capable & FUSE_CAP_EXPORT_SUPPORT) conn->want |= FUSE_CAP_EXPORT_SUPPORT;
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  // An open file needs nothing from this daemon: the kernel's lookup reference
  // keeps an unlinked inode alive until the last close, and pages stay cached
  // from one open to the next (the kernel's default without OPEN). So the
  // kernel opens without asking, saving OPEN and RELEASE on every open and
  // close. A truncating open then comes as a SETATTR of its own (with the
  // set-id bits it clears), not folded into an OPEN the kernel never sends.
  if (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) {
    ctx.no_open = true;
    conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  }
  // FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 has no capability for, is
  // added to the reply on its way to the kernel (device_io.h).
}

// One request: its Call, then the handler with the arguments unpacked.
template <auto kHandler, typename... Args>
void Serve(fuse_req_t req, Args&&... args) {
  LibfuseCall call(req);
  kHandler(call, std::forward<Args>(args)...);
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) { Serve<OpLookup>(req, parent, name); }
void ForgetOne(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  const Forget one{ino, nlookup};
  Serve<OpForget>(req, std::span<const Forget>(&one, 1));
}
void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  std::vector<Forget> all(count);
  for (size_t i = 0; i < count; i++) all[i] = {forgets[i].ino, forgets[i].nlookup};
  Serve<OpForget>(req, std::span<const Forget>(all));
}
void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { Serve<OpGetattr>(req, ino); }
void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  AttrChange c;
  if (to_set & FUSE_SET_ATTR_MODE) c.mode = attr->st_mode;
  if (to_set & FUSE_SET_ATTR_UID) c.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) c.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) c.size = static_cast<uint64_t>(attr->st_size);
  if (to_set & FUSE_SET_ATTR_ATIME) c.atime = attr->st_atim;
  if (to_set & FUSE_SET_ATTR_MTIME) c.mtime = attr->st_mtim;
  c.atime_now = (to_set & FUSE_SET_ATTR_ATIME_NOW) != 0;
  c.mtime_now = (to_set & FUSE_SET_ATTR_MTIME_NOW) != 0;
  c.kill_suidgid = KillSuidgidMark(FUSE_SETATTR).value_or(false);
  Serve<OpSetattr>(req, ino, c);
}
void Readlink(fuse_req_t req, fuse_ino_t ino) { Serve<OpReadlink>(req, ino); }
void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  Serve<OpMknod>(req, parent, name, mode, rdev);
}
void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) { Serve<OpMkdir>(req, parent, name, mode); }
void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) { Serve<OpUnlink>(req, parent, name); }
void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) { Serve<OpRmdir>(req, parent, name); }
void Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  Serve<OpSymlink>(req, target, parent, name);
}
void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
            unsigned int flags) {
  Serve<OpRename>(req, parent, name, new_parent, new_name, flags);
}
void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  Serve<OpLink>(req, ino, new_parent, new_name);
}
void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FileInfo info = FileInfoOf(fi);
  info.kill_suidgid = KillSuidgidMark(FUSE_OPEN).value_or(false);
  Serve<OpOpen>(req, ino, info);
}
void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) { Serve<OpRead>(req, ino, size, off); }
void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  FileInfo info = FileInfoOf(fi);
  info.kill_suidgid = KillSuidgidMark(FUSE_WRITE).value_or(false);
  Serve<OpWrite>(req, ino, buf, size, off, info);
}
void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { Serve<OpRelease>(req, ino); }
void Fsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) { Serve<OpFsync>(req, ino); }
void Opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { Serve<OpOpendir>(req, ino); }
void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Serve<OpReaddir>(req, ino, size, off, FileInfoOf(fi));
}
void Readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Serve<OpReaddirplus>(req, ino, size, off, FileInfoOf(fi));
}
void Releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { Serve<OpReleasedir>(req, FileInfoOf(fi)); }
void Fsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) { Serve<OpFsyncdir>(req, ino); }
void Statfs(fuse_req_t req, fuse_ino_t) { Serve<OpStatfs>(req); }
void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  Serve<OpSetxattr>(req, ino, name, value, size, flags);
}
void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) { Serve<OpGetxattr>(req, ino, name, size); }
void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) { Serve<OpListxattr>(req, ino, size); }
void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) { Serve<OpRemovexattr>(req, ino, name); }
void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  Serve<OpCreate>(req, parent, name, mode, FileInfoOf(fi));
}
void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info*) {
  Serve<OpFallocate>(req, ino, mode, offset, length);
}
void CopyFileRange(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info*, fuse_ino_t ino_out, off_t off_out,
                   fuse_file_info*, size_t len, int flags) {
  Serve<OpCopyFileRange>(req, ino_in, off_in, ino_out, off_out, len, flags);
}
void Lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info*) { Serve<OpLseek>(req, ino, off, whence); }
}  // namespace

const fuse_lowlevel_ops& Operations() {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o{};
    o.init = OpInit;
    o.lookup = Lookup;
    o.forget = ForgetOne;
    o.forget_multi = ForgetMulti;
    o.getattr = Getattr;
    o.setattr = Setattr;
    o.readlink = Readlink;
    o.mknod = Mknod;
    o.mkdir = Mkdir;
    o.unlink = Unlink;
    o.rmdir = Rmdir;
    o.symlink = Symlink;
    o.rename = Rename;
    o.link = Link;
    o.open = Open;
    o.read = Read;
    o.write = Write;
    o.release = Release;
    o.fsync = Fsync;
    o.opendir = Opendir;
    o.readdir = Readdir;
    o.readdirplus = Readdirplus;
    o.releasedir = Releasedir;
    o.fsyncdir = Fsyncdir;
    o.statfs = Statfs;
    o.setxattr = Setxattr;
    o.getxattr = Getxattr;
    o.listxattr = Listxattr;
    o.removexattr = Removexattr;
    o.create = Create;
    o.fallocate = Fallocate;
    o.copy_file_range = CopyFileRange;
    o.lseek = Lseek;
    return o;
  }();
  return ops;
}

}  // namespace strata::fs
