// strata rebase: a workspace's changes replayed on another commit (by
// default the head of its branch), after its commit was refused with "head
// moved".
//
// A mounted workspace is rebased by its daemon (the only process that may
// open it) after a syncfs of the mount, so that the kernel's dirty pages are
// part of what is replayed; the daemon then drops the names and attributes
// the kernel cached of the old namespace. A workspace that is not mounted is
// opened and rebased right here. Conflicting paths are listed, exit status 4,
// and the workspace is left exactly as it was.
#include <fmt/format.h>

#include "cli/workspace_target.h"
#include "control/protocol.h"
#include "store/revision.h"

namespace strata::cli {
namespace {

struct RebaseArgs {
  std::string target, rev;
};

// REV, or the head of the branch the workspace tracks.
Result<Hash> RebaseTarget(Store& store, const RebaseArgs& a, const WorkspaceTarget& target) {
  if (!a.rev.empty()) return ResolveContentRevision(store, a.rev);
  STRATA_ASSIGN_OR_RETURN(auto list, Workspace::List(store));
  for (const WorkspaceInfo& info : list) {
    if (info.name != target.name) continue;
    if (info.branch.empty())
      return Status::InvalidArgument("workspace '" + target.name +
                                     "' tracks no branch; name the commit to rebase onto");
    auto head = store.GetRef(info.branch);
    if (!head.ok()) return head.status();
    if (!*head) return Status::NotFound("branch '" + info.branch + "' does not exist");
    return **head;
  }
  return Status::NotFound("no workspace '" + target.name + "'");
}

// The daemon stopped before or during the rebase. A rebase is installed in
// one step, so the workspace holds the state from before or the rebased one:
// its base tells which.
Status DaemonStoppedInRebase(Store& store, const WorkspaceTarget& target, const Hash& onto, const Status& why) {
  if (!DaemonStoppedDuringRequest(why))
    return Status::Unavailable(why.message() + "; nothing was rebased; " + RemountHint(target));
  auto info = StateAfterDaemonStopped(store, target);
  if (!info.ok())
    return Status::Unavailable("the daemon stopped during the rebase; the state of workspace '" + target.name +
                               "' could not be read (" + info.status().message() + "); " + RemountHint(target));
  const bool landed = info->base == onto;
  return Status::Unavailable("the daemon stopped during the rebase; workspace '" + target.name + "' holds " +
                             (landed ? "the rebased state (based on " + ShortId(onto) + ", its changes on top)"
                                     : std::string("its state from before the rebase (nothing was changed)")) +
                             "; " + RemountHint(target));
}

Result<control::RebaseReply> RebaseWorkspace(Store& store, const RebaseArgs& a) {
  STRATA_ASSIGN_OR_RETURN(WorkspaceTarget target, ResolveWorkspace(store, a.target));
  if (IsReadOnlyMount(target.name))
    return Status::InvalidArgument("'" + a.target + "' serves a read-only mount: it has no changes to rebase");
  STRATA_ASSIGN_OR_RETURN(Hash onto, RebaseTarget(store, a, target));
  if (target.mounted) {
    auto reply = AskDaemon(store, target, control::RebaseRequest{onto}, /*sync=*/true);
    if (!reply.ok() && reply.status().code() == Status::Code::kUnavailable)
      return DaemonStoppedInRebase(store, target, onto, reply.status());
    return reply;
  }
  STRATA_ASSIGN_OR_RETURN(auto ws, Workspace::Open(store, target.name));
  STRATA_ASSIGN_OR_RETURN(RebaseOutcome out, ws->RebaseOnto(onto));
  return control::RebaseReplyOf(onto, out);
}

int RunRebase(Globals& g, const RebaseArgs& a) {
  auto store = OpenStoreFor(g, a.target);
  if (!store.ok()) return Fail(store.status());
  auto reply = RebaseWorkspace(**store, a);
  if (!reply.ok()) return Fail(reply.status());
  const control::RebaseReply& r = *reply;
  const bool conflicts = !r.conflicts.empty();
  if (g.json) {
    PrintJson(control::ToJson(r));
    return conflicts ? kExitConflict : kExitOk;
  }
  const std::string onto = r.onto.ToHex().substr(0, 12);
  if (r.up_to_date) {
    fmt::print("{} is already up to date with {}\n", a.target, onto);
    return kExitOk;
  }
  if (conflicts) {
    fmt::print(stderr, "strata: cannot rebase {} onto {}: {} path(s) changed on both sides; nothing was changed\n",
               a.target, onto, r.conflicts.size());
    for (const MergeConflict& c : r.conflicts) fmt::print("conflict: {}  ({})\n", c.path.empty() ? "." : c.path, c.reason);
    return kExitConflict;
  }
  fmt::print("{} rebased onto {}; {}\n", a.target, onto,
             r.differs ? "the next commit holds its changes"
                                      : "its content is that commit's (nothing to commit)");
  return kExitOk;
}

}  // namespace

void RegisterRebaseCommands(CLI::App& app, Globals& g, int* exit_code) {
  static RebaseArgs a;  // option storage must outlive parsing
  auto* rebase = app.add_subcommand(
      "rebase", "replay a workspace's changes on REV (default: its branch's head); conflicts change nothing");
  rebase->add_option("TARGET", a.target, "a mountpoint of a workspace, a path inside one, or a workspace's name")
      ->required();
  rebase->add_option("REV", a.rev, "the commit to rebase onto (default: the head of the workspace's branch)");
  rebase->add_flag("--json", g.json, "print the result as JSON");
  rebase->callback(OnWorkspaceArgument(&a.target, exit_code, [&g] { return RunRebase(g, a); }));
}

}  // namespace strata::cli
