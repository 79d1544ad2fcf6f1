// Extended attributes. A size of 0 asks for the length only; a buffer too
// small for the value is ERANGE, as for a local filesystem.
#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fs/fs_context.h"
#include "workspace/posix_acl.h"

namespace strata::fs {

namespace {
// The kernel passes any name through to FUSE; a local filesystem knows only
// these namespaces and refuses the rest.
bool KnownNamespace(std::string_view name) {
  for (std::string_view prefix : {"user.", "trusted.", "security.", "system."})
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Whether the caller may keep a file's setgid bit when it sets an access ACL:
// a member of the file's group, or root (taken as holding CAP_FSETID). The
// kernel tells a FUSE daemon this only through FUSE_SETXATTR_ACL_KILL_SGID,
// which libfuse 3.14 does not pass on, so it is worked out here the kernel's
// way: the caller's group and supplementary groups against the file's.
bool MayKeepSetgid(Call& call, Ino ino) {
  if (call.uid() == 0) return true;
  auto attr = call.ctx().ws->GetAttr(ino);
  if (!attr.ok() || !(attr->mode & S_ISGID)) return true;  // nothing to clear (an error shows in SetXattr)
  return attr->gid == call.gid() || call.InSupplementaryGroup(attr->gid);
}

void ReplySized(Call& call, const std::string& value, size_t size) {
  if (size == 0) return (void)call.ReplyXattrSize(value.size());
  if (value.size() > size) return (void)ReplyErr(call, ERANGE);
  call.ReplyBytes(value);
}
}  // namespace

void OpSetxattr(Call& call, Ino ino, const char* name, const char* value, size_t size, int flags) {
  OpScope scope(call, Op::kSetxattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(call, EOPNOTSUPP);
  flags &= XATTR_CREATE | XATTR_REPLACE;  // nothing else is the caller's to ask
  if (name == kAclAccessXattr && !MayKeepSetgid(call, ino)) flags |= kSetAclKillSgid;
  ReplyErr(call, ToErrno(call.ctx().ws->SetXattr(ino, name, std::string_view(value, size), flags)));
}

void OpGetxattr(Call& call, Ino ino, const char* name, size_t size) {
  OpScope scope(call, Op::kGetxattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(call, EOPNOTSUPP);
  auto value = call.ctx().ws->GetXattr(ino, name);
  if (!value.ok()) return (void)ReplyErr(call, ToErrno(value.status()));
  ReplySized(call, *value, size);
}

void OpListxattr(Call& call, Ino ino, size_t size) {
  OpScope scope(call, Op::kListxattr);
  auto names = call.ctx().ws->ListXattrs(ino);
  if (!names.ok()) return (void)ReplyErr(call, ToErrno(names.status()));
  std::string list;
  for (const std::string& n : *names) list.append(n).push_back('\0');
  ReplySized(call, list, size);
}

void OpRemovexattr(Call& call, Ino ino, const char* name) {
  OpScope scope(call, Op::kRemovexattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(call, EOPNOTSUPP);
  ReplyErr(call, ToErrno(call.ctx().ws->RemoveXattr(ino, name)));
}

}  // namespace strata::fs
