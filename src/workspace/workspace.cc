// Workspace lifetime: Create, Open (with crash recovery), List, Remove.
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <unordered_set>
#include <ctime>
#include <thread>

#include "env/trust.h"
#include "store/forget.h"
#include "store/tree.h"
#include "workspace/sqlite_workspace.h"
#include "workspace/workspace_fsck.h"

namespace strata {

using namespace workspace_internal;

namespace workspace_internal {


Status AsEio(const Status& s, const std::string& context) {
  // Damage stays damage (the file system answers it with EIO all the same),
  // and the message keeps the cause alone: IOError would append
  // strerror(EIO) after it ("No space left on device: Input/output error").
  if ((s.code() == Status::Code::kIOError && s.errno_value() == EIO) || s.IsCorruption())
    return s.WithContext(context);
  return Status::IOErrorWithMessage(context + ": " + s.message(), EIO);
}

Result<std::string> BootId(Env* env) {
  auto id = env->BootId();
  if (!id.ok())
    return id.status().WithContext("cannot tell whether the machine restarted since the workspace was last open");
  return id;
}

Status CheckName(std::string_view name) {
  if (name.size() > 255) return Errno(ENAMETOOLONG, "name longer than 255 bytes");
  if (!IsValidEntryName(name)) return Errno(EINVAL, "invalid name '" + std::string(name) + "'");
  return Status::Ok();
}

}  // namespace workspace_internal

namespace {

// Workspace names may contain '/' (they follow branch names); the state of
// each lives in one directory directly under workspaces/, so '/' is written as
// "%2F" ('%' cannot occur in a valid name, so the mapping is reversible).
std::string EncodeName(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

std::string DecodeName(const std::string& enc) {
  std::string out;
  for (size_t i = 0; i < enc.size(); i++) {
    if (enc.compare(i, 3, "%2F") == 0) {
      out += '/';
      i += 2;
    } else {
      out += enc[i];
    }
  }
  return out;
}

std::string WorkspacesDir(const Store& store) { return store.path() + "/workspaces"; }

Status CheckWorkspaceName(const std::string& name) {
  if (!IsValidRefName(name)) return Status::InvalidArgument("invalid workspace name '" + name + "'");
  const size_t encoded = EncodeName(name).size();
  if (encoded > NAME_MAX)
    return Status::InvalidArgument("workspace name '" + name + "' is too long: its directory name would be " +
                                   std::to_string(encoded) + " bytes, at most " + std::to_string(NAME_MAX) +
                                   " (each '/' takes 3)");
  return Status::Ok();
}

// Writes the schema, meta and root inode of a new workspace into db.
Status InitDatabase(Store& store, NamespaceDb& db, const std::string& name, const std::optional<Hash>& base,
                    const std::string& branch) {
  Transaction txn(db);
  STRATA_RETURN_IF_ERROR(txn.status());
  InodeRow root;
  root.ino = kRootInode;
  root.parent = kRootInode;
  std::optional<std::string> origin;
  std::vector<std::pair<std::string, std::string>> xattrs;
  if (base) {
    STRATA_ASSIGN_OR_RETURN(Commit commit, store.GetCommit(*base));
    const RootMeta& m = commit.root_meta;
    root.mode = S_IFDIR | (m.mode & 07777);
    root.uid = m.uid;
    root.gid = m.gid;
    root.mtime_ns = root.atime_ns = root.ctime_ns = JoinNs(m.mtime_sec, m.mtime_nsec);
    root.nlink = 1;  // not known until loaded (see base_loader.cc)
    root.base_tree = commit.root;
    origin = "";  // base paths are relative to the root
    xattrs = m.xattrs;
    STRATA_RETURN_IF_ERROR(db.SetMeta("base", base->ToHex()));
    STRATA_RETURN_IF_ERROR(db.SetMeta("base_root", commit.root.ToHex()));
  } else {
    root.mode = S_IFDIR | 0755;
    root.uid = ::geteuid();
    root.gid = ::getegid();
    root.mtime_ns = root.atime_ns = root.ctime_ns = NowNs();
    root.nlink = 2;
    root.changed = true;
    STRATA_RETURN_IF_ERROR(db.SetMeta("base", ""));
    STRATA_RETURN_IF_ERROR(db.SetMeta("base_root", ""));
  }
  STRATA_RETURN_IF_ERROR(db.InsertInode(root, "", origin));
  for (const auto& [k, v] : xattrs) STRATA_RETURN_IF_ERROR(db.PutXattr(kRootInode, k, v));
  STRATA_RETURN_IF_ERROR(db.SetMeta("name", name));
  STRATA_RETURN_IF_ERROR(db.SetMeta("branch", branch));
  STRATA_RETURN_IF_ERROR(db.SetMeta("next_ino", EncodeInodeCounter(kRootInode + 1)));
  STRATA_RETURN_IF_ERROR(db.SetMeta("created_ns", std::to_string(NowNs())));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return db.CommitBatch();
}

struct MetaInfo {
  WorkspaceInfo info;
  std::optional<Hash> base_root;
};

Result<MetaInfo> ReadMeta(NamespaceDb& db) {
  MetaInfo m;
  auto get = [&](const char* key) -> Result<std::string> {
    STRATA_ASSIGN_OR_RETURN(auto v, db.GetMeta(key));
    if (!v) return Status::IOError(std::string("workspace database has no ") + key, EIO);
    return *v;
  };
  STRATA_ASSIGN_OR_RETURN(m.info.name, get("name"));
  STRATA_ASSIGN_OR_RETURN(m.info.branch, get("branch"));
  STRATA_ASSIGN_OR_RETURN(std::string base, get("base"));
  STRATA_ASSIGN_OR_RETURN(std::string base_root, get("base_root"));
  // base moves with every commit; base_root stays the root of the first base
  // (empty for a workspace that started empty): base paths are paths in it.
  STRATA_ASSIGN_OR_RETURN(m.info.base, DecodeMetaId(base, "base commit id"));
  STRATA_ASSIGN_OR_RETURN(m.base_root, DecodeMetaId(base_root, "base root id"));
  STRATA_ASSIGN_OR_RETURN(m.info.changed_inodes, db.CountChanged(m.info.base.has_value()));
  return m;
}

}  // namespace

Status Workspace::Create(Store& store, const std::string& name, const std::optional<Hash>& base,
                         const std::string& branch) {
  STRATA_RETURN_IF_ERROR(CheckWorkspaceName(name));
  // From here until the workspace is listed, gc must not delete its base:
  // a workspace's base is one of gc's roots only once it can be listed.
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store.BeginWrite());
  if (base) {
    STRATA_ASSIGN_OR_RETURN(bool stored, store.Contains(*base));
    if (!stored) return Status::NotFound("commit " + base->ToHex() + " is not in the store");
    // Inside the session: `strata forget` records under gc's lock, so either
    // it sees this workspace's base or this sees the commit forgotten.
    STRATA_RETURN_IF_ERROR(CheckNotForgotten(store, *base));
  }
  const std::string root = WorkspacesDir(store);
  const std::string final_dir = root + "/" + EncodeName(name);
  Env* env = store.env();
  STRATA_RETURN_IF_ERROR(env->CreateDir(root));
  STRATA_RETURN_IF_ERROR(CheckTrustedDirInside(store.path(), "workspaces", "workspaces directory"));
  if (env->Exists(final_dir)) return Status::AlreadyExists("workspace '" + name + "' exists");
  // Built under a temporary name and renamed into place, so a crash never
  // leaves a half-created workspace under its real name.
  const std::string tmp = root + "/.new-" + EncodeName(name) + "-" + std::to_string(::getpid());
  // One left by a process of this pid that died while creating it.
  STRATA_RETURN_IF_ERROR(env->RemoveTree(tmp));
  STRATA_RETURN_IF_ERROR(env->CreateDir(tmp));
  Status s = env->CreateDir(tmp + "/data");
  if (s.ok()) {
    auto db = NamespaceDb::Open(tmp + "/workspace.db", true);
    s = db.ok() ? InitDatabase(store, **db, name, base, branch) : db.status();
  }
  // The database is closed here: SQLite checkpoints the WAL into the main
  // file (unsynced, NamespaceDb::Open), and this sync makes it durable. A WAL
  // left by a checkpoint that could not finish holds part of it: synced too.
  if (s.ok()) s = env->SyncFile(tmp + "/workspace.db");
  if (s.ok() && env->Exists(tmp + "/workspace.db-wal")) s = env->SyncFile(tmp + "/workspace.db-wal");
  if (s.ok()) s = env->SyncDir(tmp + "/data");
  if (s.ok()) s = env->SyncDir(tmp);
  bool placed = false;
  if (s.ok()) {
    s = env->RenameNoReplace(tmp, final_dir);
    placed = s.ok();
    if (s.code() == Status::Code::kAlreadyExists) s = Status::AlreadyExists("workspace '" + name + "' exists");
  }
  if (s.ok()) s = env->SyncDir(root);
  if (!s.ok()) {
    // Not created: what was built goes, also from its real name when the
    // rename got it there without making that durable. A leftover under the
    // temporary name is removed by the next Create of this name by a
    // process of this pid.
    Status removed = placed ? env->RenameNoReplace(final_dir, tmp) : Status::Ok();
    if (removed.ok()) removed = env->RemoveTree(tmp);
    if (!removed.ok()) std::fprintf(stderr, "strata: %s\n", removed.message().c_str());
  }
  return s;
}

Result<std::unique_ptr<Workspace>> Workspace::Open(Store& store, const std::string& name) {
  STRATA_RETURN_IF_ERROR(CheckWorkspaceName(name));
  const std::string dir = WorkspacesDir(store) + "/" + EncodeName(name);
  if (!store.env()->Exists(dir + "/workspace.db"))
    return Status::NotFound("workspace '" + name + "' does not exist");
  STRATA_RETURN_IF_ERROR(CheckStateDir(store, name));
  // Two daemons on one workspace would corrupt each other's data files.
  auto lock = store.env()->LockFile(dir + "/lock", LockMode::kExclusive, false);
  if (!lock.ok()) {
    if (lock.status().code() == Status::Code::kConflict)
      return Status::IOError("workspace '" + name + "' is open elsewhere", EBUSY);
    return lock.status();
  }
  STRATA_ASSIGN_OR_RETURN(auto db, NamespaceDb::Open(dir + "/workspace.db", false));
  STRATA_ASSIGN_OR_RETURN(MetaInfo meta, ReadMeta(*db));
  auto ws = std::make_unique<SqliteWorkspace>(store, dir, meta.info, meta.base_root, std::move(db), std::move(*lock));
  STRATA_RETURN_IF_ERROR(ws->Recover());
  return std::unique_ptr<Workspace>(std::move(ws));
}

Result<std::vector<WorkspaceInfo>> Workspace::List(Store& store) {
  std::vector<WorkspaceInfo> out;
  const std::string root = WorkspacesDir(store);
  Env* env = store.env();
  if (!env->Exists(root)) return out;
  auto listed = env->ListDir(root);
  if (!listed.ok()) return listed.status().WithContext("listing the workspaces");
  std::vector<std::string> names;
  for (std::string& n : *listed)
    if (!n.empty() && n[0] != '.') names.push_back(std::move(n));  // dot names are workspaces being created
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    // Remove renames a workspace's directory away before deleting it, so a
    // database that fails to open or read under a name that is gone now was
    // removed since the directory was listed: it is no longer a workspace.
    auto gone = [&] { return !env->Exists(root + "/" + n); };
    auto db = NamespaceDb::Open(root + "/" + n + "/workspace.db", false);
    if (!db.ok() && gone()) continue;
    if (!db.ok()) return db.status();
    auto meta = ReadMeta(**db);
    if (!meta.ok() && gone()) continue;
    if (!meta.ok()) return meta.status();
    const MetaInfo& m = *meta;
    if (m.info.name != DecodeName(n))
      return Status::IOError("workspace directory " + n + " holds workspace '" + m.info.name + "'", EIO);
    out.push_back(m.info);
  }
  return out;
}

Result<Workspace::StoreRefs> Workspace::References(Store& store, const std::string& name) {
  STRATA_RETURN_IF_ERROR(CheckWorkspaceName(name));
  const std::string path = WorkspacesDir(store) + "/" + EncodeName(name) + "/workspace.db";
  STRATA_ASSIGN_OR_RETURN(auto db, NamespaceDb::Open(path, false));
  STRATA_ASSIGN_OR_RETURN(MetaInfo m, ReadMeta(*db));
  StoreRefs refs;
  refs.base = m.info.base;
  if (m.base_root) refs.trees.push_back(*m.base_root);
  std::vector<std::string> lists;
  STRATA_RETURN_IF_ERROR(db->StoreReferences(&refs.trees, &lists));
  for (const std::string& list : lists) {
    STRATA_ASSIGN_OR_RETURN(auto chunks, DecodeChunkList(list));
    for (const ChunkRef& c : chunks) refs.chunks.push_back(c.id);
  }
  return refs;
}

Result<std::vector<std::string>> CheckWorkspaceDataFiles(Store& store, const std::string& name) {
  STRATA_RETURN_IF_ERROR(CheckWorkspaceName(name));
  const std::string dir = WorkspacesDir(store) + "/" + EncodeName(name);
  STRATA_ASSIGN_OR_RETURN(auto db, NamespaceDb::Open(dir + "/workspace.db", false));
  std::vector<std::string> problems;
  STRATA_ASSIGN_OR_RETURN(auto last_boot, db->GetMeta("boot_id"));
  STRATA_ASSIGN_OR_RETURN(const std::string boot, BootId(store.env()));
  // Since a restart, short files may be a power cut's: the next open fills them in.
  if (!last_boot || *last_boot != boot) return problems;
  Status opened;
  std::unique_ptr<Directory> data = FileData::OpenDirectory(store.env(), dir + "/data", &opened);
  if (!opened.ok()) return std::vector<std::string>{opened.message()};
  STRATA_ASSIGN_OR_RETURN(auto lengths, db->DataFileLengths());
  for (const auto& [ino, length] : lengths) {
    Status s = FileData::CheckLengthAt(data.get(), dir + "/data", ino, length);
    if (!s.ok()) problems.push_back(s.message());
  }
  return problems;
}

Status Workspace::Remove(Store& store, const std::string& name) {
  STRATA_RETURN_IF_ERROR(CheckWorkspaceName(name));
  const std::string dir = WorkspacesDir(store) + "/" + EncodeName(name);
  if (!store.env()->Exists(dir)) return Status::NotFound("workspace '" + name + "' does not exist");
  // Held until the workspace is gone from its name: an Open between the
  // check and the rename would otherwise have its files deleted under it.
  auto lock = store.env()->LockFile(dir + "/lock", LockMode::kExclusive, false);
  if (!lock.ok() && lock.status().code() == Status::Code::kConflict)
    return Status::IOError("workspace '" + name + "' is open", EBUSY);
  // Renamed away first so that a crash in the middle of the deletion never
  // leaves a half-deleted workspace under its name.
  const std::string doomed = WorkspacesDir(store) + "/.removing-" + EncodeName(name) + "-" + std::to_string(::getpid());
  // One left by an earlier removal of this name in a process of this pid
  // that failed halfway would be in the way of the rename.
  STRATA_RETURN_IF_ERROR(store.env()->RemoveTree(doomed));
  STRATA_RETURN_IF_ERROR(store.env()->Rename(dir, doomed));
  // From here the workspace is gone whatever happens: what a failure leaves
  // under the doomed name is nobody's any more. A listing that opened the
  // database just before the rename may still add SQLite's side files
  // (-wal, -shm) while the tree is deleted, and drops them when it closes:
  // a directory found not empty is tried again a few times.
  Status s;
  for (int attempt = 0; attempt < 20; ++attempt) {
    s = store.env()->RemoveTree(doomed);
    if (s.ok() || s.errno_value() != ENOTEMPTY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return s.WithContext("workspace '" + name + "' was removed, but not all of its files");
}

namespace workspace_internal {

SqliteWorkspace::SqliteWorkspace(Store& store, std::string dir, WorkspaceInfo info, std::optional<Hash> base_root,
                                 std::unique_ptr<NamespaceDb> db, std::unique_ptr<FileLock> lock)
    : store_(store),
      dir_(std::move(dir)),
      info_(std::move(info)),
      base_root_(base_root),
      db_(std::move(db)),
      files_(store.env(), dir_ + "/data", store, ChunkCache::Shared()),
      reserve_(store.env(), dir_ + "/reserve"),
      lock_(std::move(lock)) {
  // Best effort: on a disk already full, RoomForData keeps the room instead,
  // and each operation commits before it answers (space_reserve.h).
  db_->SetCommitEachOperation(!reserve_.Take());
  // Lists a commit kept by reference to its tree (NamespaceDb::SetBaseChunksRef).
  db_->SetListResolver([this](const Hash& tree, std::string_view name) -> Result<std::string> {
    auto read = store_.GetTree(tree);
    if (!read.ok()) return AsEio(read.status(), "reading tree " + tree.ToHex() + " for a base chunk list");
    const TreeEntry* e = read->Find(name);
    if (e == nullptr || e->kind != EntryKind::kFile)
      return Status::IOError("tree " + tree.ToHex() + " holds no file '" + std::string(name) +
                                 "', whose chunk list the workspace names", EIO);
    return EncodeChunkList(e->chunks);
  });
  // Called by db_ when an operation opens a batch, so with mu_ held.
  db_->OnBatchOpened([this]() REQUIRES(mu_) {
    // An operation that will commit its own batch needs the room as a
    // group's commit does: the reserve may have been taken again since
    // (RoomForData, once there was room) and the disk filled meanwhile.
    if (db_->commit_each_operation() && reserve_.MakeRoomForCommit())
      std::fprintf(stderr, "strata: workspace %s: the disk is nearly full; released the space reserve for the database\n",
                   info_.name.c_str());
    commit_cv_.NotifyOne();
  });
  committer_ = std::thread([this] { CommitLoop(); });
}

SqliteWorkspace::~SqliteWorkspace() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  commit_cv_.NotifyOne();
  committer_.join();
  {
    MutexLock lock(&mu_);
    if (Status s = CommitPending(); !s.ok())
      std::fprintf(stderr, "strata: workspace %s: last commit failed: %s\n", info_.name.c_str(), s.message().c_str());
  }
  db_.reset();    // close the database before letting another process in
  lock_.reset();  // releases the flock
}

bool SqliteWorkspace::HasCommitWork() {
  return stopping_ || db_->HasBatch() || !doomed_files_.empty() || !shrunk_files_.empty();
}

bool SqliteWorkspace::WaitForStop(std::chrono::steady_clock::duration limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!stopping_ && commit_cv_.WaitUntil(&mu_, until)) {
  }
  return stopping_;
}

void SqliteWorkspace::CommitLoop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (db_->commit_each_operation()) {
      // Operations commit themselves (a nearly full disk): no batch opens, so
      // it looks every kCommitDelay for the data files they released or
      // shortened, whose space is what the user is after.
      const auto until = std::chrono::steady_clock::now() + kCommitDelay;
      while (!HasCommitWork() && commit_cv_.WaitUntil(&mu_, until)) {
      }
      if (!HasCommitWork()) continue;
    } else {
      while (!HasCommitWork()) commit_cv_.Wait(&mu_);
    }
    // Let operations gather while they keep coming: one commit serves all
    // of them. A pause ends the batch, so that a lone change is not left
    // uncommitted for the whole delay.
    const auto deadline = std::chrono::steady_clock::now() + kCommitDelay;
    uint64_t seen = db_->BatchOperations();
    bool stop = false;
    while (!(stop = WaitForStop(kCommitPause))) {
      const uint64_t now_seen = db_->BatchOperations();
      if (now_seen == seen || std::chrono::steady_clock::now() >= deadline) break;
      seen = now_seen;
    }
    if (stop) break;
    if (Status s = CommitPending(); !s.ok()) {
      std::fprintf(stderr, "strata: workspace %s: commit failed: %s\n", info_.name.c_str(), s.message().c_str());
      // Retried at the next batch; back off so a full disk is not hammered.
      WaitForStop(kCommitDelay * 10);
    }
    if (db_->WalPages() >= kCheckpointPages) {
      // Copying the WAL into the database file runs beside the operations
      // (CheckpointAside is for one caller at a time: this thread)...
      NamespaceDb* const db = db_.get();
      const std::string name = info_.name;
      lock.Unlock();
      if (Status s = db->CheckpointAside(); !s.ok())
        std::fprintf(stderr, "strata: workspace %s: %s\n", name.c_str(), s.message().c_str());
      lock.Lock();
      // ...but it always lags the batch that was open meanwhile, and the WAL
      // starts over only once all of it is copied. When it has grown anyway,
      // the little that is left is copied here, between two batches.
      // Not while a commit captures: its rebase would wait for the lock.
      if (db_->WalPages() >= 4 * kCheckpointPages && !db_->HasBatch() && !capture_active_) {
        if (Status s = db_->CheckpointHere(); !s.ok())
          std::fprintf(stderr, "strata: workspace %s: %s\n", info_.name.c_str(), s.message().c_str());
      }
    }
  }
}

namespace {
constexpr size_t kReleasedAtOnce = 64;
}  // namespace

Status SqliteWorkspace::CommitPending() {
  if (!db_->HasBatch() && doomed_files_.empty() && shrunk_files_.empty()) return Status::Ok();
  const auto start = std::chrono::steady_clock::now();
  uint64_t operations = 0;
  ForgetLostDeletions();
  // A commit that finds no room is rolled back whole by SQLite, so the room
  // must be there before it starts: on a nearly full disk, the reserve goes.
  if (db_->HasBatch() && reserve_.MakeRoomForCommit()) {
    std::fprintf(stderr, "strata: workspace %s: the disk is nearly full; released the space reserve for the database\n",
                 info_.name.c_str());
  }
  Status committed = db_->CommitBatch(&operations);
  // Still open (SQLite kept the batch): one more try with the reserve's room.
  if (!committed.ok() && db_->HasBatch() && committed.errno_value() == ENOSPC && reserve_.Release()) {
    std::fprintf(stderr, "strata: workspace %s: database commit failed (%s); released the space reserve\n",
                 info_.name.c_str(), committed.message().c_str());
    committed = db_->CommitBatch(&operations);
  }
  if (!committed.ok()) {
    if (!db_->HasBatch()) {
      std::fprintf(stderr, "strata: workspace %s: the database rolled back a batch of operations: %s\n",
                   info_.name.c_str(), committed.message().c_str());
    }
    ForgetLostDeletions();
    SetSpaceMode();
    return committed;
  }
  const uint64_t us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  counters_.batches_committed++;
  counters_.operations_committed += operations;
  counters_.commit_us_total += us;
  counters_.commit_us_max = std::max(counters_.commit_us_max, us);
  // A commit capturing files may still read data files: cleaning up waits.
  if (capture_active_) return Status::Ok();
  // The batch must be durable before the data files it released go: after a
  // power cut that lost it, its inodes would be back, their bytes not.
  if (!doomed_files_.empty() || !shrunk_files_.empty()) {
    if (Status synced = SyncWal(); !synced.ok()) {
      // They stay listed and go after a later batch whose sync works.
      std::fprintf(stderr, "strata: workspace %s: released data files kept for now: %s\n", info_.name.c_str(),
                   synced.ToString().c_str());
      return Status::Ok();
    }
  }
  // A few names go at once, as a deleted file's should. Thousands (every file
  // a commit captured, an rm -rf) are left to the release thread: a rename
  // each would hold this lock for seconds (FileData::RemoveLater).
  const bool later = doomed_files_.size() > kReleasedAtOnce;
  for (InodeId ino : doomed_files_) {
    if (later) {
      files_.RemoveLater(ino);
    } else {
      files_.Remove(ino);
    }
    shrunk_files_.erase(ino);
  }
  doomed_files_.clear();
  for (InodeId ino : shrunk_files_) {
    // Bytes past the last committed extent are referred to by nothing.
    auto extents = db_->Extents(ino, 0, static_cast<uint64_t>(INT64_MAX));
    if (extents.ok()) (void)files_.Truncate(ino, extents->empty() ? 0 : extents->back().end);
  }
  shrunk_files_.clear();
  reserve_.Replenish();  // once deletions made room again
  SetSpaceMode();
  return Status::Ok();
}

void SqliteWorkspace::SetSpaceMode() {
  // Only between batches: an open one holds operations already answered.
  if (db_->HasBatch()) return;
  const bool low = !reserve_.held();
  if (low != db_->commit_each_operation())
    std::fprintf(stderr, "strata: workspace %s: %s\n", info_.name.c_str(),
                 low ? "little space left: each operation now commits before it answers"
                     : "space again: operations are committed in groups again");
  db_->SetCommitEachOperation(low);
}

void SqliteWorkspace::ForgetLostDeletions() {
  if (db_->lost_batches() == lost_batches_seen_) return;
  lost_batches_seen_ = db_->lost_batches();
  // The data files of inodes a lost batch deleted (or rebased) must stay:
  // the inodes are back. Only those whose row is gone in the batch open now
  // are still to be removed once it commits. (A file rebased in that batch
  // keeps its data file: unreferenced bytes, never wrong ones.)
  std::vector<InodeId> still;
  for (InodeId ino : doomed_files_) {
    auto row = db_->GetInode(ino);
    if (row.ok() && !*row) still.push_back(ino);
  }
  doomed_files_ = std::move(still);
  // Files without names that nobody holds any more were deleted by the lost
  // batch (the kernel forgot them): deleted again, so their space comes back
  // with the next commit instead of at the next Open.
  auto orphans = db_->InodesWithoutLinks();
  if (!orphans.ok()) return;
  for (InodeId ino : *orphans) {
    if (refs_.count(ino) != 0) continue;
    Transaction txn(*db_);
    if (txn.status().ok() && db_->DeleteInode(ino).ok() && txn.Commit().ok()) doomed_files_.push_back(ino);
  }
}

Status SqliteWorkspace::RepairAfterRestart() {
  STRATA_ASSIGN_OR_RETURN(const std::string boot, BootId(store_.env()));
  STRATA_ASSIGN_OR_RETURN(auto last_boot, db_->GetMeta("boot_id"));
  if (last_boot && *last_boot == boot) return Status::Ok();
  // The machine stopped since this workspace was last open: a power cut
  // takes the bytes of data files that nobody synced (the WAL may hold their
  // extents, synced for another file). Those read as zeros, as a local
  // filesystem's unsynced bytes may, and the next commit records zeros.
  // Within one boot the kernel keeps every written byte, so a data file
  // short of its extents then is damage (file_data.h).
  STRATA_ASSIGN_OR_RETURN(auto lengths, db_->DataFileLengths());
  for (const auto& [ino, length] : lengths) {
    Status s = files_.CheckLength(ino, length);
    if (s.ok() || s.code() != Status::Code::kCorruption) continue;
    std::fprintf(stderr, "strata: workspace %s: after a restart: %s; the bytes it lacks read as zeros\n",
                 info_.name.c_str(), s.message().c_str());
    STRATA_RETURN_IF_ERROR(files_.Extend(ino, length));
  }
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  STRATA_RETURN_IF_ERROR(db_->SetMeta("boot_id", boot));
  STRATA_RETURN_IF_ERROR(txn.Commit());
  return CommitPending();
}

Status SqliteWorkspace::Recover() {
  MutexLock lock(&mu_);
  STRATA_RETURN_IF_ERROR(files_.directory_status());
  STRATA_RETURN_IF_ERROR(RepairAfterRestart());
  // Before the data files no extent names are dropped below: a synced
  // writer's file may have none yet.
  STRATA_RETURN_IF_ERROR(RecoverSyncedWriters());
  STRATA_ASSIGN_OR_RETURN(auto orphans, db_->InodesWithoutLinks());
  if (!orphans.empty()) {
    Transaction txn(*db_);
    STRATA_RETURN_IF_ERROR(txn.status());
    for (InodeId ino : orphans) STRATA_RETURN_IF_ERROR(db_->DeleteInode(ino));
    STRATA_RETURN_IF_ERROR(txn.Commit());
    doomed_files_.insert(doomed_files_.end(), orphans.begin(), orphans.end());
    STRATA_RETURN_IF_ERROR(CommitPending());
  }
  // Data files that no extent names: the crash came between the transaction
  // that deleted the inode, or committed the file, and the removal of its
  // data file (FileData::RemoveLater leaves it a while). None of their bytes
  // is ever read, and a file written again must start from an empty one.
  // Collected first: deleting while a directory is being read may skip entries.
  STRATA_ASSIGN_OR_RETURN(auto files, files_.ListFiles());
  STRATA_ASSIGN_OR_RETURN(auto lengths, db_->DataFileLengths());
  std::unordered_set<InodeId> named;
  for (const auto& [ino, length] : lengths) named.insert(ino);
  for (InodeId ino : files)
    if (!named.count(ino)) files_.Remove(ino);
  return RecoverCommit();
}

WorkspaceCounters SqliteWorkspace::Counters() {
  WorkspaceCounters c;
  {
    MutexLock lock(&mu_);
    c = counters_;
    auto changed = db_->CountChanged(info_.base.has_value());
    if (changed.ok()) c.changed_paths = *changed;
  }
  c.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  c.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  c.data_files_to_delete = files_.RemovalsPending();
  ChunkCache::Counters cache = files_.chunk_cache().counters();
  c.chunk_cache_hits = cache.hits;
  c.chunk_cache_misses = cache.misses;
  c.chunk_cache_waits = cache.waits;
  c.read_path.demands = cache.demands;
  c.read_path.fetches = cache.fetches;
  c.read_path.fetch_errors = cache.fetch_errors;
  c.read_path.fetches_in_flight_max = cache.fetches_in_flight_max;
  c.read_path.readahead_issued = cache.readahead_issued;
  c.read_path.readahead_used = cache.readahead_used;
  c.read_path.readahead_wasted = cache.readahead_wasted;
  c.read_path.readahead_skipped = cache.readahead_skipped;
  c.read_path.cache_bytes = cache.bytes;
  c.read_path.cache_capacity = files_.chunk_cache().capacity();
  c.read_path.store = store_.ReadCounters();
  return c;
}

WorkspaceInfo SqliteWorkspace::Info() {
  MutexLock lock(&mu_);
  WorkspaceInfo info = info_;
  auto changed = db_->CountChanged(info.base.has_value());
  if (changed.ok()) info.changed_inodes = *changed;
  return info;
}

}  // namespace workspace_internal
std::string Workspace::StateDir(const Store& store, const std::string& name) {
  return WorkspacesDir(store) + "/" + EncodeName(name);
}

Status Workspace::CheckStateDir(const Store& store, const std::string& name) {
  const std::string rel = "workspaces/" + EncodeName(name);
  STRATA_RETURN_IF_ERROR(CheckTrustedDirInside(store.path(), rel, "workspace"));
  STRATA_RETURN_IF_ERROR(CheckNoLinkInside(store.path(), rel + "/workspace.db"));
  return CheckTrustedDirInside(store.path(), rel + "/data", "workspace");
}

}  // namespace strata
