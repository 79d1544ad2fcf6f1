// Names of the kernel's FUSE opcodes, for logs and error messages.
#include <string>

#include "fs/kernel/request.h"

namespace strata::fs::kernel {

std::string OpcodeName(uint32_t opcode) {
  switch (opcode) {
    case FUSE_LOOKUP: return "LOOKUP";
    case FUSE_FORGET: return "FORGET";
    case FUSE_GETATTR: return "GETATTR";
    case FUSE_SETATTR: return "SETATTR";
    case FUSE_READLINK: return "READLINK";
    case FUSE_SYMLINK: return "SYMLINK";
    case FUSE_MKNOD: return "MKNOD";
    case FUSE_MKDIR: return "MKDIR";
    case FUSE_UNLINK: return "UNLINK";
    case FUSE_RMDIR: return "RMDIR";
    case FUSE_RENAME: return "RENAME";
    case FUSE_LINK: return "LINK";
    case FUSE_OPEN: return "OPEN";
    case FUSE_READ: return "READ";
    case FUSE_WRITE: return "WRITE";
    case FUSE_STATFS: return "STATFS";
    case FUSE_RELEASE: return "RELEASE";
    case FUSE_FSYNC: return "FSYNC";
    case FUSE_SETXATTR: return "SETXATTR";
    case FUSE_GETXATTR: return "GETXATTR";
    case FUSE_LISTXATTR: return "LISTXATTR";
    case FUSE_REMOVEXATTR: return "REMOVEXATTR";
    case FUSE_FLUSH: return "FLUSH";
    case FUSE_INIT: return "INIT";
    case FUSE_OPENDIR: return "OPENDIR";
    case FUSE_READDIR: return "READDIR";
    case FUSE_RELEASEDIR: return "RELEASEDIR";
    case FUSE_FSYNCDIR: return "FSYNCDIR";
    case FUSE_GETLK: return "GETLK";
    case FUSE_SETLK: return "SETLK";
    case FUSE_SETLKW: return "SETLKW";
    case FUSE_ACCESS: return "ACCESS";
    case FUSE_CREATE: return "CREATE";
    case FUSE_INTERRUPT: return "INTERRUPT";
    case FUSE_BMAP: return "BMAP";
    case FUSE_DESTROY: return "DESTROY";
    case FUSE_IOCTL: return "IOCTL";
    case FUSE_POLL: return "POLL";
    case FUSE_NOTIFY_REPLY: return "NOTIFY_REPLY";
    case FUSE_BATCH_FORGET: return "BATCH_FORGET";
    case FUSE_FALLOCATE: return "FALLOCATE";
    case FUSE_READDIRPLUS: return "READDIRPLUS";
    case FUSE_RENAME2: return "RENAME2";
    case FUSE_LSEEK: return "LSEEK";
    case FUSE_COPY_FILE_RANGE: return "COPY_FILE_RANGE";
    case FUSE_SETUPMAPPING: return "SETUPMAPPING";
    case FUSE_REMOVEMAPPING: return "REMOVEMAPPING";
    case FUSE_SYNCFS: return "SYNCFS";
    case FUSE_TMPFILE: return "TMPFILE";
    case kOpStatx: return "STATX";
    default: return "opcode " + std::to_string(opcode);
  }
}

}  // namespace strata::fs::kernel
