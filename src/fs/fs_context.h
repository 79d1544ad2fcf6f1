// What every FUSE handler needs: the workspace, the mount's options, and the
// mapping from Status to errno. Private to src/fs/.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cerrno>

#include "fs/fuse_server.h"
#include "fs/op_stats.h"

namespace strata::fs {

struct Context {
  Workspace* ws;
  MountOptions options;
  OpStats* stats = nullptr;
  fuse_session* session = nullptr;  // for notifications to the kernel
  // The kernel opens files without asking (FUSE_CAP_NO_OPEN_SUPPORT, set at
  // init): OPEN answers ENOSYS once, and no OPEN or RELEASE follows.
  bool no_open = false;
};

inline Context& Ctx(fuse_req_t req) { return *static_cast<Context*>(fuse_req_userdata(req)); }

// The errno the kernel should see for a failed workspace call. Errors that
// carry no errno are internal (store damage, our own I/O): EIO, and logged.
int ToErrno(const Status& s);

// Fills a struct stat from workspace attributes.
void FillStat(const Attr& a, struct stat* st);

// Replies with an entry for `a` and takes the lookup reference the kernel now holds.
void ReplyEntry(fuse_req_t req, const Attr& a);
// The same when that reference is already taken (RefIfCurrent); gives it back
// if the reply does not reach the kernel.
void ReplyReferencedEntry(fuse_req_t req, const Attr& a);

// Sets the kernel's read-ahead of the mount at mountpoint (its bdi's
// read_ahead_kb); needs root. Sends no request to the mount.
Status SetKernelReadAhead(const std::string& mountpoint, uint64_t kib);

// The operation table, filled in one place (ops_table.cc).
const fuse_lowlevel_ops& Operations();

// Handlers by family.
void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi);
void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void OpSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name);
void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name);
void OpReadlink(fuse_req_t req, fuse_ino_t ino);
void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
              unsigned int flags);

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi);
void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off, fuse_file_info* fi);
void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpFsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void OpFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info* fi);
void OpLseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi);
void OpCopyFileRange(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in, fuse_ino_t ino_out,
                     off_t off_out, fuse_file_info* fi_out, size_t len, int flags);

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpReleasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpFsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void OpStatfs(fuse_req_t req, fuse_ino_t ino);

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags);
void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

}  // namespace strata::fs
