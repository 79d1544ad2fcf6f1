// The cut of a commit (phase 1 of SqliteWorkspace::Commit, see commit_ops.cc):
// under the workspace lock, find the directories to write and copy out
// everything their trees need, with a read plan for each changed file.
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "util/time_ns.h"
#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

namespace {

// Paths compared name by name: the order in which a sorted walk meets them.
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

}  // namespace

Result<std::string> SqliteWorkspace::PathOfDirectory(InodeId dir, std::map<InodeId, std::string>& cache) {
  std::vector<std::string> names;
  InodeId at = dir;
  for (int depth = 0; at != kRootInode; depth++) {
    if (auto it = cache.find(at); it != cache.end()) {
      names.push_back(it->second);
      break;
    }
    if (depth > 4096) return Status::IOError("workspace: directory chain too deep", EIO);
    STRATA_ASSIGN_OR_RETURN(auto links, db_->NamesOf(at));
    if (links.empty()) return Status::IOError("workspace: directory " + std::to_string(at) + " has no name", EIO);
    names.push_back(links.front().second);
    at = links.front().first;
  }
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) path = Join(path, *it);
  cache[dir] = path;
  return path;
}

std::vector<InodeId> SqliteWorkspace::HeldFiles() {
  MutexLock lock(&mu_);
  std::vector<InodeId> out;
  for (const auto& [ino, count] : refs_) {
    auto row = db_->GetInode(ino);
    // An inode that cannot be read is left out: the cut reports it if it matters.
    if (row.ok() && *row && S_ISREG((*row)->mode)) out.push_back(ino);
  }
  return out;
}

Status SqliteWorkspace::TakeCut(CommitPlan& plan) {
  // The walk reads a few rows per entry of every directory it writes (about
  // 700 statements for one change in a directory of 257 names): inside one
  // transaction, not one each.
  STRATA_RETURN_IF_ERROR(db_->OpenBatch());
  STRATA_ASSIGN_OR_RETURN(plan.changed, db_->ChangedInodes());
  if (plan.changed.empty()) return Status::Ok();
  std::vector<InodeId> queue;
  auto add_with_ancestors = [&](InodeId dir) REQUIRES(mu_) -> Status {
    while (plan.dirs.emplace(dir, CommitPlan::Dir{}).second) {
      queue.push_back(dir);
      if (dir == kRootInode) break;
      STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(dir));
      dir = row.parent;
    }
    return Status::Ok();
  };
  auto add_parents_of = [&](InodeId ino) REQUIRES(mu_) -> Status {
    STRATA_ASSIGN_OR_RETURN(auto names, db_->NamesOf(ino));
    for (const auto& [parent, name] : names) STRATA_RETURN_IF_ERROR(add_with_ancestors(parent));
    return Status::Ok();
  };
  for (InodeId ino : plan.changed) {
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    if (row.nlink == 0) continue;  // unlinked, still open: in no tree
    STRATA_RETURN_IF_ERROR(S_ISDIR(row.mode) ? add_with_ancestors(ino) : add_parents_of(ino));
  }
  plan.stats.changed_inodes = plan.changed.size();

  std::set<InodeId> linked;  // non-directories with several names
  while (!queue.empty()) {
    const InodeId dir = queue.back();
    queue.pop_back();
    STRATA_ASSIGN_OR_RETURN(InodeRow dir_row, Directory(dir));
    STRATA_ASSIGN_OR_RETURN(auto rows, db_->ListEntries(dir_row.ino, 0, SIZE_MAX));
    STRATA_ASSIGN_OR_RETURN(auto with_xattrs, db_->ChildrenWithXattrs(dir_row.ino));
    std::vector<CommitPlan::Entry> entries;
    for (const DentryRow& d : rows) {
      STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(d.ino));
      CommitPlan::Entry e;
      e.ino = row.ino;
      e.entry.name = d.name;
      e.entry.kind = EntryKindOfMode(row.mode);
      e.entry.mode = row.mode & 07777;
      e.entry.uid = row.uid;
      e.entry.gid = row.gid;
      const SplitTime mtime = SplitNs(row.mtime_ns);
      e.entry.mtime_sec = mtime.sec;
      e.entry.mtime_nsec = mtime.nsec;
      if (with_xattrs.count(row.ino)) {
        STRATA_ASSIGN_OR_RETURN(auto names, db_->ListXattrs(row.ino));
        std::sort(names.begin(), names.end());
        for (const std::string& n : names) {
          STRATA_ASSIGN_OR_RETURN(auto v, db_->GetXattr(row.ino, n));
          if (v) e.entry.xattrs.emplace_back(n, *v);
        }
      }
      switch (e.entry.kind) {
        case EntryKind::kDirectory:
          if (row.base_tree) {
            e.entry.subtree = *row.base_tree;  // never loaded: unchanged
          } else {
            STRATA_ASSIGN_OR_RETURN(auto id, db_->GetTreeId(row.ino));
            if (id) {
              e.entry.subtree = *id;
            } else {
              STRATA_RETURN_IF_ERROR(add_with_ancestors(row.ino));
            }
            e.subdir = true;
          }
          break;
        case EntryKind::kSymlink:
          e.entry.target = row.target;
          break;
        case EntryKind::kCharDevice:
        case EntryKind::kBlockDevice:
          e.entry.rdev = row.rdev;
          break;
        case EntryKind::kFile:
          e.entry.size = row.size;
          if (!row.changed && row.base_len == row.size) {
            STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const BaseChunkList> list, BaseChunksOf(row.ino));
            e.entry.chunks = list->chunks;
          } else {
            e.captured = true;
            if (!plan.captures.count(row.ino)) {
              CommitPlan::Capture& c = plan.captures[row.ino];
              c.plan.data_ino = row.ino;
              c.plan.truncations = files_.truncations();
              c.plan.size = c.input.size = row.size;
              c.plan.base_len = c.input.base_len = row.base_len;
              if (row.base_len > 0) {
                // Decoded already when the file was read since its list was set
                // (a large list a commit kept by reference is never read back then).
                STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const BaseChunkList> list, BaseChunksOf(row.ino));
                c.plan.base_chunks = list->chunks;
                c.input.old_chunks = list->chunks;
              }
              STRATA_ASSIGN_OR_RETURN(c.plan.extents, db_->Extents(row.ino, 0, row.size));
              c.input.written = c.plan.extents;
              // Its data file is opened when it is captured: a commit of many
              // files must not hold a descriptor for each of them.
            }
          }
          break;
        default:
          break;
      }
      if (e.entry.kind != EntryKind::kDirectory && row.nlink > 1 && linked.insert(row.ino).second)
        STRATA_RETURN_IF_ERROR(add_parents_of(row.ino));  // every name's directory is written
      entries.push_back(std::move(e));
    }
    plan.dirs[dir].entries = std::move(entries);
  }

  std::map<InodeId, std::string> paths;
  for (auto& [ino, d] : plan.dirs) {
    STRATA_ASSIGN_OR_RETURN(d.path, PathOfDirectory(ino, paths));
  }
  // Hard links as the import records them: the name a sorted walk meets first
  // is an ordinary entry, every other name a link to that path.
  for (InodeId ino : linked) {
    STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
    STRATA_ASSIGN_OR_RETURN(auto names, db_->NamesOf(ino));
    std::vector<std::string> all;
    for (const auto& [parent, name] : names) all.push_back(Join(plan.dirs.at(parent).path, name));
    std::string first;
    if (row.nlink > names.size()) {
      // Other names lie in base directories never loaded; they name the base
      // path, which must therefore stay the first name.
      STRATA_ASSIGN_OR_RETURN(auto origin, db_->GetOrigin(ino));
      if (!origin || std::find(all.begin(), all.end(), *origin) == all.end())
        return Status::Unsupported("cannot commit yet: the first name of a hard-linked base file moved ('" +
                                   (origin ? *origin : std::string("?")) + "'); its other names are in " +
                                   "directories this workspace never opened");
      first = *origin;
    } else {
      first = *std::min_element(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
        return Components(a) < Components(b);
      });
    }
    for (const auto& [parent, name] : names) {
      if (Join(plan.dirs.at(parent).path, name) == first) continue;
      for (CommitPlan::Entry& e : plan.dirs.at(parent).entries) {
        if (e.ino != ino || e.entry.name != name) continue;
        e.entry.kind = EntryKind::kHardlink;
        e.entry.target = first;
        e.entry.size = 0;
        e.entry.chunks.clear();
        e.captured = false;
      }
    }
  }

  STRATA_ASSIGN_OR_RETURN(InodeRow root, Inode(kRootInode));
  plan.root_meta.mode = root.mode & 07777;
  plan.root_meta.uid = root.uid;
  plan.root_meta.gid = root.gid;
  const SplitTime root_mtime = SplitNs(root.mtime_ns);
  plan.root_meta.mtime_sec = root_mtime.sec;
  plan.root_meta.mtime_nsec = root_mtime.nsec;
  STRATA_ASSIGN_OR_RETURN(auto root_xattrs, db_->ListXattrs(kRootInode));
  std::sort(root_xattrs.begin(), root_xattrs.end());
  for (const std::string& n : root_xattrs) {
    STRATA_ASSIGN_OR_RETURN(auto v, db_->GetXattr(kRootInode, n));
    if (v) plan.root_meta.xattrs.emplace_back(n, *v);
  }
  return Status::Ok();
}

}  // namespace strata::workspace_internal
