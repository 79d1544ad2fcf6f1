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
bool MayKeepSetgid(fuse_req_t req, fuse_ino_t ino) {
  const fuse_ctx* caller = fuse_req_ctx(req);
  if (caller->uid == 0) return true;
  auto attr = Ctx(req).ws->GetAttr(ino);
  if (!attr.ok() || !(attr->mode & S_ISGID)) return true;  // nothing to clear (an error shows in SetXattr)
  if (attr->gid == caller->gid) return true;
  std::vector<gid_t> groups(64);
  int n = fuse_req_getgroups(req, static_cast<int>(groups.size()), groups.data());
  if (n > static_cast<int>(groups.size())) {  // more than fitted: again with room for all
    groups.resize(static_cast<size_t>(n));
    n = fuse_req_getgroups(req, n, groups.data());
  }
  if (n <= 0) return false;
  groups.resize(std::min(static_cast<size_t>(n), groups.size()));
  return std::find(groups.begin(), groups.end(), attr->gid) != groups.end();
}

void ReplySized(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) return (void)fuse_reply_xattr(req, value.size());
  if (value.size() > size) return (void)ReplyErr(req, ERANGE);
  fuse_reply_buf(req, value.data(), value.size());
}
}  // namespace

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags) {
  OpScope scope(req, Op::kSetxattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(req, EOPNOTSUPP);
  flags &= XATTR_CREATE | XATTR_REPLACE;  // nothing else is the caller's to ask
  if (name == kAclAccessXattr && !MayKeepSetgid(req, ino)) flags |= kSetAclKillSgid;
  ReplyErr(req, ToErrno(Ctx(req).ws->SetXattr(ino, name, std::string_view(value, size), flags)));
}

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  OpScope scope(req, Op::kGetxattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(req, EOPNOTSUPP);
  auto value = Ctx(req).ws->GetXattr(ino, name);
  if (!value.ok()) return (void)ReplyErr(req, ToErrno(value.status()));
  ReplySized(req, *value, size);
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  OpScope scope(req, Op::kListxattr);
  auto names = Ctx(req).ws->ListXattrs(ino);
  if (!names.ok()) return (void)ReplyErr(req, ToErrno(names.status()));
  std::string list;
  for (const std::string& n : *names) list.append(n).push_back('\0');
  ReplySized(req, list, size);
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  OpScope scope(req, Op::kRemovexattr);
  if (!KnownNamespace(name)) return (void)ReplyErr(req, EOPNOTSUPP);
  ReplyErr(req, ToErrno(Ctx(req).ws->RemoveXattr(ino, name)));
}

}  // namespace strata::fs
