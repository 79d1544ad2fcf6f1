// The operation table, one operation per line, and capability negotiation.
#include "fs/fs_context.h"

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
}
}  // namespace

const fuse_lowlevel_ops& Operations() {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o{};
    o.init = OpInit;
    o.lookup = OpLookup;
    o.forget = OpForget;
    o.forget_multi = OpForgetMulti;
    o.getattr = OpGetattr;
    o.setattr = OpSetattr;
    o.readlink = OpReadlink;
    o.mknod = OpMknod;
    o.mkdir = OpMkdir;
    o.unlink = OpUnlink;
    o.rmdir = OpRmdir;
    o.symlink = OpSymlink;
    o.rename = OpRename;
    o.link = OpLink;
    o.open = OpOpen;
    o.read = OpRead;
    o.write = OpWrite;
    o.release = OpRelease;
    o.fsync = OpFsync;
    o.opendir = OpOpendir;
    o.readdir = OpReaddir;
    o.readdirplus = OpReaddirplus;
    o.releasedir = OpReleasedir;
    o.fsyncdir = OpFsyncdir;
    o.statfs = OpStatfs;
    o.setxattr = OpSetxattr;
    o.getxattr = OpGetxattr;
    o.listxattr = OpListxattr;
    o.removexattr = OpRemovexattr;
    o.create = OpCreate;
    o.fallocate = OpFallocate;
    o.copy_file_range = OpCopyFileRange;
    o.lseek = OpLseek;
    return o;
  }();
  return ops;
}

}  // namespace strata::fs
