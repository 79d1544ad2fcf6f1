// remote add|list, push, pull: stores on S3 and moving history between them.
//
// push copies what the local branch reaches that the remote lacks, then moves
// the remote branch by compare-and-swap from the head it read first: it only
// fast-forwards, so a remote that moved meanwhile (or was never an ancestor)
// refuses the push and nothing on the remote changes. pull copies the other
// way; when both sides committed since they last agreed, it replays the local
// commits on the remote head (store/replay.h), or lists the conflicts and
// leaves the local branch where it was.
#include <fmt/format.h>

#include "cli/cli.h"
#include "remote/remote.h"
#include "remote/s3_backend.h"
#include "remote/transfer.h"
#include "store/replay.h"

namespace strata::cli {
namespace {

struct AddArgs {
  std::string name, url, endpoint, region = "us-east-1";
  uint64_t cache_mib = 2048;
  double timeout_s = 30;
  bool create_bucket = false;
};

int RunRemoteAdd(const Globals& g, const AddArgs& a) {
  auto local = OpenLocalStore(g);
  if (!local.ok()) return Fail(local.status());
  auto location = S3Location::FromUrl(a.url, a.endpoint);
  if (!location.ok()) return Fail(location.status());
  RemoteSpec spec;
  spec.name = a.name;
  spec.location = *location;
  spec.location.region = a.region;
  spec.cache_bytes = a.cache_mib << 20;
  spec.timeout_ms = static_cast<int>(a.timeout_s * 1000);
  auto master = LocalStoreKey(g);  // unlocked already by OpenLocalStore
  if (!master.ok()) return Fail(master.status());
  if (Status s = AddRemote(**local, spec, a.create_bucket, *master ? &**master : nullptr); !s.ok()) return Fail(s);
  fmt::print("added remote {}: {} at {}\n", spec.name, spec.location.Url(), spec.location.endpoint);
  return kExitOk;
}

int RunRemoteRemove(const Globals& g, const std::string& name) {
  auto local = OpenLocalStore(g);
  if (!local.ok()) return Fail(local.status());
  if (Status s = RemoveRemote(**local, name); !s.ok()) return Fail(s);
  fmt::print("removed remote {} (the bucket was not touched)\n", name);
  return kExitOk;
}

int RunRemoteList(const Globals& g) {
  auto master = LocalStoreKey(g);  // an encrypted store's remotes are sealed
  if (!master.ok()) return Fail(master.status());
  auto remotes = ListRemotes(StorePath(g), *master ? &**master : nullptr);
  if (!remotes.ok()) return Fail(remotes.status());
  if (g.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const RemoteSpec& r : *remotes)
      j.push_back({{"name", r.name}, {"url", r.location.Url()}, {"endpoint", r.location.endpoint},
                   {"region", r.location.region}, {"cache_bytes", r.cache_bytes}, {"timeout_ms", r.timeout_ms}});
    PrintJson(j);
    return kExitOk;
  }
  for (const RemoteSpec& r : *remotes) fmt::print("{}\t{}\t{}\n", r.name, r.location.Url(), r.location.endpoint);
  return kExitOk;
}

struct Stores {
  std::unique_ptr<Store> local, remote;
};

Result<Stores> OpenBoth(const Globals& g, const std::string& remote) {
  Stores s;
  STRATA_ASSIGN_OR_RETURN(s.local, OpenLocalStore(g));
  STRATA_ASSIGN_OR_RETURN(std::optional<crypto::Key256> master, LocalStoreKey(g));
  STRATA_ASSIGN_OR_RETURN(s.remote, OpenRemoteStore(StorePath(g), remote, master ? &*master : nullptr));
  return s;
}

void PrintTransfer(const Globals& g, const std::string& what, const TransferStats& t, const Hash& head) {
  double mib_s = t.seconds > 0 ? t.chunk_bytes / t.seconds / (1 << 20) : 0;
  if (g.json) {
    PrintJson({{"result", what}, {"head", head.ToHex()}, {"commits", t.commits}, {"trees", t.trees},
               {"chunks", t.chunks}, {"chunk_bytes", t.chunk_bytes}, {"chunks_present", t.chunks_present},
               {"seconds", t.seconds}});
    return;
  }
  if (t.commits + t.trees + t.chunks == 0) {
    fmt::print("{}\n", what);
    return;
  }
  fmt::print("{}: {} commits, {} trees, {} chunks ({}) copied in {:.1f} s ({:.0f} MiB/s); {} chunks were there already\n",
             what, t.commits, t.trees, t.chunks, HumanBytes(t.chunk_bytes), t.seconds, mib_s, t.chunks_present);
}

// Copies what `to` lacks of tip's history, with a progress bar. The caller
// holds a write session of `to` until the branch has moved.
Result<TransferStats> CopyWithProgress(Store& from, Store& to, const Hash& tip, const char* label,
                                       const std::string& what) {
  Progress progress(label, 0, 0);
  TransferOptions options;
  options.progress = &progress;
  auto copied = CopyHistory(from, to, tip, options);
  progress.Finish();
  if (!copied.ok()) return copied.status().WithContext(what + " (run it again to resume)");
  return copied;
}

int RunPush(const Globals& g, const std::string& remote, const std::string& branch) {
  auto stores = OpenBoth(g, remote);
  if (!stores.ok()) return Fail(stores.status());
  Store& local = *stores->local;
  Store& far = *stores->remote;
  auto head = local.GetRef(branch);
  if (!head.ok()) return Fail(head.status());
  if (!*head) return Fail(Status::NotFound("no branch '" + branch + "' here"));
  auto far_head = far.GetRef(branch);
  if (!far_head.ok()) return Fail(far_head.status());
  if (*far_head == *head) {
    // Only if the bucket still holds it: opening the remote forgot the packs
    // it lost, and then the copy below sends them again.
    auto present = far.Contains(**head);
    if (!present.ok()) return Fail(present.status());
    if (*present) {
      PrintTransfer(g, fmt::format("{}/{} is up to date ({})", remote, branch, ShortId(**head)), TransferStats{},
                    **head);
      return kExitOk;
    }
  }
  if (*far_head && *far_head != *head) {
    auto ahead = IsAncestor(local, **far_head, **head);
    if (!ahead.ok()) return Fail(ahead.status());
    if (!*ahead)
      return Fail(Status::Conflict(fmt::format(
          "{}/{} is at {}, which {} does not contain: pull first ('strata pull {} {}'), then push again", remote,
          branch, ShortId(**far_head), branch, remote, branch)));
  }
  auto session = far.BeginWrite();  // held until the branch has moved: gc keeps what arrived
  if (!session.ok()) return Fail(session.status());
  auto copied = CopyWithProgress(local, far, **head, "push", "push to " + remote);
  if (!copied.ok()) return Fail(copied.status());
  if (Status s = far.CompareAndSwapRef(branch, *far_head, **head); !s.ok()) {
    if (s.IsConflict())
      return Fail(Status::Conflict(fmt::format("push lost a race: {}/{} moved while pushing ({}); nothing changed "
                                               "there: pull, then push again",
                                               remote, branch, s.message())));
    return Fail(s);
  }
  PrintTransfer(g, fmt::format("pushed {} to {}/{} ({})", branch, remote, branch, ShortId(**head)), *copied, **head);
  return kExitOk;
}

int RunPull(const Globals& g, const std::string& remote, const std::string& branch) {
  auto stores = OpenBoth(g, remote);
  if (!stores.ok()) return Fail(stores.status());
  Store& local = *stores->local;
  Store& far = *stores->remote;
  auto far_head = far.GetRef(branch);
  if (!far_head.ok()) return Fail(far_head.status());
  if (!*far_head) return Fail(Status::NotFound("no branch '" + branch + "' at remote " + remote));
  auto session = local.BeginWrite();  // held until the branch has moved: gc keeps what arrived
  if (!session.ok()) return Fail(session.status());
  auto copied = CopyWithProgress(far, local, **far_head, "pull", "pull from " + remote);
  if (!copied.ok()) return Fail(copied.status());
  // What was fetched is in local packs now: not kept a second time in the cache.
  // A block left behind costs cache space only: the pull itself is done, so it is a note.
  if (auto* s3 = dynamic_cast<S3Backend*>(far.backend()))
    if (Status s = s3->DropFetchedCache(); !s.ok())
      fmt::print(stderr, "strata: pulled, but {} (the block stays in the cache)\n", s.message());

  auto head = local.GetRef(branch);
  if (!head.ok()) return Fail(head.status());
  Hash target = **far_head;
  std::string what = fmt::format("pulled {}/{} into {} ({})", remote, branch, branch, ShortId(target));
  if (*head == target) {
    what = fmt::format("{} is up to date with {}/{} ({})", branch, remote, branch, ShortId(target));
  } else if (*head) {
    auto behind = IsAncestor(local, **head, target);
    if (!behind.ok()) return Fail(behind.status());
    auto ahead = IsAncestor(local, target, **head);
    if (!ahead.ok()) return Fail(ahead.status());
    if (*ahead) {
      PrintTransfer(g, fmt::format("{} already contains {}/{}: push it", branch, remote, branch), *copied, **head);
      return kExitOk;
    }
    if (!*behind) {  // both sides committed: replay ours on theirs
      auto base = MergeBase(local, **head, target);
      if (!base.ok()) return Fail(base.status());
      if (!*base) return Fail(Status::Conflict(fmt::format("{} and {}/{} share no history", branch, remote, branch)));
      auto line = FirstParentLine(local, **base, **head);
      if (!line.ok()) return Fail(line.status());
      auto replay = ReplayLine(local, *line, target);
      if (!replay.ok()) return Fail(replay.status());
      if (replay->failed_commit) {
        for (const MergeConflict& c : replay->conflicts) fmt::print("conflict: {}  ({})\n", c.path, c.reason);
        return Fail(Status::Conflict(fmt::format(
            "cannot replay {} on {}/{}: commit {} conflicts in {} path(s); {} was not changed", branch, remote,
            branch, ShortId(*replay->failed_commit), replay->conflicts.size(), branch)));
      }
      target = replay->tip;
      what = fmt::format("pulled {}/{} and replayed {} local commit(s) on it: {} is at {}", remote, branch,
                         line->size(), branch, ShortId(target));
    }
  }
  if (*head != target) {
    if (Status s = local.CompareAndSwapRef(branch, *head, target); !s.ok()) return Fail(s);
  }
  PrintTransfer(g, what, *copied, target);
  return kExitOk;
}

}  // namespace

void RegisterRemoteCommands(CLI::App& app, Globals& g, int* exit_code) {
  auto* remote = app.add_subcommand("remote", "stores on S3-compatible object storage");
  remote->require_subcommand(1);
  static AddArgs add_args;
  auto* add = remote->add_subcommand("add", "register a remote store at s3://BUCKET/PREFIX");
  add->add_option("NAME", add_args.name, "its name here (letters, digits, '-', '_')")->required();
  add->add_option("URL", add_args.url, "s3://BUCKET[/PREFIX]")->required();
  add->add_option("--endpoint", add_args.endpoint, "the S3 endpoint, e.g. http://127.0.0.1:7480")->required();
  add->add_option("--region", add_args.region, "signing region (default us-east-1)");
  add->add_option("--cache-mib", add_args.cache_mib, "bound of the local cache of remote data (default 2048)")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 24));
  add->add_option("--timeout", add_args.timeout_s,
                  "seconds without progress before a request fails (reads on a mount then fail with EIO)")
      ->check(FiniteRange(0.5, 3600.0));
  add->add_flag("--create-bucket", add_args.create_bucket, "create the bucket if it does not exist");
  add->callback([&g, exit_code] { *exit_code = RunRemoteAdd(g, add_args); });
  auto* list = remote->add_subcommand("list", "the remotes of this store");
  list->add_flag("--json", g.json, "machine-readable output");
  list->callback([&g, exit_code] { *exit_code = RunRemoteList(g); });
  static std::string remove_name;
  auto* remove = remote->add_subcommand("remove", "forget a remote here (its settings and local cache; not the bucket)");
  remove->add_option("NAME", remove_name, "the remote's name")->required();
  remove->callback([&g, exit_code] { *exit_code = RunRemoteRemove(g, remove_name); });

  static std::string name, branch;
  auto* push = app.add_subcommand("push", "copy a branch to a remote (missing objects only) and move it there");
  push->add_option("REMOTE", name)->required();
  push->add_option("BRANCH", branch)->required();
  push->add_flag("--json", g.json, "machine-readable output");
  push->callback([&g, exit_code] { *exit_code = RunPush(g, name, branch); });
  auto* pull = app.add_subcommand("pull", "copy a remote branch here; replay local commits on it if both moved");
  pull->add_option("REMOTE", name)->required();
  pull->add_option("BRANCH", branch)->required();
  pull->add_flag("--json", g.json, "machine-readable output");
  pull->callback([&g, exit_code] { *exit_code = RunPull(g, name, branch); });
}

}  // namespace strata::cli
