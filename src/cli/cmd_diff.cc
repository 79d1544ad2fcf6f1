// show and diff: what changed between commits, through store/tree_diff.h.
// A side of a diff may also be a workspace: what its next commit would hold
// (Workspace::Snapshot, asked of the daemon when it is mounted).
//
// Paths are shown relative to what is compared: the commits' top directories
// (or the directories named by REV:PATH). "." is the compared directory
// itself (its own metadata), and a directory's path ends in '/'.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/change_rows.h"
#include "cli/history.h"
#include "cli/workspace_target.h"
#include "store/forget.h"
#include "store/revision.h"
#include "store/tree_diff.h"
#include "util/time_ns.h"

namespace strata::cli {
namespace {

void PrintNameStatus(const std::vector<ChangeRow>& rows) {
  for (const ChangeRow& r : rows) fmt::print("{}\t{}\n", r.letter, r.path);
}

// --stat: the size of each path before and after, and a summary. Sizes, not
// an edit distance: a file rewritten in place at the same size shows 0.
void PrintStat(const std::vector<ChangeRow>& rows) {
  if (rows.empty()) return;
  size_t width = 0;
  for (const ChangeRow& r : rows) width = std::max(width, r.path.size());
  uint64_t added = 0, removed = 0;
  size_t counts[4] = {0, 0, 0, 0};  // A D M T
  for (const ChangeRow& r : rows) {
    bool sized = r.old_kind == EntryKind::kFile || r.new_kind == EntryKind::kFile;
    std::string sizes = sized ? fmt::format("{} -> {} bytes", r.old_size, r.new_size) : "";
    if (r.new_size > r.old_size) {
      added += r.new_size - r.old_size;
      sizes += fmt::format(" (+{})", r.new_size - r.old_size);
    } else if (r.new_size < r.old_size) {
      removed += r.old_size - r.new_size;
      sizes += fmt::format(" (-{})", r.old_size - r.new_size);
    }
    fmt::print(" {} {:<{}} |{}{}\n", r.letter, r.path, width, sizes.empty() ? "" : " ", sizes);
    counts[std::string_view("ADMT").find(r.letter)]++;
  }
  std::vector<std::string> parts;
  const char* names[4] = {"added", "deleted", "modified", "type changed"};
  for (int i = 0; i < 4; i++)
    if (counts[i]) parts.push_back(fmt::format("{} {}", counts[i], names[i]));
  fmt::print(" {} {} changed ({}), {} bytes added, {} bytes removed\n", rows.size(),
             rows.size() == 1 ? "path" : "paths", fmt::join(parts, ", "), added, removed);
}

Status Collect(Store& store, const TreeEntry* a, const TreeEntry* b, const std::string& path,
               std::vector<ChangeRow>* rows) {
  return DiffEntries(store, a, b, path, [rows](const TreeChange& c) {
    rows->push_back(ToRow(c));
    return Status::Ok();
  });
}

// The entry at `path` of a commit; nullopt when there is none (absent, or
// below something that is not a directory, or no commit at all: the base of a
// workspace never committed). The top directory is RootEntry.
Result<std::optional<TreeEntry>> EntryAt(Store& store, const std::optional<Commit>& side, const std::string& path) {
  if (!side) return std::optional<TreeEntry>();
  const Commit& c = *side;
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> names, SplitPath(path));
  if (names.empty()) return std::optional<TreeEntry>(RootEntry(c));
  auto e = LookupPath(store, c.root, path);
  if (e.ok()) return std::optional<TreeEntry>(std::move(e).value());
  if (e.status().IsNotFound() || e.status().code() == Status::Code::kInvalidArgument)
    return std::optional<TreeEntry>();
  return e.status();
}

std::string JoinPath(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "/") + n;
  return out;
}

struct DiffArgs {
  std::string from, to;
  std::vector<std::string> paths;
  bool stat = false, name_status = false, name_only = false;
};

// One side of a diff: a commit (REV or REV:PATH), or what a workspace's next
// commit would hold (its snapshot's trees, as a commit without parents).
struct Side {
  std::optional<Commit> commit;  // nullopt: nothing (the base of a workspace never committed)
  std::string path;              // REV:PATH's path; "" for everything
  std::string id;                // for --json: the commit id, or "ws:NAME"
};

Result<Side> CommitSide(Store& store, const std::string& spec) {
  RevPath rp = SplitRevPath(spec);
  STRATA_ASSIGN_OR_RETURN(Hash id, ResolveContentRevision(store, rp.rev));
  STRATA_ASSIGN_OR_RETURN(Commit c, store.GetCommit(id));
  return Side{std::move(c), rp.path, id.ToHex()};
}

Result<Side> WorkspaceSide(Store& store, const WorkspaceTarget& target, WorkspaceSnapshot* snap_out) {
  STRATA_ASSIGN_OR_RETURN(WorkspaceSnapshot snap, SnapshotWorkspace(store, target));
  Commit c;
  c.root = snap.root;
  c.root_meta = snap.root_meta;
  if (snap_out) *snap_out = snap;
  return Side{std::move(c), "", "ws:" + target.name};
}

// `diff A` alone: A can only be a workspace, so a plain name or mountpoint
// will do too. nullopt when it is none.
Result<std::optional<WorkspaceTarget>> WorkspaceAlone(Store& store, const std::string& spec) {
  STRATA_ASSIGN_OR_RETURN(auto ws, FindWorkspaceSide(store, spec));
  if (ws) return ws;
  auto named = ResolveWorkspace(store, spec);
  if (named.ok() && (named->mounted || WorkspaceExists(store, named->name)))
    return std::optional<WorkspaceTarget>(std::move(named).value());
  return std::optional<WorkspaceTarget>();
}

// The sides of `diff A B`, or of `diff WORKSPACE` (its base, then it).
Result<std::pair<Side, Side>> ResolveSides(Store& store, const DiffArgs& a, const std::optional<WorkspaceTarget>& alone) {
  if (alone) {
    WorkspaceSnapshot snap;
    STRATA_ASSIGN_OR_RETURN(Side ws, WorkspaceSide(store, *alone, &snap));
    Side base;
    if (snap.base) {
      STRATA_ASSIGN_OR_RETURN(base, CommitSide(store, snap.base->ToHex()));
    }
    return std::make_pair(std::move(base), std::move(ws));
  }
  STRATA_ASSIGN_OR_RETURN(auto from_ws, FindWorkspaceSide(store, a.from));
  STRATA_ASSIGN_OR_RETURN(auto to_ws, FindWorkspaceSide(store, a.to));
  Side sides[2];
  // Beside a workspace, HEAD is the commit that workspace is based on.
  std::optional<std::string> workspace_head;
  for (int i = 0; i < 2; i++) {
    const auto& ws = i == 0 ? from_ws : to_ws;
    if (!ws) continue;
    WorkspaceSnapshot snap;
    STRATA_ASSIGN_OR_RETURN(sides[i], WorkspaceSide(store, *ws, &snap));
    if (!workspace_head) workspace_head = snap.base ? snap.base->ToHex() : "";
  }
  for (int i = 0; i < 2; i++) {
    if (i == 0 ? from_ws.has_value() : to_ws.has_value()) continue;
    std::string spec = i == 0 ? a.from : a.to;
    if (workspace_head) {
      if (workspace_head->empty() && HeadAs(spec, "") != spec)
        return Status::NotFound("HEAD: the workspace compared was started empty and has no base commit");
      spec = HeadAs(spec, *workspace_head);
    } else {
      STRATA_ASSIGN_OR_RETURN(spec, HeadOfCurrentMount(store, spec));
    }
    STRATA_ASSIGN_OR_RETURN(sides[i], CommitSide(store, spec));
  }
  return std::make_pair(std::move(sides[0]), std::move(sides[1]));
}

int RunDiff(Globals& g, const DiffArgs& args) {
  DiffArgs a = args;
  // A mountpoint on either side says which store to read (OpenStoreFor).
  auto store = OpenStoreFor(g, MountSourceOf(a.to) ? a.to : a.from);
  if (!store.ok()) return Fail(store.status());
  // Held to the end: a workspace side's trees are reachable from no ref, and
  // gc must not delete them before the diff has read them.
  auto session = (*store)->BeginWrite();
  if (!session.ok()) return Fail(session.status());
  std::optional<WorkspaceTarget> alone;
  if (a.to.empty()) {
    // A workspace first (a mountpoint such as ../mnt is no range);
    // "ws:a..b" is refused as a workspace's name, and is a range.
    auto ws = WorkspaceAlone(**store, a.from);
    const std::optional<RevRange> range = ws.ok() && *ws ? std::nullopt : SplitHistoryRange(a.from);
    if (!range && !ws.ok()) return Fail(ws.status());
    if (range) {  // A..B compares A with B, as git's diff does
      a.from = range->from;
      a.to = range->to;
    } else if (!*ws) {
      std::fprintf(stderr,
                   "strata: '%s' is not a workspace (a name, ws:NAME or a mountpoint); compare two revisions "
                   "with: strata diff A B\n",
                   a.from.c_str());
      return kExitUsage;
    } else {
      alone = std::move(*ws);
    }
  }
  auto sides = ResolveSides(**store, a, alone);
  if (!sides.ok()) return Fail(sides.status());
  const Side& from = sides->first;
  const Side& to = sides->second;
  // The paths to compare, below REV:PATH; none means everything. A path
  // inside another one given is already covered.
  std::vector<std::string> filters;
  for (const std::string& p : a.paths) {
    auto names = SplitPath(p);
    if (!names.ok()) return Fail(names.status());
    filters.push_back(JoinPath(*names));
  }
  if (filters.empty()) filters.push_back("");
  std::sort(filters.begin(), filters.end());
  std::vector<std::string> kept;
  for (const std::string& f : filters) {
    bool covered = std::any_of(kept.begin(), kept.end(), [&](const std::string& k) {
      return k.empty() || f == k || (f.size() > k.size() && f.compare(0, k.size(), k) == 0 && f[k.size()] == '/');
    });
    if (!covered) kept.push_back(f);
  }

  std::vector<ChangeRow> rows;
  for (const std::string& f : kept) {
    auto join = [&](const std::string& base) { return base.empty() ? f : f.empty() ? base : base + "/" + f; };
    auto old_entry = EntryAt(**store, from.commit, join(from.path));
    if (!old_entry.ok()) return Fail(old_entry.status());
    auto new_entry = EntryAt(**store, to.commit, join(to.path));
    if (!new_entry.ok()) return Fail(new_entry.status());
    if (!*old_entry && !*new_entry) {
      std::string where = f.empty() ? "" : " '" + f + "'";
      return Fail(Status::NotFound("no path" + where + " in " + a.from + " or in " + (a.to.empty() ? "its base" : a.to)));
    }
    if (!from.commit && f.empty()) {
      // A workspace never committed against nothing: everything in it is
      // new, listed as `show` lists a first commit.
      Status s = DiffTrees(**store, std::nullopt, to.commit->root, [&rows](const TreeChange& ch) {
        rows.push_back(ToRow(ch));
        return Status::Ok();
      });
      if (!s.ok()) return Fail(s);
      continue;
    }
    // Two files (links, ...) compared directly are named by the path given.
    std::string label = f;
    bool dir = (*old_entry && (*old_entry)->kind == EntryKind::kDirectory) ||
               (*new_entry && (*new_entry)->kind == EntryKind::kDirectory);
    if (label.empty() && !dir) label = !to.path.empty() ? to.path : from.path;
    Status s = Collect(**store, old_entry->has_value() ? &**old_entry : nullptr,
                       new_entry->has_value() ? &**new_entry : nullptr, label, &rows);
    if (!s.ok()) return Fail(s);
  }

  if (g.json) {
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const ChangeRow& r : rows) changes.push_back(RowJson(r));
    PrintJson({{"from", from.commit ? nlohmann::ordered_json(from.id) : nlohmann::ordered_json()},
               {"to", to.id},
               {"changes", changes}});
    return kExitOk;
  }
  if (a.stat) {
    PrintStat(rows);
  } else if (a.name_only) {
    for (const ChangeRow& r : rows) fmt::print("{}\n", r.path);
  } else {
    PrintNameStatus(rows);
  }
  return kExitOk;
}

int RunShow(Globals& g, const std::string& rev) {
  if (rev.find(':') != std::string::npos) {  // REV:PATH: the file's content
    if (g.json) {
      std::fprintf(stderr, "strata: show REV:PATH writes the file's bytes; --json applies to a commit only\n");
      return kExitUsage;
    }
    return CatFile(g, rev);
  }
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto here = HeadOfCurrentMount(**store, rev);  // HEAD inside a mount: its workspace's base
  if (!here.ok()) return Fail(here.status());
  auto id = ResolveContentRevision(**store, *here);
  if (!id.ok()) return Fail(id.status());
  auto c = (*store)->GetCommit(*id);
  if (!c.ok()) return Fail(c.status());
  std::vector<ChangeRow> rows;
  if (c->parents.empty()) {  // the first commit: everything in it is new
    Status s = DiffTrees(**store, std::nullopt, c->root, [&rows](const TreeChange& ch) {
      rows.push_back(ToRow(ch));
      return Status::Ok();
    });
    if (!s.ok()) return Fail(s);
  } else {
    // A kept commit whose parent was forgotten cannot be compared with it.
    if (Status s = CheckNotForgotten(**store, c->parents[0]); !s.ok())
      return Fail(s.WithContext("show " + id->ToHex().substr(0, 12) + " compares it with its parent"));
    auto parent = (*store)->GetCommit(c->parents[0]);
    if (!parent.ok()) return Fail(parent.status());
    TreeEntry before = RootEntry(*parent), after = RootEntry(*c);
    if (Status s = Collect(**store, &before, &after, "", &rows); !s.ok()) return Fail(s);
  }
  auto refs = (*store)->ListRefs();
  if (!refs.ok()) return Fail(refs.status());
  std::vector<std::string> branches;
  for (const auto& [name, target] : *refs)
    if (target == *id) branches.push_back(name);

  if (g.json) {
    nlohmann::ordered_json parents = nlohmann::ordered_json::array();
    for (const Hash& p : c->parents) parents.push_back(p.ToHex());
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const ChangeRow& r : rows) changes.push_back(RowJson(r));
    PrintJson({{"id", id->ToHex()},
               {"parents", parents},
               {"root", c->root.ToHex()},
               {"author", c->author},
               {"time", c->time_ns},
               {"message", c->message},
               {"branches", branches},
               {"changes", changes}});
    return kExitOk;
  }
  std::string decoration = branches.empty() ? "" : fmt::format(" ({})", fmt::join(branches, ", "));
  fmt::print("commit {}{}\n", id->ToHex(), decoration);
  if (c->parents.size() == 1) fmt::print("Parent: {}\n", c->parents[0].ToHex());
  if (c->parents.size() > 1) {
    std::vector<std::string> hex;
    for (const Hash& p : c->parents) hex.push_back(p.ToHex());
    fmt::print("Merge:  {}\n", fmt::join(hex, " "));
  }
  fmt::print("Author: {}\n", c->author);
  fmt::print("Date:   {}\n\n", FormatCommitTime(c->time_ns));
  std::string_view msg = c->message;
  while (!msg.empty()) {
    size_t nl = msg.find('\n');
    fmt::print("    {}\n", msg.substr(0, nl));
    msg = nl == std::string_view::npos ? std::string_view() : msg.substr(nl + 1);
  }
  if (c->parents.size() > 1) fmt::print("\n    (changes against the first parent)\n");
  fmt::print("\n");
  PrintNameStatus(rows);
  return kExitOk;
}

}  // namespace

void RegisterDiffCommands(CLI::App& app, Globals& g, int* exit_code) {
  static std::string show_rev;  // option storage must outlive parsing: the app lives for the process
  auto* show = app.add_subcommand(
      "show", "a commit: id, parents, author, time, message, and what it changed; REV:PATH: a file's content");
  show->add_option("REV", show_rev, "the commit, or REV:PATH for a file in it")->required();
  show->add_flag("--json", g.json, "machine-readable output");
  show->callback([&g, exit_code] { *exit_code = RunShow(g, show_rev); });

  static DiffArgs d;
  auto* diff = app.add_subcommand(
      "diff",
      "paths that differ between two commits or workspaces: A added, D deleted, M modified (content, mode, owner, "
      "mtime or xattrs), T type changed");
  auto* a = diff->add_option("A", d.from,
                             "the old side: REV, REV:PATH, ws:WORKSPACE or a mountpoint; A..B alone compares A with B; "
                             "HEAD beside a workspace is its base; without A, the workspace of the mount the current "
                             "directory is in, compared with its base");
  auto* b = diff->add_option("B", d.to,
                             "the new side: REV, REV:PATH, ws:WORKSPACE or a mountpoint; without B, A is a "
                             "workspace compared with its base");
  // A and B are optional, so in `diff -- PATH` or `diff WORKSPACE -- PATH`
  // CLI11 would hand PATH to a side. Positionals are validated as they are
  // parsed: a side refuses a value that comes after "--" (CLI11 has recorded
  // the "--" by then), which then goes to PATH. The first verdict is kept for
  // the validation after parsing.
  diff->validate_positionals();
  auto side_before_dashes = [diff](bool* accepted) {
    return CLI::Validator(
        [diff, accepted](std::string&) -> std::string {
          if (*accepted) return "";
          auto seen = diff->remaining();
          if (std::find(seen.begin(), seen.end(), "--") != seen.end()) return "a path after --, not a side";
          *accepted = true;
          return "";
        },
        "", "SIDE");
  };
  static bool a_accepted = false, b_accepted = false;
  a->check(side_before_dashes(&a_accepted));
  b->check(side_before_dashes(&b_accepted));
  diff->add_option("PATH", d.paths, "only these paths (after --), relative to what is compared");
  auto* stat = diff->add_flag("--stat", d.stat,
                              "per path its size before and after (size differences, not an edit distance), "
                              "then a summary");
  auto* name_status = diff->add_flag("--name-status", d.name_status, "a status letter and a path per line (default)");
  auto* name_only = diff->add_flag("--name-only", d.name_only, "the changed paths only, one per line");
  stat->excludes(name_status);
  name_only->excludes(stat)->excludes(name_status);
  diff->add_flag("--json", g.json, "machine-readable output");
  diff->callback([&g, exit_code] {
    auto run = [&g] { return RunDiff(g, d); };
    // A..B is a range, unless it names a path (such as ../sub).
    const bool range = d.from.find("..") != std::string::npos && !std::filesystem::exists(d.from);
    if (!d.to.empty() || range) {
      *exit_code = run();
      return;
    }
    // A alone is a workspace: nothing, or a path inside a mount, names the
    // mount's.
    OnWorkspaceArgument(&d.from, exit_code, run)();
  });
}

}  // namespace strata::cli
