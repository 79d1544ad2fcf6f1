// The plan of one commit, shared by the phases of SqliteWorkspace::Commit
// (commit_cut.cc takes the cut, commit_ops.cc does the rest). Private to
// src/workspace/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workspace/rechunk.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

struct SqliteWorkspace::CommitPlan {
  struct Entry {
    TreeEntry entry;
    InodeId ino = 0;
    bool captured = false;  // a changed regular file: chunks come from the capture
    bool subdir = false;    // a directory: its id comes from the plan if it is written
  };
  struct Dir {
    std::string path;  // from the root, "" for the root
    std::vector<Entry> entries;
    Hash id;
  };
  struct Capture {
    ReadPlan plan;
    RechunkInput input;
    std::vector<ChunkRef> chunks;
    // The written tree whose entry `name` holds the new list (WriteTrees).
    Hash tree;
    std::string name;
  };

  std::string branch;
  std::optional<Hash> parent;
  std::vector<InodeId> changed;         // changed at the cut
  std::map<InodeId, Dir> dirs;          // the directories to write
  std::map<InodeId, Capture> captures;  // the files to capture
  RootMeta root_meta;
  CommitStats stats;
};

}  // namespace strata::workspace_internal
