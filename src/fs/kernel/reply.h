// Replies and notifications strata writes to /dev/fuse, each as the exact
// bytes of one write(2): a fuse_out_header (len, error, unique) and the
// opcode's reply struct or data. Notifications are unsolicited messages with
// unique 0 and the notification code in the error field.
//
// Attributes come from a struct stat, as the handlers produce them; cache
// timeouts are durations (split into the seconds and nanoseconds the kernel
// wants).
//
// Thread-safety: pure functions.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fs/kernel/fuse_abi.h"
#include "util/status.h"

namespace strata::fs::kernel {

// The bytes of one message to the kernel.
using Message = std::string;

// An inode the kernel may cache, as LOOKUP, MKNOD, MKDIR, SYMLINK, LINK and
// CREATE answer it (and READDIRPLUS per entry).
struct EntryParams {
  uint64_t nodeid = 0;      // 0 in LOOKUP: a negative entry, cached for entry_timeout
  uint64_t generation = 0;  // nodeid:generation is unique for the file system's lifetime
  std::chrono::nanoseconds entry_timeout{0};
  std::chrono::nanoseconds attr_timeout{0};
  struct stat attr {};
};

struct OpenParams {
  uint64_t fh = 0;
  uint32_t open_flags = 0;  // FOPEN_*; kOpenPassthrough needs backing_id
  int32_t backing_id = 0;   // from FUSE_DEV_IOC_BACKING_OPEN
};

// An error reply. err is a positive errno below 512, the kernel's bound; any
// other value is a bug in the caller and is sent as EIO, so the kernel never
// sees a reply it would refuse (and leave the caller waiting).
Message ErrorReply(uint64_t unique, int err);
// Success without a body (UNLINK, RMDIR, RENAME, RELEASE, FSYNC, ...).
Message EmptyReply(uint64_t unique);
Message EntryReply(uint64_t unique, const EntryParams& entry);
Message AttrReply(uint64_t unique, const struct stat& attr, std::chrono::nanoseconds timeout);
Message OpenReply(uint64_t unique, const OpenParams& open);
Message CreateReply(uint64_t unique, const EntryParams& entry, const OpenParams& open);
Message WriteReply(uint64_t unique, uint32_t written);
Message StatfsReply(uint64_t unique, const struct statvfs& st);
// READ, READLINK, GETXATTR/LISTXATTR with a buffer, READDIR(PLUS) from a
// DirentBuffer: the bytes as they are.
Message DataReply(uint64_t unique, std::span<const uint8_t> data);
Message DataReply(uint64_t unique, std::string_view data);
// GETXATTR/LISTXATTR asked with size 0: how large the value or list is.
Message XattrSizeReply(uint64_t unique, uint32_t size);
Message LseekReply(uint64_t unique, uint64_t offset);

// The kernel's fuse_attr of a struct stat.
fuse_attr ToFuseAttr(const struct stat& st);

// Drop cached data of ino in [offset, offset + length) (length 0: to the end;
// offset -1: attributes only).
Message NotifyInvalInode(uint64_t ino, int64_t offset, int64_t length);
// Drop the cached entry parent/name (flags: FUSE_EXPIRE_ONLY to only expire it).
// InvalidArgument for an empty, too long or '/'-holding name.
Result<Message> NotifyInvalEntry(uint64_t parent, std::string_view name, uint32_t flags);
// parent/name, which was child, is gone: the kernel drops the entry and, if
// it is still cached, tells watchers (inotify) it was deleted.
Result<Message> NotifyDelete(uint64_t parent, uint64_t child, std::string_view name);

}  // namespace strata::fs::kernel
