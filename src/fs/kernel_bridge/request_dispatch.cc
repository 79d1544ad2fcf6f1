// Decoded requests to handlers (request_dispatch.h).
#include "fs/kernel_bridge/request_dispatch.h"

#include <cerrno>
#include <vector>

#include "fs/fs_context.h"

namespace strata::fs {

namespace {

template <typename T>
const T& Args(const kernel::Request& r) {
  return std::get<T>(r.args);
}

// The decoder guarantees the NUL after every name it gives a view of.
const char* Str(std::string_view s) { return s.data(); }

AttrChange ChangeOf(const fuse_setattr_in& in) {
  AttrChange c;
  if (in.valid & FATTR_MODE) c.mode = in.mode;
  if (in.valid & FATTR_UID) c.uid = in.uid;
  if (in.valid & FATTR_GID) c.gid = in.gid;
  if (in.valid & FATTR_SIZE) c.size = in.size;
  if (in.valid & FATTR_ATIME)
    c.atime = timespec{static_cast<time_t>(in.atime), static_cast<long>(in.atimensec)};
  if (in.valid & FATTR_MTIME)
    c.mtime = timespec{static_cast<time_t>(in.mtime), static_cast<long>(in.mtimensec)};
  c.atime_now = (in.valid & FATTR_ATIME_NOW) != 0;
  c.mtime_now = (in.valid & FATTR_MTIME_NOW) != 0;
  c.kill_suidgid = (in.valid & FATTR_KILL_SUIDGID) != 0;
  return c;
}

void DispatchFile(const kernel::Request& r, Ino node, KernelCall& call) {
  switch (r.header.opcode) {
    case FUSE_OPEN: {
      const auto& in = Args<kernel::OpenArgs>(r).in;
      FileInfo fi{static_cast<int>(in.flags)};
      fi.kill_suidgid = (in.open_flags & FUSE_OPEN_KILL_SUIDGID) != 0;
      return OpOpen(call, node, fi);
    }
    case FUSE_CREATE: {
      const auto& a = Args<kernel::CreateArgs>(r);
      return OpCreate(call, node, Str(a.name), a.in.mode, FileInfo{static_cast<int>(a.in.flags)});
    }
    case FUSE_READ: {
      const auto& in = Args<kernel::ReadArgs>(r).in;
      return OpRead(call, node, in.size, static_cast<off_t>(in.offset));
    }
    case FUSE_WRITE: {
      const auto& a = Args<kernel::WriteArgs>(r);
      FileInfo fi{static_cast<int>(a.in.flags), (a.in.write_flags & FUSE_WRITE_CACHE) != 0, a.in.fh};
      fi.kill_suidgid = (a.in.write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
      return OpWrite(call, node, reinterpret_cast<const char*>(a.data.data()), a.data.size(),
                     static_cast<off_t>(a.in.offset), fi);
    }
    case FUSE_RELEASE: return OpRelease(call, node);
    case FUSE_FSYNC: return OpFsync(call, node);
    case FUSE_FALLOCATE: {
      const auto& in = Args<kernel::FallocateArgs>(r).in;
      return OpFallocate(call, node, static_cast<int>(in.mode), static_cast<off_t>(in.offset),
                         static_cast<off_t>(in.length));
    }
    case FUSE_LSEEK: {
      const auto& in = Args<kernel::LseekArgs>(r).in;
      return OpLseek(call, node, static_cast<off_t>(in.offset), static_cast<int>(in.whence));
    }
    case FUSE_COPY_FILE_RANGE: {
      const auto& in = Args<kernel::CopyFileRangeArgs>(r).in;
      return OpCopyFileRange(call, node, static_cast<off_t>(in.off_in), in.nodeid_out, static_cast<off_t>(in.off_out),
                             in.len, static_cast<int>(in.flags));
    }
    // No flush handler (ops_file.cc): ENOSYS once, and the kernel stops sending FLUSH.
    default: (void)call.SendError(ENOSYS);
  }
}

void DispatchDirectoryOrXattr(const kernel::Request& r, Ino node, KernelCall& call) {
  switch (r.header.opcode) {
    case FUSE_OPENDIR: return OpOpendir(call, node);
    case FUSE_READDIR:
    case FUSE_READDIRPLUS: {
      const auto& in = Args<kernel::ReadArgs>(r).in;
      FileInfo fi;
      fi.fh = in.fh;
      if (r.header.opcode == FUSE_READDIR) return OpReaddir(call, node, in.size, static_cast<off_t>(in.offset), fi);
      return OpReaddirplus(call, node, in.size, static_cast<off_t>(in.offset), fi);
    }
    case FUSE_RELEASEDIR: {
      FileInfo fi;
      fi.fh = Args<kernel::ReleaseArgs>(r).in.fh;
      return OpReleasedir(call, fi);
    }
    case FUSE_FSYNCDIR: return OpFsyncdir(call, node);
    case FUSE_STATFS: return OpStatfs(call);
    case FUSE_SETXATTR: {
      const auto& a = Args<kernel::SetxattrArgs>(r);
      return OpSetxattr(call, node, Str(a.name), reinterpret_cast<const char*>(a.value.data()), a.value.size(),
                        static_cast<int>(a.flags));
    }
    case FUSE_GETXATTR: {
      const auto& a = Args<kernel::GetxattrArgs>(r);
      return OpGetxattr(call, node, Str(a.name), a.size);
    }
    case FUSE_LISTXATTR: return OpListxattr(call, node, Args<kernel::GetxattrArgs>(r).size);
    case FUSE_REMOVEXATTR: return OpRemovexattr(call, node, Str(Args<kernel::RemovexattrArgs>(r).name));
    default: return DispatchFile(r, node, call);
  }
}

}  // namespace

uint32_t UmaskOf(const kernel::Request& request) {
  if (const auto* a = std::get_if<kernel::MknodArgs>(&request.args)) return a->in.umask;
  if (const auto* a = std::get_if<kernel::MkdirArgs>(&request.args)) return a->in.umask;
  if (const auto* a = std::get_if<kernel::CreateArgs>(&request.args)) return a->in.umask;
  return 0;
}

void Dispatch(const kernel::Request& r, KernelCall& call) {
  const Ino node = r.header.nodeid;
  switch (r.header.opcode) {
    case FUSE_LOOKUP: return OpLookup(call, node, Str(Args<kernel::NameArgs>(r).name));
    case FUSE_FORGET: {
      const Forget one{node, Args<kernel::ForgetArgs>(r).nlookup};
      return OpForget(call, std::span<const Forget>(&one, 1));
    }
    case FUSE_BATCH_FORGET: {
      std::vector<Forget> all;
      for (const fuse_forget_one& f : Args<kernel::BatchForgetArgs>(r).items) all.push_back({f.nodeid, f.nlookup});
      return OpForget(call, all);
    }
    case FUSE_GETATTR: return OpGetattr(call, node);
    case FUSE_SETATTR: return OpSetattr(call, node, ChangeOf(Args<kernel::SetattrArgs>(r).in));
    case FUSE_READLINK: return OpReadlink(call, node);
    case FUSE_SYMLINK: {
      const auto& a = Args<kernel::SymlinkArgs>(r);
      return OpSymlink(call, Str(a.target), node, Str(a.name));
    }
    case FUSE_MKNOD: {
      const auto& a = Args<kernel::MknodArgs>(r);
      return OpMknod(call, node, Str(a.name), a.in.mode, a.in.rdev);
    }
    case FUSE_MKDIR: {
      const auto& a = Args<kernel::MkdirArgs>(r);
      return OpMkdir(call, node, Str(a.name), a.in.mode);
    }
    case FUSE_UNLINK: return OpUnlink(call, node, Str(Args<kernel::NameArgs>(r).name));
    case FUSE_RMDIR: return OpRmdir(call, node, Str(Args<kernel::NameArgs>(r).name));
    case FUSE_RENAME:
    case FUSE_RENAME2: {
      const auto& a = Args<kernel::RenameArgs>(r);
      return OpRename(call, node, Str(a.old_name), a.newdir, Str(a.new_name), a.flags);
    }
    case FUSE_LINK: {
      const auto& a = Args<kernel::LinkArgs>(r);
      return OpLink(call, a.oldnodeid, node, Str(a.new_name));
    }
    default: return DispatchDirectoryOrXattr(r, node, call);
  }
}

}  // namespace strata::fs
