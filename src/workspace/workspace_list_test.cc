// Workspace::List while other processes create and remove workspaces: a
// workspace removed between the listing of the directory and the opening of
// its database is one that no longer exists, not an error of the listing
// (mount.fuse.strata lists workspaces on every mount, and a read-only mount's
// own workspace is removed when it ends).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "testing/store_test_util.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

TEST(WorkspaceListTest, AWorkspaceRemovedWhileListingIsLeftOutNotAnError) {
  testing::TempDir dir;
  ASSERT_TRUE(Store::Init(dir.path() + "/s", StoreConfig()).ok());
  auto store = std::move(Store::Open(dir.path() + "/s")).value();
  ASSERT_TRUE(Workspace::Create(*store, "kept", std::nullopt, "").ok());

  // Removal renames a workspace's directory away, then deletes it: a listing
  // that read the name just before finds its database gone or half deleted.
  // The churn records its own failure and always ends the listing loop: an
  // ASSERT in the thread would return before `done` and hang the test.
  std::atomic<bool> done{false};
  std::string churn_failure;  // read only after join
  std::thread churn([&] {
    for (int i = 0; i < 60 && churn_failure.empty(); ++i) {
      if (Status created = Workspace::Create(*store, "churn", std::nullopt, ""); !created.ok())
        churn_failure = "create " + std::to_string(i) + ": " + created.ToString();
      else if (Status removed = Workspace::Remove(*store, "churn"); !removed.ok())
        churn_failure = "remove " + std::to_string(i) + ": " + removed.ToString();
    }
    done = true;
  });
  int listings = 0;
  int failures = 0;
  std::string first_failure;
  while (!done) {
    auto list = Workspace::List(*store);
    ++listings;
    if (!list.ok()) {
      if (failures++ == 0) first_failure = list.status().ToString();
      continue;
    }
    bool kept = false;
    for (const WorkspaceInfo& w : *list) {
      kept = kept || w.name == "kept";
      EXPECT_TRUE(w.name == "kept" || w.name == "churn") << w.name;
    }
    EXPECT_TRUE(kept) << "the workspace nobody removed is listed";
  }
  churn.join();
  EXPECT_EQ(churn_failure, "");
  EXPECT_EQ(failures, 0) << failures << " of " << listings << " listings failed; the first: " << first_failure;
  EXPECT_GT(listings, 10);
}

}  // namespace
}  // namespace strata
