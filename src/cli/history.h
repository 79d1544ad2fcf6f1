// Pieces shared by the history commands (log, show, diff, branch, fork), which
// live in several files but register as one family (RegisterHistoryCommands).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "store/revision.h"

namespace strata::cli {

// cmd_branch.cc: branch create|list|delete, fork.
void RegisterBranchCommands(CLI::App& app, Globals& g, int* exit_code);
// cmd_diff.cc: show, diff.
void RegisterDiffCommands(CLI::App& app, Globals& g, int* exit_code);

// cat REV:PATH, show REV:PATH: the file's bytes to standard output; exit 1
// when PATH is missing, a directory or not a regular file.
int CatFile(Globals& g, const std::string& spec);

// spec with a leading HEAD (HEAD, HEAD~N, HEAD:PATH) read as the commit
// head_hex: HEAD beside a workspace is the commit that workspace is based on.
// Any other spec is returned as it is.
std::string HeadAs(const std::string& spec, const std::string& head_hex);

// spec with a leading HEAD read, when the current directory lies inside a
// mount of a workspace of this store, as that workspace's base (as git's HEAD
// is the commit checked out where it runs); NotFound when that workspace was
// started empty. Any other spec, or outside such a mount, as it is (HEAD is
// then the default branch's head, store/revision.h).
Result<std::string> HeadOfCurrentMount(Store& store, const std::string& spec);

// SplitRevRange (store/revision.h) for log and diff, where a side may also
// be ws:NAME: that ':' is no REV:PATH's, so "ws:a..main" is a range too.
std::optional<RevRange> SplitHistoryRange(const std::string& spec);

// The first line of a commit message.
std::string Subject(const std::string& message);

// `log --graph`: the lines drawn beside each commit, given the commits in an
// order where every commit comes before its parents. Each column is a line of
// history waiting for a commit; a commit takes the column that waits for it
// (or a new one on the right), its first parent continues that column, further
// parents open columns to its right, and columns that wait for the same commit
// join. Moves between columns are drawn one column per row with '/' and '\'.
// A commit without parents ends its column. A commit no column waits for
// starts a new line of history; when the row above drew something in its
// column (a root that just ended there), a row with that column blank comes
// first, so that unrelated histories never look joined.
class LogGraph {
 public:
  struct Row {
    std::vector<std::string> before;  // rows separating it from what came before: "| "
    std::string prefix;               // for the commit's own line: "* | "
    std::vector<std::string> after;   // rows joining it to what comes next: "|/"
  };
  Row Add(const Hash& id, const std::vector<Hash>& parents);

 private:
  std::vector<Hash> columns_;  // the commit each column waits for
  std::string last_row_;       // the last row drawn, to see what it left in each column
};

}  // namespace strata::cli
