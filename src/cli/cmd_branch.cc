// branch create|list|delete and fork: naming commits. A branch is a ref in the
// store; every change of one is a compare-and-swap from the value this command
// read, so two commands racing on one name never overwrite each other.
#include <fmt/format.h>

#include <cstdio>

#include "cli/history.h"
#include "store/revision.h"
#include "workspace/workspace.h"

namespace strata::cli {
namespace {

struct CreateArgs {
  std::string name, rev;
};

// Creates branch `name` at revision `rev`; no data is copied.
int CreateBranch(Globals& g, const std::string& name, const std::string& rev) {
  if (!IsValidRefName(name))
    return Fail(Status::InvalidArgument("'" + name +
                                        "' is not a valid branch name (letters, digits, '-', '_', '.', '/'; "
                                        "see docs/format/store.md)"));
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto current = (*store)->GetRef(name);
  if (!current.ok()) return Fail(current.status());
  if (*current) return Fail(Status::AlreadyExists("branch '" + name + "' exists"));
  auto id = ResolveContentRevision(**store, rev);
  if (!id.ok()) return Fail(id.status());
  Status s = (*store)->CompareAndSwapRef(name, std::nullopt, *id);
  // Created by someone else between the check and the swap.
  if (s.IsConflict()) return Fail(Status::Conflict("branch '" + name + "' exists (created meanwhile)"));
  if (!s.ok()) return Fail(s);
  fmt::print("branch {} at {}\n", name, id->ToHex());
  return kExitOk;
}

int RunBranchList(Globals& g) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto refs = (*store)->ListRefs();
  if (!refs.ok()) return Fail(refs.status());
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  size_t width = 0;
  for (const auto& [name, id] : *refs) {
    auto c = (*store)->GetCommit(id);
    if (!c.ok()) return Fail(c.status().WithContext("branch '" + name + "'"));
    j.push_back({{"name", name}, {"commit", id.ToHex()}, {"subject", Subject(c->message)}});
    width = std::max(width, name.size());
  }
  if (g.json) {
    PrintJson(j);
    return kExitOk;
  }
  for (const auto& b : j)
    fmt::print("{:<{}}  {}  {}\n", b["name"].get<std::string>(), width, b["commit"].get<std::string>().substr(0, 12),
               b["subject"].get<std::string>());
  return kExitOk;
}

int RunBranchDelete(Globals& g, const std::string& name) {
  if (!IsValidRefName(name)) return Fail(Status::InvalidArgument("'" + name + "' is not a valid branch name"));
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto current = (*store)->GetRef(name);
  if (!current.ok()) return Fail(current.status());
  if (!*current) return Fail(Status::NotFound("no branch '" + name + "'"));
  if (Status s = (*store)->DeleteRef(name, **current); !s.ok()) return Fail(s);
  fmt::print("deleted branch {} (was {})\n", name, current->value().ToHex());
  // Workspaces remember the branch they were started from; say so rather than
  // let a later commit surprise anyone.
  if (auto list = Workspace::List(**store); list.ok()) {
    for (const WorkspaceInfo& w : *list)
      if (w.branch == name)
        std::fprintf(stderr, "strata: note: workspace '%s' was started on branch '%s'\n", w.name.c_str(),
                     name.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterBranchCommands(CLI::App& app, Globals& g, int* exit_code) {
  auto* branch = app.add_subcommand("branch", "create, list or delete branches");
  branch->require_subcommand(1);

  static CreateArgs create_args;  // option storage must outlive parsing: the app lives for the process
  auto* create = branch->add_subcommand("create", "a new branch at a revision (copies nothing)");
  create->add_option("NAME", create_args.name, "name of the new branch")->required();
  create->add_option("REV", create_args.rev, "the commit it starts at")->required();
  create->callback([&g, exit_code] { *exit_code = CreateBranch(g, create_args.name, create_args.rev); });

  auto* list = branch->add_subcommand("list", "every branch: name, commit, subject");
  list->add_flag("--json", g.json, "machine-readable output");
  list->callback([&g, exit_code] { *exit_code = RunBranchList(g); });

  static std::string delete_name;
  auto* del = branch->add_subcommand("delete", "delete a branch (its commits stay in the store)");
  del->add_option("NAME", delete_name, "the branch")->required();
  del->callback([&g, exit_code] { *exit_code = RunBranchDelete(g, delete_name); });

  static CreateArgs fork_args;
  auto* fork = app.add_subcommand("fork", "start a new branch at a revision (copies nothing)");
  fork->add_option("NEW", fork_args.name, "name of the new branch")->required();
  fork->add_option("--from", fork_args.rev, "the revision it starts at")->required();
  fork->callback([&g, exit_code] { *exit_code = CreateBranch(g, fork_args.name, fork_args.rev); });
}

}  // namespace strata::cli
