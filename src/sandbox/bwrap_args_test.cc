#include "sandbox/bwrap_args.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace strata::sandbox {
namespace {

// The position of the first `flag` followed by `values` in args; -1 if none.
int Find(const std::vector<std::string>& args, std::vector<std::string> seq) {
  auto it = std::search(args.begin(), args.end(), seq.begin(), seq.end());
  return it == args.end() ? -1 : static_cast<int>(it - args.begin());
}

SandboxSpec AtSpec() {
  SandboxSpec s;
  s.tree = "/store/ws/mnt";
  s.at = "/work";
  s.command = {"make", "-j2"};
  return s;
}

TEST(BwrapArgs, AtLayoutShowsTheHostReadOnlyAndTheTreeWritableAtDir) {
  SandboxSpec s = AtSpec();
  s.hide = {"/store"};
  auto a = BwrapArgs(s);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ((*a)[0], "bwrap");
  EXPECT_GE(Find(*a, {"--unshare-all"}), 0);
  EXPECT_GE(Find(*a, {"--die-with-parent"}), 0);
  EXPECT_EQ(Find(*a, {"--share-net"}), -1);
  int ro = Find(*a, {"--ro-bind", "/", "/"});
  int hide = Find(*a, {"--tmpfs", "/store"});
  int bind = Find(*a, {"--bind", "/store/ws/mnt", "/work"});
  ASSERT_GE(ro, 0);
  ASSERT_GE(hide, 0);
  ASSERT_GE(bind, 0);
  // Later mounts cover earlier ones: the tree must come after what hides the store.
  EXPECT_LT(ro, hide);
  EXPECT_LT(hide, bind);
  EXPECT_GE(Find(*a, {"--chdir", "/work"}), 0);
  // The command follows "--" unchanged, at the end.
  EXPECT_EQ(std::vector<std::string>(a->end() - 3, a->end()), (std::vector<std::string>{"--", "make", "-j2"}));
}

TEST(BwrapArgs, NetAndUidAreAskedFor) {
  SandboxSpec s = AtSpec();
  s.net = true;
  s.uid = 1234;
  auto a = BwrapArgs(s);
  ASSERT_TRUE(a.ok());
  EXPECT_GE(Find(*a, {"--share-net"}), 0);
  EXPECT_GE(Find(*a, {"--unshare-user", "--uid", "1234", "--gid", "1234"}), 0);
}

TEST(BwrapArgs, RootLayoutShowsNothingOfTheHost) {
  SandboxSpec s = AtSpec();
  s.layout = SandboxSpec::Layout::kRoot;
  auto a = BwrapArgs(s);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Find(*a, {"--ro-bind"}), -1);
  EXPECT_GE(Find(*a, {"--bind", "/store/ws/mnt", "/"}), 0);
  EXPECT_GE(Find(*a, {"--proc", "/proc"}), 0);
  EXPECT_GE(Find(*a, {"--tmpfs", "/tmp"}), 0);
  EXPECT_GE(Find(*a, {"--chdir", "/"}), 0);
}

TEST(BwrapArgs, RefusesWhatCannotRun) {
  SandboxSpec s = AtSpec();
  s.command.clear();
  EXPECT_FALSE(BwrapArgs(s).ok());
  s = AtSpec();
  s.at = "work";
  EXPECT_FALSE(BwrapArgs(s).ok());
  s = AtSpec();
  s.at = "/";
  EXPECT_FALSE(BwrapArgs(s).ok());
  s = AtSpec();
  s.hide = {"/"};  // would cover the directory the tree is bound at
  EXPECT_FALSE(BwrapArgs(s).ok());
  s = AtSpec();
  s.hide = {"/wor"};  // a prefix of the name, not a parent
  EXPECT_TRUE(BwrapArgs(s).ok());
}

}  // namespace
}  // namespace strata::sandbox
