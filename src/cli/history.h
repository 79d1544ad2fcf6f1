// Pieces shared by the history commands (log, show, diff, branch, fork), which
// live in several files but register as one family (RegisterHistoryCommands).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"

namespace strata::cli {

// cmd_branch.cc: branch create|list|delete, fork.
void RegisterBranchCommands(CLI::App& app, Globals& g, int* exit_code);
// cmd_diff.cc: show, diff.
void RegisterDiffCommands(CLI::App& app, Globals& g, int* exit_code);

// The first line of a commit message.
std::string Subject(const std::string& message);

// `log --graph`: the lines drawn beside each commit, given the commits in an
// order where every commit comes before its parents. Each column is a line of
// history waiting for a commit; a commit takes the column that waits for it
// (or a new one on the right), its first parent continues that column, further
// parents open columns to its right, and columns that wait for the same commit
// join. Moves between columns are drawn one column per row with '/' and '\'.
class LogGraph {
 public:
  struct Row {
    std::string prefix;              // for the commit's own line: "* | "
    std::vector<std::string> after;  // rows joining it to what comes next: "|/"
  };
  Row Add(const Hash& id, const std::vector<Hash>& parents);

 private:
  std::vector<Hash> columns_;  // the commit each column waits for
};

}  // namespace strata::cli
