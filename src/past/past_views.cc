// The directories of .strata/ and the past versions in them: finding a
// commit or a branch by name, opening its workspace on first use, listing.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <map>
#include <optional>

#include "past/past_versions_impl.h"
#include "store/revision.h"

namespace strata::past_internal {
namespace {

Status NoSuchDir() { return Status::IOErrorWithMessage("no such directory of .strata/ in this mount", ENOENT); }

Status NotHere(std::string_view name) {
  return Status::IOErrorWithMessage("no past version named '" + std::string(name) + "'", ENOENT);
}

// Store failures reach the kernel as EIO, with the message for the log.
Status AsEio(const Status& s, const std::string& what) {
  if (s.errno_value() != 0) return s;
  return Status::IOErrorWithMessage(what + ": " + s.message(), EIO);
}

bool IsHexPrefix(std::string_view name) {
  if (name.size() < 4 || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ||
                                                                   (c >= 'a' && c <= 'f'); });
}

DirEntry Entry(std::string name, InodeId ino, uint64_t offset, uint32_t type = S_IFDIR) {
  DirEntry e;
  e.name = std::move(name);
  e.ino = ino;
  e.type = type;
  e.offset = offset;
  return e;
}

Status NotADirectory() { return Status::IOErrorWithMessage("a branch of .strata/ is a symlink", ENOTDIR); }

}  // namespace

PastVersionsWorkspace::PastVersionsWorkspace(Workspace& inner, Store& store, PastVersionsOptions options)
    : inner_(inner), store_(store), options_(std::move(options)) {
  MutexLock lock(&views_mu_);
  own_dirs_.push_back({kRootInode, OwnDir::Kind::kTop, ""});
  own_dirs_.push_back({PastInode(0, kTopDir), OwnDir::Kind::kCommits, ""});
  own_dirs_.push_back({PastInode(0, kTopDir), OwnDir::Kind::kBranches, ""});
}

std::optional<OwnDir> PastVersionsWorkspace::OwnDirOf(InodeId which) {
  MutexLock lock(&views_mu_);
  if (which == 0 || which > own_dirs_.size()) return std::nullopt;
  return own_dirs_[which - 1];
}

Result<Attr> PastVersionsWorkspace::OwnDirAttr(InodeId which) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NoSuchDir();
  // Owned and dated as the workspace's top directory; nobody may write.
  STRATA_ASSIGN_OR_RETURN(Attr a, inner_.GetAttr(kRootInode));
  a.ino = PastInode(0, which);
  a.mode = S_IFDIR | 0555;
  a.nlink = 2;
  a.size = 0;
  a.rdev = 0;
  a.blocks = 0;
  if (dir->kind == OwnDir::Kind::kHeadLink) {
    a.mode = S_IFLNK | 0777;
    a.nlink = 1;
    a.size = dir->target.size();
  }
  return a;
}

Result<Hash> PastVersionsWorkspace::CommitNamed(std::string_view name) {
  if (!IsHexPrefix(name)) return NotHere(name);
  auto found = store_.FindCommitsByPrefix(name, 2);
  if (!found.ok()) return AsEio(found.status(), "finding commit " + std::string(name));
  if (found->size() != 1) {
    return Status::IOErrorWithMessage(found->empty() ? "no commit " + std::string(name)
                                                     : "commit prefix " + std::string(name) + " is ambiguous",
                                      ENOENT);
  }
  // A forgotten commit's files are gone from the store (forget.h).
  auto usable = ResolveContentRevision(store_, (*found)[0].ToHex());
  if (!usable.ok()) {
    if (usable.status().code() == Status::Code::kNotFound) return NotHere(name);
    return AsEio(usable.status(), "reading commit " + std::string(name));
  }
  return *usable;
}

Result<Attr> PastVersionsWorkspace::LookupInOwnDir(InodeId which, std::string_view name) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NotHere(name);
  const InodeId here = PastInode(0, which);
  switch (dir->kind) {
    case OwnDir::Kind::kTop:
      if (name == "commits") return OwnDirAttr(kCommitsDir);
      if (name == "branches") return OwnDirAttr(kBranchesDir);
      return NotHere(name);
    case OwnDir::Kind::kCommits: {
      STRATA_ASSIGN_OR_RETURN(Hash commit, CommitNamed(name));
      return ViewRoot(here, name, commit);
    }
    case OwnDir::Kind::kBranches: {
      const std::string full = dir->prefix + std::string(name);
      if (!IsValidRefName(full)) return NotHere(name);
      // The head as it is now: a branch that moved since its last lookup
      // shows its new head (a new past version; the old one stays for
      // whoever still holds it).
      auto head = store_.GetRef(full);
      if (!head.ok()) return AsEio(head.status(), "reading branch " + full);
      if (*head) return OwnDirAttr(HeadLink(here, full, **head));
      auto refs = store_.ListRefs();
      if (!refs.ok()) return AsEio(refs.status(), "listing branches");
      const std::string below = full + "/";
      auto next = refs->lower_bound(below);
      if (next == refs->end() || !next->first.starts_with(below)) return NotHere(name);
      return OwnDirAttr(BranchPrefixDir(here, below));
    }
    case OwnDir::Kind::kHeadLink:
      return NotADirectory();
  }
  return NotHere(name);
}

Result<Attr> PastVersionsWorkspace::ViewRoot(InodeId parent, std::string_view name, const Hash& commit) {
  const std::string key = std::to_string(parent) + "/" + std::string(name) + "@" + commit.ToHex();
  Workspace* ws = nullptr;
  uint32_t view = 0;
  {
    MutexLock lock(&views_mu_);
    if (auto it = view_by_key_.find(key); it != view_by_key_.end()) {
      view = it->second;
    } else {
      if (views_.size() >= std::min(options_.max_views, kViewLimit))
        return Status::IOErrorWithMessage("too many past versions open in this mount (" +
                                              std::to_string(views_.size()) + "); mount it again to close them",
                                          ENFILE);
      // A name left by a killed daemon whose pid this one got: take the next.
      std::string ws_name;
      Status made;
      for (int attempt = 0; attempt < 100; attempt++) {
        ws_name = options_.workspace_name(++workspaces_made_);
        made = Workspace::Create(store_, ws_name, commit, "");
        if (made.code() != Status::Code::kAlreadyExists && made.errno_value() != EEXIST) break;
      }
      if (!made.ok()) return AsEio(made, "opening past version " + commit.ToHex());
      auto opened = Workspace::Open(store_, ws_name);
      if (!opened.ok()) {
        (void)Workspace::Remove(store_, ws_name);
        return AsEio(opened.status(), "opening past version " + commit.ToHex());
      }
      views_.push_back(View{parent, std::string(name), commit, ws_name, std::move(opened).value()});
      view = static_cast<uint32_t>(views_.size());
      view_by_key_[key] = view;
    }
    ws = views_[view - 1].ws.get();
  }
  return Renumbered(ws->GetAttr(kRootInode), view);
}

InodeId PastVersionsWorkspace::BranchPrefixDir(InodeId parent, const std::string& prefix) {
  MutexLock lock(&views_mu_);
  if (auto it = own_by_key_.find(prefix); it != own_by_key_.end()) return it->second;
  own_dirs_.push_back({parent, OwnDir::Kind::kBranches, prefix, ""});
  const InodeId which = own_dirs_.size();
  own_by_key_[prefix] = which;
  return which;
}

InodeId PastVersionsWorkspace::HeadLink(InodeId parent, const std::string& full, const Hash& head) {
  // A branch is a symlink into commits/, so that listing branches/ opens no
  // past version and every branch at one commit shares that commit's.
  const std::string key = full + "@" + head.ToHex();
  MutexLock lock(&views_mu_);
  if (auto it = own_by_key_.find(key); it != own_by_key_.end()) return it->second;
  std::string target;
  for (size_t up = 1 + std::count(full.begin(), full.end(), '/'); up > 0; up--) target += "../";
  own_dirs_.push_back({parent, OwnDir::Kind::kHeadLink, "", target + "commits/" + head.ToHex()});
  const InodeId which = own_dirs_.size();
  own_by_key_[key] = which;
  return which;
}

StaleCaches PastVersionsWorkspace::CachedBranch(const std::string& name) {
  StaleCaches stale;
  const size_t slash = name.rfind('/');
  InodeId dir = kBranchesDir;
  if (slash != std::string::npos) {
    // The kernel can have looked up a/b only through a/, which it got from here.
    MutexLock lock(&views_mu_);
    auto it = own_by_key_.find(name.substr(0, slash + 1));
    if (it == own_by_key_.end()) return stale;
    dir = it->second;
  }
  stale.entries.emplace_back(PastInode(0, dir), name.substr(slash == std::string::npos ? 0 : slash + 1));
  return stale;
}

Result<std::string> PastVersionsWorkspace::OwnLinkTarget(InodeId which) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NoSuchDir();
  if (dir->kind != OwnDir::Kind::kHeadLink) return Status::IOErrorWithMessage("a directory", EINVAL);
  return dir->target;
}

Result<std::vector<std::pair<std::string, Attr>>> PastVersionsWorkspace::BranchEntries(InodeId which) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NoSuchDir();
  auto refs = store_.ListRefs();
  if (!refs.ok()) return AsEio(refs.status(), "listing branches");
  // The next name after the prefix of every branch below: a branch itself,
  // or a directory its name passes through (a branch wins, as in lookups).
  std::map<std::string, std::optional<Hash>> children;
  for (auto it = refs->lower_bound(dir->prefix); it != refs->end() && it->first.starts_with(dir->prefix); ++it) {
    std::string rest = it->first.substr(dir->prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos)
      children[rest] = it->second;
    else
      children.try_emplace(rest.substr(0, slash), std::nullopt);
  }
  std::vector<std::pair<std::string, Attr>> out;
  const InodeId here = PastInode(0, which);
  for (const auto& [name, head] : children) {
    const std::string full = dir->prefix + name;
    Result<Attr> a = OwnDirAttr(head ? HeadLink(here, full, *head) : BranchPrefixDir(here, full + "/"));
    if (!a.ok()) return a.status();
    out.emplace_back(name, *a);
  }
  return out;
}

Result<std::vector<DirEntry>> PastVersionsWorkspace::ListOwnDir(InodeId which, uint64_t offset, size_t max) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NoSuchDir();
  std::vector<DirEntry> all;
  switch (dir->kind) {
    case OwnDir::Kind::kTop:
      all = {Entry("branches", PastInode(0, kBranchesDir), 1), Entry("commits", PastInode(0, kCommitsDir), 2)};
      break;
    case OwnDir::Kind::kCommits:  // found by id only: `strata log` lists them
      break;
    case OwnDir::Kind::kBranches: {
      STRATA_ASSIGN_OR_RETURN(auto entries, BranchEntries(which));
      for (size_t i = 0; i < entries.size(); i++) {
        const Attr& a = entries[i].second;
        all.push_back(Entry(entries[i].first, a.ino, i + 1, a.mode & S_IFMT));
      }
      break;
    }
    case OwnDir::Kind::kHeadLink:
      return NotADirectory();
  }
  std::vector<DirEntry> out;
  for (DirEntry& e : all) {
    if (e.offset <= offset) continue;
    if (out.size() >= max) break;
    out.push_back(std::move(e));
  }
  return out;
}

Result<DirectoryState> PastVersionsWorkspace::OwnDirState(InodeId which) {
  std::optional<OwnDir> dir = OwnDirOf(which);
  if (!dir) return NoSuchDir();
  DirectoryState state;
  state.parent = dir->parent;
  state.changes_unseen = true;  // commits and branches come and go with the store
  switch (dir->kind) {
    case OwnDir::Kind::kTop:
      state.end_offset = 2;
      break;
    case OwnDir::Kind::kCommits:
      state.end_offset = 0;
      break;
    case OwnDir::Kind::kBranches: {
      // A listing shows the branches there were when it started, by
      // position: one created or deleted meanwhile may shift the rest.
      auto refs = store_.ListRefs();
      if (!refs.ok()) return AsEio(refs.status(), "listing branches");
      state.end_offset = refs->size();  // at least as many as there are entries
      break;
    }
    case OwnDir::Kind::kHeadLink:
      return NotADirectory();
  }
  return state;
}

}  // namespace strata::past_internal
