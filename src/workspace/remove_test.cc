// Workspace::Remove against an Open of the same workspace: the two exclude
// each other through the workspace's lock, so a removal never deletes the
// files of a workspace that is open.
#include <optional>

#include "testing/fault_env.h"
#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

// Runs `during` when the removal renames the workspace's directory away (the
// moment an Open could slip in if the lock were not held across the rename).
class RenameHookEnv : public FaultEnv {
 public:
  RenameHookEnv() : FaultEnv(Env::Default()) {}
  std::function<void()> during;

  Status Rename(const std::string& from, const std::string& to) override {
    if (during && to.find("/.removing-") != std::string::npos) {
      during();
      during = nullptr;
    }
    return FaultEnv::Rename(from, to);
  }
};

class RemoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    auto store = Store::Open(dir_.path() + "/s", &env_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ASSERT_TRUE(Workspace::Create(*store_, "ws", std::nullopt, "main").ok());
  }

  testing::TempDir dir_;
  RenameHookEnv env_;
  std::unique_ptr<Store> store_;  // after env_: closed before it
};

// The bug: Remove took the lock to see that nobody had the workspace open,
// let go of it, and then renamed the directory away and deleted it; an Open
// in between got the lock, and a workspace whose files were then deleted
// under it.
TEST_F(RemoveTest, AnOpenDuringTheRemovalIsRefusedAndKeepsNothingDeletedUnderIt) {
  std::optional<Status> opened_meanwhile;
  std::unique_ptr<Workspace> ws;
  env_.during = [&] {
    auto opened = Workspace::Open(*store_, "ws");
    opened_meanwhile = opened.status();
    if (opened.ok()) ws = std::move(opened).value();
  };
  Status removed = Workspace::Remove(*store_, "ws");
  ASSERT_TRUE(opened_meanwhile.has_value()) << "the removal did not rename the workspace away";
  EXPECT_FALSE(opened_meanwhile->ok()) << "an Open succeeded while the workspace was being removed";
  EXPECT_EQ(opened_meanwhile->errno_value(), EBUSY) << opened_meanwhile->ToString();
  EXPECT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_TRUE(Workspace::Open(*store_, "ws").status().IsNotFound());
  // Had the Open won, the workspace it returned would now have no directory:
  // its database and data files deleted while it was open.
  ws.reset();
}

TEST_F(RemoveTest, AnOpenWorkspaceIsNotRemoved) {
  auto ws = Workspace::Open(*store_, "ws");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(Errno(Workspace::Remove(*store_, "ws")), EBUSY);
  ws->reset();
  EXPECT_TRUE(Workspace::Remove(*store_, "ws").ok());
  EXPECT_TRUE(Workspace::Open(*store_, "ws").status().IsNotFound());
}

}  // namespace
}  // namespace strata::workspace_testing
