// log, ls, cat: reading commits and the trees inside them. The rest of the
// family (show, diff, branch, fork) is in cmd_diff.cc and cmd_branch.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>

#include "cli/history.h"
#include "cli/workspace_target.h"
#include "store/forget.h"
#include "store/revision.h"

namespace strata::cli {
namespace {

struct LogArgs {
  std::string rev;
  bool graph = false, oneline = false;
  int64_t max_count = -1;  // -n N; -1: all
};

std::string Decoration(std::map<Hash, std::vector<std::string>>& names, const Hash& id) {
  return names.count(id) ? fmt::format(" ({})", fmt::join(names[id], ", ")) : "";
}

nlohmann::ordered_json CommitJson(const Hash& id, const Commit& c, std::map<Hash, std::vector<std::string>>& names,
                                  const std::unordered_set<Hash>& forgotten) {
  nlohmann::ordered_json parents = nlohmann::ordered_json::array();
  for (const Hash& p : c.parents) parents.push_back(p.ToHex());
  return {{"id", id.ToHex()},
          {"parents", parents},
          {"root", c.root.ToHex()},
          {"author", c.author},
          {"time", c.time_ns},
          {"message", c.message},
          {"branches", names.count(id) ? names[id] : std::vector<std::string>{}},
          {"forgotten", forgotten.count(id) > 0}};
}

// `log --graph`: children before parents, and a line of history kept together
// (git's --topo-order): a commit is shown once all its children are; of those
// ready, the one that became ready last goes first, tips newest first.
// With json, each commit's object gets the rows drawn with it ("graph":
// {"before", "line", "after"}) instead of being printed.
void PrintGraph(const std::vector<std::pair<Hash, Commit>>& commits,
                std::map<Hash, std::vector<std::string>>& names, const std::unordered_set<Hash>& forgotten,
                int64_t max_count, bool json) {
  std::map<Hash, const Commit*> by_id;
  std::map<Hash, int> children;
  for (const auto& [id, c] : commits) by_id[id] = &c;
  for (const auto& [id, c] : commits)
    for (const Hash& p : c.parents) children[p]++;
  std::vector<Hash> ready;  // a stack
  // commits is sorted newest first: push the tips oldest first.
  for (auto it = commits.rbegin(); it != commits.rend(); ++it)
    if (children[it->first] == 0) ready.push_back(it->first);
  LogGraph graph;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int64_t shown = 0; !ready.empty() && shown != max_count; shown++) {
    Hash id = ready.back();
    ready.pop_back();
    const Commit& c = *by_id[id];
    // A parent outside the commits listed (behind the A of A..B) is not
    // drawn, nor waited for.
    std::vector<Hash> parents;
    for (const Hash& p : c.parents)
      if (by_id.count(p)) parents.push_back(p);
    LogGraph::Row row = graph.Add(id, parents);
    for (const Hash& p : parents)
      if (--children[p] == 0) ready.push_back(p);
    if (json) {
      nlohmann::ordered_json j = CommitJson(id, c, names, forgotten);
      j["graph"] = {{"before", row.before}, {"line", row.prefix}, {"after", row.after}};
      out.push_back(std::move(j));
      continue;
    }
    for (const std::string& line : row.before) fmt::print("{}\n", line);
    fmt::print("{}{}{}{} {}\n", row.prefix, ShortId(id), Decoration(names, id),
               forgotten.count(id) ? " [forgotten]" : "", Subject(c.message));
    for (const std::string& line : row.after) fmt::print("{}\n", line);
  }
  if (json) PrintJson(out);
}

// A workspace named where log takes a revision (ws:NAME or a mountpoint)
// stands for its base commit. nullopt when spec names no workspace.
Result<std::optional<Hash>> WorkspaceBase(Store& store, const std::string& spec) {
  STRATA_ASSIGN_OR_RETURN(auto target, FindWorkspaceSide(store, spec));
  if (!target) return std::optional<Hash>();
  STRATA_ASSIGN_OR_RETURN(auto list, Workspace::List(store));
  for (const WorkspaceInfo& info : list) {
    if (info.name != target->name) continue;
    if (!info.base) return Status::NotFound("workspace '" + info.name + "' was started empty: it has no commits yet");
    return info.base;
  }
  return Status::NotFound("no workspace '" + target->name + "'");
}

// log's REV or A..B: where to start, and what to leave out (all that A
// reaches). HEAD beside a workspace is its base.
struct LogRange {
  Hash start;
  std::optional<Hash> exclude;
};
Result<LogRange> ResolveLogRange(Store& store, const std::string& spec) {
  // A workspace first: a mountpoint such as ../mnt is no range. "ws:a..b"
  // is refused as a workspace's name, and is a range.
  auto alone = WorkspaceBase(store, spec);
  if (alone.ok() && *alone) return LogRange{**alone, std::nullopt};
  const std::optional<RevRange> range = SplitHistoryRange(spec);
  if (!range) {
    if (!alone.ok()) return alone.status();
    STRATA_ASSIGN_OR_RETURN(std::string here, HeadOfCurrentMount(store, spec));
    STRATA_ASSIGN_OR_RETURN(Hash id, ResolveRevision(store, here));
    return LogRange{id, std::nullopt};
  }
  STRATA_ASSIGN_OR_RETURN(auto from_ws, WorkspaceBase(store, range->from));
  STRATA_ASSIGN_OR_RETURN(auto to_ws, WorkspaceBase(store, range->to));
  const std::optional<Hash> head = from_ws ? from_ws : to_ws;
  auto resolve = [&](const std::string& side, const std::optional<Hash>& ws) -> Result<Hash> {
    if (ws) return *ws;
    if (head) return ResolveRevision(store, HeadAs(side, head->ToHex()));
    STRATA_ASSIGN_OR_RETURN(std::string here, HeadOfCurrentMount(store, side));
    return ResolveRevision(store, here);
  };
  STRATA_ASSIGN_OR_RETURN(Hash from, resolve(range->from, from_ws));
  STRATA_ASSIGN_OR_RETURN(Hash to, resolve(range->to, to_ws));
  return LogRange{to, from};
}

// Every commit reachable from the starts, not going into `stop`.
Result<std::vector<std::pair<Hash, Commit>>> Reachable(Store& store, std::deque<Hash> todo,
                                                      const std::set<Hash>& stop) {
  std::set<Hash> seen = stop;
  std::vector<std::pair<Hash, Commit>> commits;
  while (!todo.empty()) {
    Hash id = todo.front();
    todo.pop_front();
    if (!seen.insert(id).second) continue;
    STRATA_ASSIGN_OR_RETURN(Commit c, store.GetCommit(id));
    for (const Hash& p : c.parents) todo.push_back(p);
    commits.emplace_back(id, std::move(c));
  }
  return commits;
}
struct PathArgs {
  std::string spec;
};

int RunLog(Globals& g, const LogArgs& a) {
  // A mountpoint as REV says which store to read (OpenStoreFor).
  auto store = OpenStoreFor(g, a.rev);
  if (!store.ok()) return Fail(store.status());
  auto refs = (*store)->ListRefs();
  if (!refs.ok()) return Fail(refs.status());
  std::map<Hash, std::vector<std::string>> names;  // commit -> branches pointing at it
  for (const auto& [name, id] : *refs) names[id].push_back(name);
  // Forgotten commits stay in the history; their files are gone after gc.
  auto forgotten = ForgottenCommits(**store);
  if (!forgotten.ok()) return Fail(forgotten.status());

  // REV, or A..B: what B reaches and A does not.
  std::deque<Hash> todo;
  std::set<Hash> stop;
  if (!a.rev.empty()) {
    auto range = ResolveLogRange(**store, a.rev);
    if (!range.ok()) return Fail(range.status());
    todo.push_back(range->start);
    if (range->exclude) {
      auto excluded = Reachable(**store, {*range->exclude}, {});
      if (!excluded.ok()) return Fail(excluded.status());
      for (const auto& [hidden, c] : *excluded) stop.insert(hidden);
    }
  } else {
    for (const auto& [name, id] : *refs) todo.push_back(id);
  }
  auto commits = Reachable(**store, std::move(todo), stop);
  if (!commits.ok()) return Fail(commits.status());
  std::stable_sort(commits->begin(), commits->end(),
                   [](const auto& x, const auto& y) { return x.second.time_ns > y.second.time_ns; });
  if (a.graph) {
    PrintGraph(*commits, names, *forgotten, a.max_count, g.json);
    return kExitOk;
  }
  if (a.max_count >= 0 && commits->size() > static_cast<size_t>(a.max_count)) commits->resize(a.max_count);

  if (g.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& [id, c] : *commits) j.push_back(CommitJson(id, c, names, *forgotten));
    PrintJson(j);
    return kExitOk;
  }
  for (const auto& [id, c] : *commits) {
    if (a.oneline) {
      fmt::print("{}{}{} {}\n", ShortId(id), Decoration(names, id), forgotten->count(id) ? " [forgotten]" : "",
                 Subject(c.message));
      continue;
    }
    fmt::print("commit {}{}{}\n", id.ToHex(), Decoration(names, id),
               forgotten->count(id) ? " [forgotten by strata forget: its files are no longer kept]" : "");
    fmt::print("Author: {}\n", c.author);
    fmt::print("Date:   {}\n\n", FormatCommitTime(c.time_ns));
    fmt::print("    {}\n\n", c.message);
  }
  return kExitOk;
}

std::string ModeString(const TreeEntry& e) {
  char type = '-';
  switch (e.kind) {
    case EntryKind::kDirectory: type = 'd'; break;
    case EntryKind::kSymlink: type = 'l'; break;
    case EntryKind::kFifo: type = 'p'; break;
    case EntryKind::kSocket: type = 's'; break;
    case EntryKind::kCharDevice: type = 'c'; break;
    case EntryKind::kBlockDevice: type = 'b'; break;
    default: break;
  }
  std::string s(1, type);
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; i++) s += (e.mode & (0400 >> i)) ? rwx[i] : '-';
  if (e.mode & 04000) s[3] = (e.mode & 0100) ? 's' : 'S';
  if (e.mode & 02000) s[6] = (e.mode & 0010) ? 's' : 'S';
  if (e.mode & 01000) s[9] = (e.mode & 0001) ? 't' : 'T';
  return s;
}

// Resolves REV:PATH to the commit's root and the entry at PATH.
struct Located {
  Hash root;
  TreeEntry entry;
};
Result<Located> Locate(Store& store, const std::string& spec) {
  RevPath rp = SplitRevPath(spec);
  STRATA_ASSIGN_OR_RETURN(Hash id, ResolveContentRevision(store, rp.rev));
  STRATA_ASSIGN_OR_RETURN(Commit c, store.GetCommit(id));
  STRATA_ASSIGN_OR_RETURN(TreeEntry e, LookupPath(store, c.root, rp.path));
  // A hard link shows what it links to (the first path of the inode).
  if (e.kind == EntryKind::kHardlink) {
    std::string name = e.name;
    STRATA_ASSIGN_OR_RETURN(e, LookupPath(store, c.root, e.target));
    if (e.kind == EntryKind::kDirectory || e.kind == EntryKind::kHardlink)
      return Status::Corruption("hard link '" + rp.path + "' leads to a " + EntryKindName(e.kind));
    e.name = name;
  }
  return Located{c.root, e};
}

nlohmann::ordered_json EntryJson(const TreeEntry& e) {
  nlohmann::ordered_json j{{"name", e.name}, {"kind", EntryKindName(e.kind)}, {"mode", e.mode},
                           {"uid", e.uid},   {"gid", e.gid},                  {"size", e.size},
                           {"mtime", e.mtime_sec}, {"mtime_nsec", e.mtime_nsec}};
  if (e.kind == EntryKind::kSymlink || e.kind == EntryKind::kHardlink) j["target"] = e.target;
  if (e.kind == EntryKind::kDirectory) j["tree"] = e.subtree.ToHex();
  if (e.kind == EntryKind::kFile) j["chunks"] = e.chunks.size();
  if (!e.xattrs.empty()) {
    nlohmann::ordered_json x = nlohmann::ordered_json::array();
    for (const auto& [n, v] : e.xattrs) x.push_back(n);
    j["xattrs"] = x;
  }
  return j;
}

int RunLs(Globals& g, const PathArgs& a) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto loc = Locate(**store, a.spec);
  if (!loc.ok()) return Fail(loc.status());
  std::vector<TreeEntry> entries;
  if (loc->entry.kind == EntryKind::kDirectory) {
    auto tree = (*store)->GetTree(loc->entry.subtree);
    if (!tree.ok()) return Fail(tree.status());
    entries = std::move(tree->entries);
  } else {
    entries.push_back(loc->entry);
  }
  if (g.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const TreeEntry& e : entries) j.push_back(EntryJson(e));
    PrintJson(j);
    return kExitOk;
  }
  for (const TreeEntry& e : entries) {
    std::string suffix;
    if (e.kind == EntryKind::kSymlink) suffix = " -> " + e.target;
    if (e.kind == EntryKind::kHardlink) suffix = " => " + e.target;
    fmt::print("{} {:>6} {:>6} {:>12} {} {}{}\n", ModeString(e), e.uid, e.gid, e.size,
               FormatTime(e.mtime_sec, e.mtime_nsec), e.name, suffix);
  }
  return kExitOk;
}

}  // namespace

std::optional<RevRange> SplitHistoryRange(const std::string& spec) {
  constexpr std::string_view kWorkspacePrefix = "ws:";
  if (!spec.starts_with(kWorkspacePrefix)) return SplitRevRange(spec);
  auto rest = SplitRevRange(spec.substr(kWorkspacePrefix.size()));
  if (!rest) return std::nullopt;
  // "ws:..main" left its workspace's name empty: no range of ours.
  if (spec.compare(kWorkspacePrefix.size(), 2, "..") == 0) return std::nullopt;
  rest->from = std::string(kWorkspacePrefix) + rest->from;
  return rest;
}

std::string HeadAs(const std::string& spec, const std::string& head_hex) {
  if (!spec.starts_with(kHead)) return spec;
  const std::string rest = spec.substr(kHead.size());
  if (!rest.empty() && rest[0] != '~' && rest[0] != ':') return spec;  // HEADS, HEAD_x: other names
  return head_hex + rest;
}

Result<std::string> HeadOfCurrentMount(Store& store, const std::string& spec) {
  if (HeadAs(spec, "") == spec) return spec;  // no HEAD in it
  auto here = WorkspaceArgument("");
  if (!here.ok()) return spec;  // outside every mount
  STRATA_ASSIGN_OR_RETURN(std::optional<Hash> base, WorkspaceBase(store, *here));
  if (!base) return spec;  // a mount of another store
  return HeadAs(spec, base->ToHex());
}

int CatFile(Globals& g, const std::string& given) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto resolved = HeadOfCurrentMount(**store, given);
  if (!resolved.ok()) return Fail(resolved.status());
  const std::string spec = *resolved;
  if (SplitRevPath(spec).path.empty()) return Fail(Status::InvalidArgument("'" + spec + "' names no file (REV:PATH)"));
  auto loc = Locate(**store, spec);
  if (!loc.ok()) return Fail(loc.status());
  const TreeEntry& e = loc->entry;
  if (e.kind == EntryKind::kDirectory)
    return Fail(Status::InvalidArgument("'" + spec + "' is a directory (list it with: strata ls " + spec + ")"));
  if (e.kind != EntryKind::kFile)
    return Fail(Status::InvalidArgument("'" + spec + "' is a " + EntryKindName(e.kind) + ", not a file"));
  for (const ChunkRef& c : e.chunks) {
    auto data = (*store)->Get(c.id, ObjectType::kChunk);
    if (!data.ok()) return Fail(data.status());
    if (data->size() != c.length)
      return Fail(Status::Corruption("chunk " + c.id.ToHex() + " has the wrong length for '" + spec + "'"));
    if (std::fwrite(data->data(), 1, data->size(), stdout) != data->size())
      return Fail(Status::IOError("writing to standard output", errno));
  }
  return kExitOk;
}

void RegisterHistoryCommands(CLI::App& app, Globals& g, int* exit_code) {
  static LogArgs log_args;  // option storage must outlive parsing: the app lives for the process
  auto* log = app.add_subcommand("log", "list commits, newest first (all branches when no REV)");
  log->add_option("REV", log_args.rev,
                  "start from this revision (HEAD: the default branch's head; a workspace, ws:NAME or a "
                  "mountpoint: its base); A..B: the commits B reaches and A does not");
  log->add_option("-n,--max-count", log_args.max_count, "show at most N commits")->check(CLI::NonNegativeNumber);
  auto* json = log->add_flag("--json", g.json, "machine-readable output (with --graph: the rows drawn with each)");
  log->add_flag("--graph", log_args.graph, "one line per commit, with the lines of history drawn beside it");
  // --graph draws one line per commit already: --oneline beside it changes nothing.
  log->add_flag("--oneline", log_args.oneline, "one line per commit: short id, branches, subject")->excludes(json);
  log->callback([&g, exit_code] { *exit_code = RunLog(g, log_args); });

  static PathArgs ls_args;
  auto* ls = app.add_subcommand("ls", "list a directory of a commit");
  ls->add_option("REV[:PATH]", ls_args.spec, "revision, optionally with a path inside it")->required();
  ls->add_flag("--json", g.json, "machine-readable output");
  ls->callback([&g, exit_code] { *exit_code = RunLs(g, ls_args); });

  static PathArgs cat_args;
  auto* cat = app.add_subcommand("cat", "write a file of a commit to standard output");
  cat->add_option("REV:PATH", cat_args.spec, "revision and path of a file")->required();
  cat->callback([&g, exit_code] { *exit_code = CatFile(g, cat_args.spec); });

  RegisterDiffCommands(app, g, exit_code);
  RegisterBranchCommands(app, g, exit_code);
}

}  // namespace strata::cli
