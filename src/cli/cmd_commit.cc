// strata commit: a workspace's changes become a commit on its branch.
//
// A mounted workspace is committed by its daemon (the only process that may
// open it), asked over the control socket. The syncfs sent first starts the
// write-back of the kernel's dirty pages (shared mmap, write-back cache), but
// the kernel does not wait for a FUSE daemon's answers there: the daemon
// itself makes the kernel write back and wait before it takes the cut
// (FuseServer::FlushKernelPages). A workspace that is not mounted is opened
// and committed right here.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "cli/author.h"
#include "cli/change_rows.h"
#include "cli/cli.h"
#include "cli/workspace_target.h"
#include "control/protocol.h"
#include "util/progress.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

struct CommitArgs {
  std::string target, message, branch;
};

int RunCommit(Globals& g, const CommitArgs& a) {
  if (a.message.empty()) return UsageError("a commit needs a message (-m MESSAGE)");
  auto store = OpenStoreFor(g, a.target);
  if (!store.ok()) return Fail(store.status());
  auto author = CommitAuthor();
  if (!author.ok()) return Fail(author.status());
  CommitRequest request{a.message, *author, a.branch};
  // On a terminal: the files and bytes captured out of those the cut found,
  // and the commit's phase, as the daemon (or the commit here) counts them.
  Progress progress("commit", 0, 0);
  auto reply = CommitWorkspace(**store, a.target, request, &progress);
  progress.Finish();
  if (!reply.ok()) return Fail(reply.status());
  if (g.json) {
    PrintJson(control::ToJson(*reply));
    return kExitOk;
  }
  if (!reply->commit) {
    fmt::print("nothing to commit\n");
    return kExitOk;
  }
  const CommitStats& s = reply->stats;
  fmt::print("{} on branch {}\n", reply->commit->ToHex(), reply->branch);
  // Paths counted as diff and status list them (not the inodes the commit
  // visited), so that the numbers the commands print agree.
  auto paths = CommitChangeCount(**store, *reply->commit);
  if (!paths.ok()) return Fail(paths.status().WithContext("the commit landed, but its changes could not be counted"));
  fmt::print("  {} changed paths: {} files and {} directories written, {} hashed; {} objects new to the store "
             "(chunks, trees and the commit; the rest were there already); {:.0f} ms\n",
             *paths, s.files_captured, s.directories_written, HumanBytes(s.bytes_hashed), s.objects_written,
             s.cut_ms + s.capture_ms + s.trees_ms + s.publish_ms + s.rebase_ms);
  return kExitOk;
}

}  // namespace

void RegisterCommitCommands(CLI::App& app, Globals& g, int* exit_code) {
  static CommitArgs a;  // option storage must outlive parsing
  auto* commit = app.add_subcommand("commit", "turn a workspace's changes into a commit on its branch");
  commit->add_option("TARGET", a.target,
                     "a mountpoint of a workspace, a path inside one, or a workspace's name (default: the mount "
                     "the current directory is in)");
  commit->add_option("-m,--message", a.message, "the commit message")->required();
  commit->add_option("--branch", a.branch, "the branch, for a workspace that tracks none yet");
  commit->add_flag("--json", g.json, "print the result as JSON");
  commit->callback(OnWorkspaceArgument(&a.target, exit_code, [&g] { return RunCommit(g, a); }));
  RegisterResetCommands(app, g, exit_code);
  RegisterRebaseCommands(app, g, exit_code);
}

}  // namespace strata::cli
