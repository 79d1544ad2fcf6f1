// Workspace::Create, List, Remove and Open reach the OS only through the
// store's Env: a failure injected there (testing/fault_env.h) at any call
// they make gives a clear error and loses nothing — no workspace half made
// under its name, no other workspace touched, no data gone.
#include <filesystem>

#include "testing/fault_env.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

class LifetimeFaultTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    auto store = Store::Open(dir_.path() + "/s", &env_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    // A workspace that every failure must leave as it is.
    auto ws = CreateAndOpen(std::nullopt, "kept");
    ASSERT_NE(ws, nullptr);
    const Attr f = Mk(*ws, kRootInode, "f");
    W(*ws, f.ino, 0, "the kept bytes");
    ASSERT_TRUE(ws->Sync(f.ino).ok());
  }
  void TearDown() override { store_.reset(); }  // before env_ goes

  void ExpectKeptWorkspaceIntact() {
    auto ws = Workspace::Open(*store_, "kept");
    ASSERT_TRUE(ws.ok()) << ws.status().ToString();
    EXPECT_EQ(ReadAll(**ws, L(**ws, kRootInode, "f").ino), "the kept bytes");
  }
  // The names in the workspaces directory, temporary ones included.
  std::set<std::string> StateDirs() {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/s/workspaces"))
      out.insert(e.path().filename().string());
    return out;
  }
  std::set<std::string> Listed() {
    std::set<std::string> out;
    auto list = Workspace::List(*store_);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (list.ok())
      for (const WorkspaceInfo& w : *list) out.insert(w.name);
    return out;
  }

  FaultEnv env_{Env::Default()};
};

TEST_F(LifetimeFaultTest, AFailureAtAnyCallOfCreateLeavesNoWorkspaceAndNoTemporary) {
  int failures = 0;
  for (uint64_t n = 1;; n++) {
    env_.FailAt(env_.operations() + n, EIO);
    Status s = Workspace::Create(*store_, "new", std::nullopt, "main");
    env_.FailAt(0, 0);
    if (s.ok()) break;
    failures++;
    EXPECT_NE(s.message().find("injected failure"), std::string::npos) << s.ToString();
    EXPECT_EQ(StateDirs(), (std::set<std::string>{"kept"})) << "after failing call " << n << ": " << s.ToString();
    EXPECT_TRUE(Workspace::Open(*store_, "new").status().IsNotFound());
    ASSERT_LT(n, 200u) << "Create never succeeds";
  }
  // Creating the directory, its data directory, the syncs, the rename into
  // place and the removal of a leftover: each was failed once.
  EXPECT_GE(failures, 5);
  EXPECT_EQ(Listed(), (std::set<std::string>{"kept", "new"}));
  ExpectKeptWorkspaceIntact();
}

TEST_F(LifetimeFaultTest, ARenameIntoPlaceNeverReplacesAWorkspaceThatAppearedMeanwhile) {
  // Another process's workspace of the same name lands between the check and
  // the rename: the rename refuses to replace it.
  class RacingEnv : public FaultEnv {
   public:
    RacingEnv() : FaultEnv(Env::Default()) {}
    Status RenameNoReplace(const std::string& from, const std::string& to) override {
      if (to.ends_with("/racer")) (void)Env::Default()->CreateDir(to);
      return FaultEnv::RenameNoReplace(from, to);
    }
  } env;
  auto store = Store::Open(dir_.path() + "/s", &env);
  ASSERT_TRUE(store.ok());
  Status s = Workspace::Create(**store, "racer", std::nullopt, "main");
  EXPECT_EQ(s.code(), Status::Code::kAlreadyExists) << s.ToString();
  EXPECT_NE(s.message().find("workspace 'racer' exists"), std::string::npos) << s.ToString();
  EXPECT_EQ(StateDirs(), (std::set<std::string>{"kept", "racer"}));  // no temporary left
}

TEST_F(LifetimeFaultTest, AFailedListingIsAClearErrorAndLosesNoWorkspace) {
  env_.FailQueries(EIO);
  auto list = Workspace::List(*store_);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().errno_value(), EIO);
  EXPECT_NE(list.status().message().find("listing the workspaces"), std::string::npos) << list.status().ToString();
  env_.FailQueries(0);
  EXPECT_EQ(Listed(), (std::set<std::string>{"kept"}));
  ExpectKeptWorkspaceIntact();
}

TEST_F(LifetimeFaultTest, ABootIdThatCannotBeReadRefusesTheOpenAndChangesNothing) {
  env_.FailQueries(EIO);
  auto ws = Workspace::Open(*store_, "kept");
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.status().errno_value(), EIO);
  EXPECT_NE(ws.status().message().find("cannot tell whether the machine restarted"), std::string::npos)
      << ws.status().ToString();
  env_.FailQueries(0);
  ExpectKeptWorkspaceIntact();
}

TEST_F(LifetimeFaultTest, AFailureAtAnyCallOfRemoveIsReportedAndLeavesTheWorkspaceWholeOrGone) {
  int failures = 0;
  for (uint64_t n = 1;; n++) {
    {
      auto ws = CreateAndOpen(std::nullopt, "doomed");
      ASSERT_NE(ws, nullptr);
      W(*ws, Mk(*ws, kRootInode, "g").ino, 0, "doomed bytes");
    }
    env_.FailAt(env_.operations() + n, EIO);
    Status s = Workspace::Remove(*store_, "doomed");
    env_.FailAt(0, 0);
    if (s.ok()) break;
    failures++;
    EXPECT_NE(s.message().find("injected failure"), std::string::npos) << s.ToString();
    auto ws = Workspace::Open(*store_, "doomed");
    if (ws.ok()) {
      // Failed before it began: the workspace is whole.
      EXPECT_EQ(ReadAll(**ws, L(**ws, kRootInode, "g").ino), "doomed bytes");
      ws->reset();
      ASSERT_TRUE(Workspace::Remove(*store_, "doomed").ok());
    } else {
      // Failed while deleting what was already renamed away: gone, and said so.
      EXPECT_TRUE(ws.status().IsNotFound()) << ws.status().ToString();
      EXPECT_NE(s.message().find("was removed, but not all of its files"), std::string::npos) << s.ToString();
    }
    EXPECT_EQ(Listed(), (std::set<std::string>{"kept"}));
    ExpectKeptWorkspaceIntact();
    ASSERT_LT(n, 200u) << "Remove never succeeds";
  }
  EXPECT_GE(failures, 2);  // the rename away and the deletion
  EXPECT_EQ(Listed(), (std::set<std::string>{"kept"}));
}

}  // namespace
}  // namespace strata::workspace_testing
