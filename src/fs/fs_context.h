// What every handler needs: the workspace, the mount's options, and the
// mapping from Status to errno; and the handlers themselves, one per request
// the kernel sends, each answering through its Call (call.h) exactly once.
// Private to src/fs/.
#pragma once

#include <cerrno>
#include <string>

#include "fs/call.h"
#include "fs/fuse_server.h"
#include "fs/op_stats.h"
#include "fs/write_opens.h"

namespace strata::fs {

struct Context {
  Workspace* ws;
  MountOptions options;
  OpStats* stats = nullptr;
  KernelNotifier* notifier = nullptr;  // for notifications to the kernel; set by the transport
  WriteOpens* write_opens = nullptr;   // what a flush before a cut must write back
  // The kernel opens files without asking (set at INIT by the transport):
  // OPEN answers ENOSYS once, and no OPEN or RELEASE follows.
  bool no_open = false;
  // FUSE_HANDLE_KILLPRIV_V2 was agreed (set at INIT by the transport): the
  // handlers clear set-id bits where the kernel marks a request so
  // (set_id_bits.h), and the kernel sends neither a SETATTR of its own for
  // that nor a GETXATTR before every write.
  bool kill_privs = false;
};

// The errno the kernel should see for a failed workspace call. Errors that
// carry no errno are internal (store damage, our own I/O): EIO, and logged.
int ToErrno(const Status& s);

// Fills a struct stat from workspace attributes.
void FillStat(const Attr& a, struct stat* st);

// Replies with an entry for `a` and takes the lookup reference the kernel now holds.
void ReplyEntry(Call& call, const Attr& a);
// The same when that reference is already taken (RefIfCurrent); gives it back
// if the reply does not reach the kernel.
void ReplyReferencedEntry(Call& call, const Attr& a);

// Sets the kernel's read-ahead of the mount at mountpoint (its bdi's
// read_ahead_kb); needs root. Sends no request to the mount.
Status SetKernelReadAhead(const std::string& mountpoint, uint64_t kib);

using Ino = uint64_t;

// Handlers by family.
void OpLookup(Call& call, Ino parent, const char* name);
void OpForget(Call& call, std::span<const Forget> forgets);
void OpGetattr(Call& call, Ino ino);
void OpSetattr(Call& call, Ino ino, const AttrChange& change);
void OpMknod(Call& call, Ino parent, const char* name, mode_t mode, dev_t rdev);
void OpMkdir(Call& call, Ino parent, const char* name, mode_t mode);
void OpSymlink(Call& call, const char* target, Ino parent, const char* name);
void OpLink(Call& call, Ino ino, Ino new_parent, const char* new_name);
void OpReadlink(Call& call, Ino ino);
void OpUnlink(Call& call, Ino parent, const char* name);
void OpRmdir(Call& call, Ino parent, const char* name);
void OpRename(Call& call, Ino parent, const char* name, Ino new_parent, const char* new_name, unsigned int flags);

void OpOpen(Call& call, Ino ino, const FileInfo& fi);
void OpCreate(Call& call, Ino parent, const char* name, mode_t mode, const FileInfo& fi);
void OpRead(Call& call, Ino ino, size_t size, off_t off);
void OpWrite(Call& call, Ino ino, const char* buf, size_t size, off_t off, const FileInfo& fi);
void OpRelease(Call& call, Ino ino);
void OpFsync(Call& call, Ino ino);
void OpFallocate(Call& call, Ino ino, int mode, off_t offset, off_t length);
void OpLseek(Call& call, Ino ino, off_t off, int whence);
void OpCopyFileRange(Call& call, Ino ino_in, off_t off_in, Ino ino_out, off_t off_out, size_t len, int flags);

void OpOpendir(Call& call, Ino ino);
void OpReaddir(Call& call, Ino ino, size_t size, off_t off, const FileInfo& fi);
void OpReaddirplus(Call& call, Ino ino, size_t size, off_t off, const FileInfo& fi);
void OpReleasedir(Call& call, const FileInfo& fi);
void OpFsyncdir(Call& call, Ino ino);
void OpStatfs(Call& call);

void OpSetxattr(Call& call, Ino ino, const char* name, const char* value, size_t size, int flags);
void OpGetxattr(Call& call, Ino ino, const char* name, size_t size);
void OpListxattr(Call& call, Ino ino, size_t size);
void OpRemovexattr(Call& call, Ino ino, const char* name);

}  // namespace strata::fs
