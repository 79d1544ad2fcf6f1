// The workspace with `.strata/` added (past_versions.h), private to src/past/.
//
// past_versions.cc routes every call by inode number (past_inodes.h) to the
// wrapped workspace, to a past version's workspace, or to the directories of
// .strata/ itself; past_views.cc finds and opens the past versions and lists
// those directories.
//
// Lock order: views_mu_ only; it is never held across a call into a view's
// workspace or the wrapped one, except while a view is being opened (which
// calls only the store and the new workspace).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "past/past_inodes.h"
#include "past/past_versions.h"
#include "util/mutex.h"
#include "workspace/direct_access.h"

namespace strata::past_internal {

// One past version: a workspace on a commit, shown in `parent` as `name`.
struct View {
  InodeId parent = 0;  // a directory of .strata/ (view 0)
  std::string name;
  Hash commit;
  std::string workspace;  // its name in the store, removed at the end
  std::unique_ptr<Workspace> ws;
};

// An entry of .strata/ itself: a directory, or the symlink a branch is.
struct OwnDir {
  InodeId parent = 0;  // kRootInode for .strata, else one of view 0
  enum class Kind { kTop, kCommits, kBranches, kHeadLink } kind = Kind::kTop;
  std::string prefix;  // kBranches: the branch names below it start with this ("" or "a/b/")
  std::string target;  // kHeadLink: "../commits/<head>", with a "../" more per '/' in the branch name
};

// Where an inode number leads.
struct Route {
  Workspace* ws = nullptr;  // null: a directory of .strata/ itself
  InodeId ino = 0;          // the number in ws (or which directory of view 0)
  uint32_t view = 0;        // 0: the wrapped workspace or .strata/ itself
  bool past() const { return view != 0 || ws == nullptr; }
};

class PastVersionsWorkspace final : public PastVersions, public DirectAccess {
 public:
  PastVersionsWorkspace(Workspace& inner, Store& store, PastVersionsOptions options);
  ~PastVersionsWorkspace() override;  // removes the past versions' workspaces

  WorkspaceInfo Info() override { return inner_.Info(); }
  WorkspaceCounters Counters() override { return inner_.Counters(); }
  using Workspace::Commit;
  Result<CommitOutcome> Commit(const CommitRequest& r, CommitProgress* progress) override {
    return inner_.Commit(r, progress);
  }
  Result<WorkspaceSnapshot> Snapshot() override { return inner_.Snapshot(); }
  Result<ResetOutcome> Reset(const ResetRequest& r) override { return inner_.Reset(r); }
  Result<RebaseOutcome> RebaseOnto(const Hash& c, const ConflictChoices& choices) override {
    return inner_.RebaseOnto(c, choices);
  }

  Result<Attr> Lookup(InodeId parent, std::string_view name) override;
  Result<Attr> GetAttr(InodeId ino) override;
  Result<Attr> SetAttr(InodeId ino, const SetAttrRequest& req) override;
  Status NoteRead(InodeId ino, AtimeRule rule) override;
  Result<Attr> MakeNode(InodeId parent, std::string_view name, uint32_t mode, uint64_t rdev,
                        const Credentials& who) override;
  Result<Attr> MakeDirectory(InodeId parent, std::string_view name, uint32_t mode, const Credentials& who) override;
  Result<Attr> MakeSymlink(InodeId parent, std::string_view name, std::string_view target,
                           const Credentials& who) override;
  Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Status Unlink(InodeId parent, std::string_view name) override;
  Status RemoveDirectory(InodeId parent, std::string_view name) override;
  Status Rename(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                unsigned flags) override;
  Status RenameLeavingWhiteout(InodeId parent, std::string_view name, InodeId new_parent, std::string_view new_name,
                               unsigned flags, const Credentials& who) override;
  Result<std::vector<DirEntry>> ReadDirectory(InodeId dir, uint64_t offset, size_t max) override;
  Result<DirectoryState> GetDirectoryState(InodeId dir) override;

  using Workspace::Read;
  Result<size_t> Read(InodeId ino, uint64_t offset, size_t size, ReadTarget* out) override;
  Result<size_t> Write(InodeId ino, uint64_t offset, std::string_view data) override;
  bool WritesMayWait() const override { return inner_.WritesMayWait(); }
  Status Sync(InodeId ino) override;
  Status Allocate(InodeId ino, int mode, uint64_t offset, uint64_t length) override;
  Result<uint64_t> SeekData(InodeId ino, uint64_t offset, int whence) override;
  Result<uint64_t> CopyRange(InodeId in, uint64_t in_offset, InodeId out, uint64_t out_offset,
                             uint64_t length) override;

  Status SetXattr(InodeId ino, std::string_view name, std::string_view value, int flags) override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Result<std::vector<std::string>> ListXattrs(InodeId ino) override;
  Status RemoveXattr(InodeId ino, std::string_view name) override;

  void Ref(InodeId ino) override;
  void Unref(InodeId ino, uint64_t count) override;
  uint64_t ContentSwaps() override { return inner_.ContentSwaps(); }
  bool RefIfCurrent(InodeId ino, uint64_t swaps) override;
  std::vector<InodeId> HeldFiles() override { return inner_.HeldFiles(); }
  // A past version's files are the store's: never handed to the kernel.
  Result<int> OpenDirect(InodeId ino, bool write, bool synced_writes) override {
    DirectAccess* inner = DirectAccessOf(inner_);
    if (past_internal::IsPast(ino) || inner == nullptr) return Status::Unsupported("a past version's file");
    return inner->OpenDirect(ino, write, synced_writes);
  }
  void CloseDirect(InodeId ino, bool write) override {
    if (DirectAccess* inner = DirectAccessOf(inner_); inner != nullptr && !past_internal::IsPast(ino))
      inner->CloseDirect(ino, write);
  }
  // The workspace's own files keep their numbers and names under this view.
  void SetWriteHold(DirectWriteHold* hold) override {
    if (DirectAccess* inner = DirectAccessOf(inner_); inner != nullptr) inner->SetWriteHold(hold);
  }
  void FollowDataFileAtime() override {
    if (DirectAccess* inner = DirectAccessOf(inner_); inner != nullptr) inner->FollowDataFileAtime();
  }

  StaleCaches CachedBranch(const std::string& name) override;

 private:
  // ---- routing (past_versions.cc)
  // ENOENT for a number of .strata/ that names nothing (a view of an earlier mount).
  Result<Route> RouteOf(InodeId ino);
  // An attribute of a past version's workspace in this mount's numbers.
  static Result<Attr> Renumbered(Result<Attr> a, uint32_t view);
  // Whether (parent, name) is the `.strata` shown at the root: the view is
  // shown and the wrapped workspace has no entry of that name.
  bool IsShownName(InodeId parent, std::string_view name);
  // EROFS when a change to (parent, name) would change .strata/ or a past
  // version; OK when it is the wrapped workspace's to make.
  Status RefuseChangeOf(InodeId parent, std::string_view name);

  // ---- .strata/ itself (past_views.cc)
  Result<Attr> OwnDirAttr(InodeId which);
  Result<std::string> OwnLinkTarget(InodeId which);
  Result<Attr> LookupInOwnDir(InodeId which, std::string_view name);
  Result<std::vector<DirEntry>> ListOwnDir(InodeId which, uint64_t offset, size_t max);
  Result<DirectoryState> OwnDirState(InodeId which);
  // The entries of a branches directory: (name, attr) sorted by name.
  Result<std::vector<std::pair<std::string, Attr>>> BranchEntries(InodeId which);
  // The past version of `commit` shown in `parent` as `name`, opened on first use.
  Result<Attr> ViewRoot(InodeId parent, std::string_view name, const Hash& commit);
  // The directory of view 0 for branch names starting with prefix, made on first use.
  InodeId BranchPrefixDir(InodeId parent, const std::string& prefix);
  // The symlink of view 0 for branch `full` at `head`, made on first use: a
  // branch that moves gets a new one (a symlink's target never changes).
  InodeId HeadLink(InodeId parent, const std::string& full, const Hash& head);
  std::optional<OwnDir> OwnDirOf(InodeId which);
  Result<Hash> CommitNamed(std::string_view name);

  Workspace& inner_;
  Store& store_;
  const PastVersionsOptions options_;
  Mutex views_mu_;
  // views_[n - 1] is view n; never shrinks while the wrapper lives, so a
  // Workspace* taken from it stays valid without the lock.
  std::deque<View> views_ GUARDED_BY(views_mu_);
  std::map<std::string, uint32_t> view_by_key_ GUARDED_BY(views_mu_);  // "parent/name@commit"
  std::vector<OwnDir> own_dirs_ GUARDED_BY(views_mu_);                // own_dirs_[i] is inner number i + 1
  // "prefix/" -> its directory; "name@head" -> its symlink.
  std::map<std::string, InodeId> own_by_key_ GUARDED_BY(views_mu_);
  uint64_t workspaces_made_ GUARDED_BY(views_mu_) = 0;
};

}  // namespace strata::past_internal
