// Routing: every call goes to the wrapped workspace, to a past version's
// workspace, or to the directories of .strata/ itself, by inode number
// (past_inodes.h). Changes to anything under .strata/ fail with EROFS.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

#include "past/past_versions_impl.h"

namespace strata {

std::unique_ptr<PastVersions> WithPastVersions(Workspace& inner, Store& store, PastVersionsOptions options) {
  return std::make_unique<past_internal::PastVersionsWorkspace>(inner, store, std::move(options));
}

namespace past_internal {
namespace {

Status ReadOnly() { return Status::IOErrorWithMessage("past versions under .strata/ are read-only", EROFS); }
Status NoSuchInode(InodeId ino) {
  return Status::IOErrorWithMessage("no past version inode " + std::to_string(ino) + " in this mount", ENOENT);
}

}  // namespace

PastVersionsWorkspace::~PastVersionsWorkspace() {
  MutexLock lock(&views_mu_);
  for (View& v : views_) {
    v.ws.reset();
    if (Status s = Workspace::Remove(store_, v.workspace); !s.ok())
      std::fprintf(stderr, "strata: removing the workspace of past version %s: %s\n", v.commit.ToHex().c_str(),
                   s.message().c_str());
  }
}

Result<Route> PastVersionsWorkspace::RouteOf(InodeId ino) {
  if (!IsPast(ino)) return Route{&inner_, ino, 0};
  const uint32_t view = ViewOf(ino);
  MutexLock lock(&views_mu_);
  if (view == 0) {
    if (InnerOf(ino) == 0 || InnerOf(ino) > own_dirs_.size()) return NoSuchInode(ino);
    return Route{nullptr, InnerOf(ino), 0};
  }
  if (view > views_.size()) return NoSuchInode(ino);
  return Route{views_[view - 1].ws.get(), InnerOf(ino), view};
}

Result<Attr> PastVersionsWorkspace::Renumbered(Result<Attr> a, uint32_t view) {
  if (!a.ok()) return a;
  if (a->ino > kInnerMask)
    return Status::IOErrorWithMessage("past version inode " + std::to_string(a->ino) + " has no number here", EOVERFLOW);
  a->ino = PastInode(view, a->ino);
  return a;
}

bool PastVersionsWorkspace::IsShownName(InodeId parent, std::string_view name) {
  if (parent != kRootInode || name != kPastVersionsName) return false;
  auto real = inner_.Lookup(kRootInode, name);
  return !real.ok() && real.status().errno_value() == ENOENT;
}

Status PastVersionsWorkspace::RefuseChangeOf(InodeId parent, std::string_view name) {
  if (IsPast(parent) || IsShownName(parent, name)) return ReadOnly();
  return Status::Ok();
}

// ---- namespace

Result<Attr> PastVersionsWorkspace::Lookup(InodeId parent, std::string_view name) {
  if (IsShownName(parent, name)) return OwnDirAttr(kTopDir);
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(parent));
  if (!r.past()) return inner_.Lookup(parent, name);
  if (r.ws == nullptr) return LookupInOwnDir(r.ino, name);
  return Renumbered(r.ws->Lookup(r.ino, name), r.view);
}

Result<Attr> PastVersionsWorkspace::GetAttr(InodeId ino) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (!r.past()) return inner_.GetAttr(ino);
  if (r.ws == nullptr) return OwnDirAttr(r.ino);
  return Renumbered(r.ws->GetAttr(r.ino), r.view);
}

Result<Attr> PastVersionsWorkspace::SetAttr(InodeId ino, const SetAttrRequest& req) {
  if (IsPast(ino)) return ReadOnly();
  return inner_.SetAttr(ino, req);
}

Status PastVersionsWorkspace::NoteRead(InodeId ino, AtimeRule rule) {
  if (IsPast(ino)) return Status::Ok();  // a past version's atime stays as its commit recorded it
  return inner_.NoteRead(ino, rule);
}

Result<Attr> PastVersionsWorkspace::MakeNode(InodeId parent, std::string_view name, uint32_t mode, uint64_t rdev,
                                             const Credentials& who) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  return inner_.MakeNode(parent, name, mode, rdev, who);
}

Result<Attr> PastVersionsWorkspace::MakeDirectory(InodeId parent, std::string_view name, uint32_t mode,
                                                  const Credentials& who) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  return inner_.MakeDirectory(parent, name, mode, who);
}

Result<Attr> PastVersionsWorkspace::MakeSymlink(InodeId parent, std::string_view name, std::string_view target,
                                                const Credentials& who) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  return inner_.MakeSymlink(parent, name, target, who);
}

Result<Attr> PastVersionsWorkspace::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(new_parent, new_name));
  // A past version's file is another workspace's inode: it cannot get a
  // name in this one (ln reports a cross-device link).
  if (IsPast(ino)) return Status::IOErrorWithMessage("a past version's file cannot be linked into the workspace", EXDEV);
  return inner_.Link(ino, new_parent, new_name);
}

Result<std::string> PastVersionsWorkspace::ReadLink(InodeId ino) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (r.ws == nullptr) return OwnLinkTarget(r.ino);
  return r.ws->ReadLink(r.ino);
}

Status PastVersionsWorkspace::Unlink(InodeId parent, std::string_view name) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  return inner_.Unlink(parent, name);
}

Status PastVersionsWorkspace::RemoveDirectory(InodeId parent, std::string_view name) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  return inner_.RemoveDirectory(parent, name);
}

Status PastVersionsWorkspace::Rename(InodeId parent, std::string_view name, InodeId new_parent,
                                     std::string_view new_name, unsigned flags) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(new_parent, new_name));
  return inner_.Rename(parent, name, new_parent, new_name, flags);
}

Status PastVersionsWorkspace::RenameLeavingWhiteout(InodeId parent, std::string_view name, InodeId new_parent,
                                                    std::string_view new_name, unsigned flags,
                                                    const Credentials& who) {
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(parent, name));
  STRATA_RETURN_IF_ERROR(RefuseChangeOf(new_parent, new_name));
  return inner_.RenameLeavingWhiteout(parent, name, new_parent, new_name, flags, who);
}

Result<std::vector<DirEntry>> PastVersionsWorkspace::ReadDirectory(InodeId dir, uint64_t offset, size_t max) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(dir));
  // The root's listing is the wrapped workspace's: .strata is not in it.
  if (!r.past()) return inner_.ReadDirectory(dir, offset, max);
  if (r.ws == nullptr) return ListOwnDir(r.ino, offset, max);
  STRATA_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, r.ws->ReadDirectory(r.ino, offset, max));
  for (DirEntry& e : entries) {
    if (e.ino > kInnerMask) return Status::IOErrorWithMessage("past version inode has no number here", EOVERFLOW);
    e.ino = PastInode(r.view, e.ino);
  }
  return entries;
}

Result<DirectoryState> PastVersionsWorkspace::GetDirectoryState(InodeId dir) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(dir));
  if (!r.past()) return inner_.GetDirectoryState(dir);
  if (r.ws == nullptr) return OwnDirState(r.ino);
  STRATA_ASSIGN_OR_RETURN(DirectoryState state, r.ws->GetDirectoryState(r.ino));
  if (r.ino == kRootInode) {
    MutexLock lock(&views_mu_);
    state.parent = views_[r.view - 1].parent;  // the top of a past version sits in .strata/
  } else {
    state.parent = PastInode(r.view, state.parent);
  }
  return state;
}

// ---- data

Result<size_t> PastVersionsWorkspace::Read(InodeId ino, uint64_t offset, size_t size, ReadTarget* out) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (r.ws == nullptr) return Status::IOErrorWithMessage("a directory", EISDIR);
  return r.ws->Read(r.ino, offset, size, out);
}

Result<size_t> PastVersionsWorkspace::Write(InodeId ino, uint64_t offset, std::string_view data) {
  if (IsPast(ino)) return ReadOnly();
  return inner_.Write(ino, offset, data);
}

Status PastVersionsWorkspace::Sync(InodeId ino) {
  if (IsPast(ino)) return Status::Ok();  // nothing of a past version is ever unsaved
  return inner_.Sync(ino);
}

Status PastVersionsWorkspace::Allocate(InodeId ino, int mode, uint64_t offset, uint64_t length) {
  if (IsPast(ino)) return ReadOnly();
  return inner_.Allocate(ino, mode, offset, length);
}

Result<uint64_t> PastVersionsWorkspace::SeekData(InodeId ino, uint64_t offset, int whence) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (r.ws == nullptr) return Status::IOErrorWithMessage("a directory", EISDIR);
  return r.ws->SeekData(r.ino, offset, whence);
}

Result<uint64_t> PastVersionsWorkspace::CopyRange(InodeId in, uint64_t in_offset, InodeId out, uint64_t out_offset,
                                                  uint64_t length) {
  if (IsPast(out)) return ReadOnly();
  // Another workspace's bytes: the kernel copies them through reads and writes instead.
  if (IsPast(in)) return Status::IOErrorWithMessage("copying out of a past version goes by reads", EXDEV);
  return inner_.CopyRange(in, in_offset, out, out_offset, length);
}

// ---- xattrs

Status PastVersionsWorkspace::SetXattr(InodeId ino, std::string_view name, std::string_view value, int flags) {
  if (IsPast(ino)) return ReadOnly();
  return inner_.SetXattr(ino, name, value, flags);
}

Result<std::string> PastVersionsWorkspace::GetXattr(InodeId ino, std::string_view name) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (r.ws == nullptr) return Status::IOErrorWithMessage("no such attribute", ENODATA);
  return r.ws->GetXattr(r.ino, name);
}

Result<std::vector<std::string>> PastVersionsWorkspace::ListXattrs(InodeId ino) {
  STRATA_ASSIGN_OR_RETURN(Route r, RouteOf(ino));
  if (r.ws == nullptr) return std::vector<std::string>();
  return r.ws->ListXattrs(r.ino);
}

Status PastVersionsWorkspace::RemoveXattr(InodeId ino, std::string_view name) {
  if (IsPast(ino)) return ReadOnly();
  return inner_.RemoveXattr(ino, name);
}

// ---- lifetime: the directories of .strata/ live as long as the wrapper,
// so only a past version's own inodes count references.

void PastVersionsWorkspace::Ref(InodeId ino) {
  auto r = RouteOf(ino);
  if (r.ok() && r->ws != nullptr) r->ws->Ref(r->ino);
}

void PastVersionsWorkspace::Unref(InodeId ino, uint64_t count) {
  auto r = RouteOf(ino);
  if (r.ok() && r->ws != nullptr) r->ws->Unref(r->ino, count);
}

bool PastVersionsWorkspace::RefIfCurrent(InodeId ino, uint64_t swaps) {
  if (!IsPast(ino)) return inner_.RefIfCurrent(ino, swaps);
  // A past version is never reset: an answer about it is always current.
  Ref(ino);
  return true;
}

}  // namespace past_internal
}  // namespace strata
