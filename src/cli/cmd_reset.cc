// strata reset: a workspace's base moves to a revision; with --hard its
// content becomes that revision's tree.
//
// A mounted workspace is reset by its daemon (the only process that may open
// it), which then tells the kernel to drop the names and attributes it
// cached. A workspace that is not mounted is opened and reset right here.
#include <fmt/format.h>

#include "cli/workspace_target.h"
#include "control/protocol.h"
#include "store/revision.h"

namespace strata::cli {
namespace {

struct ResetArgs {
  std::string target, rev;
  bool hard = false;
};

// The daemon stopped before or during the reset. A reset is installed in one
// step, so the workspace holds the state from before or the reset one: its
// base (and for --hard, that no change is left) tells which.
Status DaemonStoppedInReset(Store& store, const WorkspaceTarget& target, const ResetArgs& a, const Hash& commit,
                            const Status& why) {
  if (!DaemonStoppedDuringRequest(why))
    return Status::Unavailable(why.message() + "; nothing was reset; " + RemountHint(target));
  auto info = StateAfterDaemonStopped(store, target);
  if (!info.ok())
    return Status::Unavailable("the daemon stopped during the reset; the state of workspace '" + target.name +
                               "' could not be read (" + info.status().message() + "); " + RemountHint(target));
  const bool landed = info->base == commit && (!a.hard || info->changed_inodes == 0);
  std::string state = !landed ? "its state from before the reset (nothing was changed)"
                      : a.hard ? "the reset state (" + ShortId(commit) + " exactly)"
                               : "the reset state (based on " + ShortId(commit) + ", its content kept)";
  return Status::Unavailable("the daemon stopped during the reset; workspace '" + target.name + "' holds " + state +
                             "; " + RemountHint(target));
}

Result<control::ResetReply> ResetWorkspace(Store& store, const ResetArgs& a, const Hash& commit) {
  STRATA_ASSIGN_OR_RETURN(WorkspaceTarget target, ResolveWorkspace(store, a.target));
  if (IsReadOnlyMount(target.name))
    return Status::InvalidArgument("'" + a.target + "' serves a read-only mount: it cannot be reset");
  if (target.mounted) {
    // Without --hard the content is kept: dirty pages must reach it first.
    auto reply = AskDaemon(store, target, ResetRequest{commit, a.hard}, /*sync=*/!a.hard);
    if (!reply.ok() && reply.status().code() == Status::Code::kUnavailable)
      return DaemonStoppedInReset(store, target, a, commit, reply.status());
    return reply;
  }
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  STRATA_ASSIGN_OR_RETURN(ResetOutcome out, ws->Reset(ResetRequest{commit, a.hard}));
  return control::ResetReplyOf(commit, out);
}

int RunReset(Globals& g, const ResetArgs& a) {
  auto store = OpenStoreFor(g, a.target);
  if (!store.ok()) return Fail(store.status());
  auto commit = ResolveContentRevision(**store, a.rev);
  if (!commit.ok()) return Fail(commit.status());
  auto reply = ResetWorkspace(**store, a, *commit);
  if (!reply.ok()) return Fail(reply.status());
  if (g.json) {
    PrintJson(control::ToJson(*reply));
    return kExitOk;
  }
  if (a.hard) {
    fmt::print("{} now holds {} exactly\n", a.target, ShortId(*commit));
  } else {
    fmt::print("{} is based on {}; {}\n", a.target, ShortId(*commit),
               reply->differs ? "its content differs: the next commit holds the difference"
                                               : "its content is that commit's");
  }
  return kExitOk;
}

}  // namespace

void RegisterResetCommands(CLI::App& app, Globals& g, int* exit_code) {
  static ResetArgs a;  // option storage must outlive parsing
  auto* reset = app.add_subcommand(
      "reset", "move a workspace's base to REV; with --hard its content becomes REV's tree (changes discarded)");
  reset->add_option("TARGET", a.target, "a mountpoint of a workspace, a path inside one, or a workspace's name")
      ->required();
  reset->add_option("REV", a.rev, "the new base")->required();
  reset->add_flag("--hard", a.hard, "discard the workspace's changes: its content becomes REV's tree");
  reset->add_flag("--json", g.json, "print the result as JSON");
  reset->callback(OnWorkspaceArgument(&a.target, exit_code, [&g] { return RunReset(g, a); }));
}

}  // namespace strata::cli
