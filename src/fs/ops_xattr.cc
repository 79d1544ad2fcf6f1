// Extended attributes. A size of 0 asks for the length only; a buffer too
// small for the value is ERANGE, as for a local filesystem.
#include <string>

#include "fs/fs_context.h"

namespace strata::fs {

namespace {
// The kernel passes any name through to FUSE; a local filesystem knows only
// these namespaces and refuses the rest.
bool KnownNamespace(std::string_view name) {
  for (std::string_view prefix : {"user.", "trusted.", "security.", "system."})
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) return true;
  return false;
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
