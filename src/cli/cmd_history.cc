// log, ls, cat: reading commits and the trees inside them. The rest of the
// family (show, diff, branch, fork) is in cmd_diff.cc and cmd_branch.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>

#include "cli/history.h"
#include "store/forget.h"
#include "store/revision.h"
#include "util/time_ns.h"

namespace strata::cli {
namespace {

struct LogArgs {
  std::string rev;
  bool graph = false;
};

// `log --graph`: children before parents, and a line of history kept together
// (git's --topo-order): a commit is shown once all its children are; of those
// ready, the one that became ready last goes first, tips newest first.
void PrintGraph(const std::vector<std::pair<Hash, Commit>>& commits,
                std::map<Hash, std::vector<std::string>>& names, const std::unordered_set<Hash>& forgotten) {
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
  while (!ready.empty()) {
    Hash id = ready.back();
    ready.pop_back();
    const Commit& c = *by_id[id];
    LogGraph::Row row = graph.Add(id, c.parents);
    std::string branches;
    if (names.count(id)) branches = fmt::format(" ({})", fmt::join(names[id], ", "));
    fmt::print("{}{}{}{} {}\n", row.prefix, ShortId(id), branches, forgotten.count(id) ? " [forgotten]" : "",
               Subject(c.message));
    for (const std::string& line : row.after) fmt::print("{}\n", line);
    for (const Hash& p : c.parents)
      if (--children[p] == 0) ready.push_back(p);
  }
}
struct PathArgs {
  std::string spec;
};

int RunLog(Globals& g, const LogArgs& a) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto refs = (*store)->ListRefs();
  if (!refs.ok()) return Fail(refs.status());
  std::map<Hash, std::vector<std::string>> names;  // commit -> branches pointing at it
  for (const auto& [name, id] : *refs) names[id].push_back(name);
  // Forgotten commits stay in the history; their files are gone after gc.
  auto forgotten = ForgottenCommits(**store);
  if (!forgotten.ok()) return Fail(forgotten.status());

  std::deque<Hash> todo;
  if (!a.rev.empty()) {
    auto id = ResolveRevision(**store, a.rev);
    if (!id.ok()) return Fail(id.status());
    todo.push_back(*id);
  } else {
    for (const auto& [name, id] : *refs) todo.push_back(id);
  }
  std::set<Hash> seen;
  std::vector<std::pair<Hash, Commit>> commits;
  while (!todo.empty()) {
    Hash id = todo.front();
    todo.pop_front();
    if (!seen.insert(id).second) continue;
    auto c = (*store)->GetCommit(id);
    if (!c.ok()) return Fail(c.status());
    for (const Hash& p : c->parents) todo.push_back(p);
    commits.emplace_back(id, std::move(c).value());
  }
  std::stable_sort(commits.begin(), commits.end(),
                   [](const auto& x, const auto& y) { return x.second.time_ns > y.second.time_ns; });
  if (a.graph) {
    PrintGraph(commits, names, *forgotten);
    return kExitOk;
  }

  if (g.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& [id, c] : commits) {
      nlohmann::ordered_json parents = nlohmann::ordered_json::array();
      for (const Hash& p : c.parents) parents.push_back(p.ToHex());
      j.push_back({{"id", id.ToHex()},
                   {"parents", parents},
                   {"root", c.root.ToHex()},
                   {"author", c.author},
                   {"time", c.time_ns},
                   {"message", c.message},
                   {"branches", names.count(id) ? names[id] : std::vector<std::string>{}},
                   {"forgotten", forgotten->count(id) > 0}});
    }
    PrintJson(j);
    return kExitOk;
  }
  for (const auto& [id, c] : commits) {
    std::string branches;
    if (names.count(id)) branches = fmt::format(" ({})", fmt::join(names[id], ", "));
    fmt::print("commit {}{}{}\n", id.ToHex(), branches,
               forgotten->count(id) ? " [forgotten by strata forget: its files are no longer kept]" : "");
    fmt::print("Author: {}\n", c.author);
    const SplitTime when = SplitNs(c.time_ns);
    fmt::print("Date:   {}\n\n", FormatTime(when.sec, when.nsec));
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

int RunCat(Globals& g, const PathArgs& a) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  if (SplitRevPath(a.spec).path.empty()) return Fail(Status::InvalidArgument("cat needs REV:PATH naming a file"));
  auto loc = Locate(**store, a.spec);
  if (!loc.ok()) return Fail(loc.status());
  const TreeEntry& e = loc->entry;
  if (e.kind == EntryKind::kDirectory) return Fail(Status::InvalidArgument("'" + a.spec + "' is a directory"));
  if (e.kind != EntryKind::kFile)
    return Fail(Status::InvalidArgument("'" + a.spec + "' is a " + EntryKindName(e.kind) + ", not a file"));
  for (const ChunkRef& c : e.chunks) {
    auto data = (*store)->Get(c.id, ObjectType::kChunk);
    if (!data.ok()) return Fail(data.status());
    if (data->size() != c.length)
      return Fail(Status::Corruption("chunk " + c.id.ToHex() + " has the wrong length for '" + a.spec + "'"));
    if (std::fwrite(data->data(), 1, data->size(), stdout) != data->size())
      return Fail(Status::IOError("writing to standard output", errno));
  }
  return kExitOk;
}

}  // namespace

void RegisterHistoryCommands(CLI::App& app, Globals& g, int* exit_code) {
  static LogArgs log_args;  // option storage must outlive parsing: the app lives for the process
  auto* log = app.add_subcommand("log", "list commits, newest first (all branches when no REV)");
  log->add_option("REV", log_args.rev, "start from this revision");
  auto* json = log->add_flag("--json", g.json, "machine-readable output");
  log->add_flag("--graph", log_args.graph, "one line per commit, with the lines of history drawn beside it")
      ->excludes(json);
  log->callback([&g, exit_code] { *exit_code = RunLog(g, log_args); });

  static PathArgs ls_args;
  auto* ls = app.add_subcommand("ls", "list a directory of a commit");
  ls->add_option("REV[:PATH]", ls_args.spec, "revision, optionally with a path inside it")->required();
  ls->add_flag("--json", g.json, "machine-readable output");
  ls->callback([&g, exit_code] { *exit_code = RunLs(g, ls_args); });

  static PathArgs cat_args;
  auto* cat = app.add_subcommand("cat", "write a file of a commit to standard output");
  cat->add_option("REV:PATH", cat_args.spec, "revision and path of a file")->required();
  cat->callback([&g, exit_code] { *exit_code = RunCat(g, cat_args); });

  RegisterDiffCommands(app, g, exit_code);
  RegisterBranchCommands(app, g, exit_code);
}

}  // namespace strata::cli
