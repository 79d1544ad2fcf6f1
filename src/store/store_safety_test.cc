// A store is a directory anyone with write access to it can rearrange: links
// planted inside it must never lead strata outside, and a store that is not
// its user's own is refused unless trusted (env/beneath.h, env/trust.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "env/beneath.h"
#include "store/index.h"
#include "store/store.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  auto data = Env::Default()->ReadFile(path);
  return data.ok() ? *data : "(unreadable)";
}

class StoreSafetyTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    UseOpenat2ForTesting(GetParam());
    path_ = dir_.path() + "/store";
    outside_ = dir_.path() + "/outside";
    ASSERT_TRUE(Store::Init(path_, StoreConfig()).ok());
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto put = (*store)->Put(ObjectType::kChunk, testing::RandomBytes(5000, 7));
    ASSERT_TRUE(put.ok());
    id_ = put->id;
    ASSERT_TRUE((*store)->Flush().ok());
    fs::create_directory(outside_);
  }
  void TearDown() override {
    UseOpenat2ForTesting(true);
    ::unsetenv("STRATA_TRUSTED_DIRS");
  }
  std::string Pack() {
    for (const auto& e : fs::directory_iterator(path_ + "/packs")) return e.path().string();
    return "";
  }
  // Moves `inside` out of the store and leaves a link to it in its place.
  std::string ReplaceWithLink(const std::string& inside, const std::string& name) {
    const std::string target = outside_ + "/" + name;
    fs::rename(inside, target);
    fs::create_symlink(target, inside);
    return target;
  }
  static void ExpectLinkRefused(const Status& s) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.ToString();
  }

  testing::TempDir dir_;
  std::string path_, outside_;
  Hash id_;
};

TEST_P(StoreSafetyTest, LinkedPackIsRefusedAndNotRead) {
  const std::string target = ReplaceWithLink(Pack(), "pack");
  const std::string before = Slurp(target);
  auto store = Store::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = (*store)->Get(id_, ObjectType::kChunk);
  ExpectLinkRefused(got.status());
  EXPECT_EQ(Slurp(target), before);
}

TEST_P(StoreSafetyTest, LinkedPacksDirectoryIsRefused) {
  ReplaceWithLink(path_ + "/packs", "packs");
  auto store = Store::Open(path_);
  ExpectLinkRefused(store.status());
}

TEST_P(StoreSafetyTest, LinkedTmpDirectoryGetsNoPack) {
  ReplaceWithLink(path_ + "/tmp", "tmp");
  auto store = Store::Open(path_);
  ExpectLinkRefused(store.status());
  EXPECT_TRUE(fs::is_empty(outside_ + "/tmp"));
}

TEST_P(StoreSafetyTest, LinkedIndexIsRefusedAndUntouched) {
  const std::string target = ReplaceWithLink(path_ + "/index.db", "index.db");
  const std::string before = Slurp(target);
  auto store = Store::Open(path_);
  ExpectLinkRefused(store.status());
  EXPECT_EQ(Slurp(target), before);
  EXPECT_FALSE(fs::exists(target + "-wal"));
}

TEST_P(StoreSafetyTest, LinkedConfigAndLockAreRefused) {
  ReplaceWithLink(path_ + "/config.json", "config.json");
  ExpectLinkRefused(Store::Open(path_).status());
  fs::remove(path_ + "/config.json");
  fs::rename(outside_ + "/config.json", path_ + "/config.json");
  // gc.lock is created and locked by every write session: a link planted
  // there must not create or lock a file elsewhere.
  fs::remove(path_ + "/gc.lock");
  fs::create_symlink(outside_ + "/planted", path_ + "/gc.lock");
  auto store = Store::Open(path_);  // recovery holds a session
  ExpectLinkRefused(store.status());
  EXPECT_FALSE(fs::exists(outside_ + "/planted"));
}

TEST_P(StoreSafetyTest, StoreOfAnotherUserIsRefusedUnlessTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the store away";
  ASSERT_EQ(::chown(path_.c_str(), 65534, 65534), 0);
  auto refused = Store::Open(path_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("owned by uid 65534"), std::string::npos) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("STRATA_TRUSTED_DIRS"), std::string::npos);
  ::setenv("STRATA_TRUSTED_DIRS", ("/nonexistent:" + fs::canonical(path_).string()).c_str(), 1);
  EXPECT_TRUE(Store::Open(path_).ok());
}

TEST_P(StoreSafetyTest, GroupOrWorldWritableStoreIsRefusedUnlessTrusted) {
  for (mode_t mode : {0770, 0707}) {
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
    auto refused = Store::Open(path_);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find(mode == 0770 ? "writable by its group" : "writable by others"),
              std::string::npos)
        << refused.status().ToString();
  }
  ::setenv("STRATA_TRUSTED_DIRS", "*", 1);
  EXPECT_TRUE(Store::Open(path_).ok());
}

TEST_P(StoreSafetyTest, ConfinedEnvRefusesPathsOutsideAndLinksOnTheWay) {
  auto env = Env::Default()->Beneath(path_);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ((*env)->ReadFile(path_ + "/../outside/x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*env)->ReadFile(dir_.path() + "/elsewhere").status().code(), Status::Code::kInvalidArgument);
  fs::create_directory(outside_ + "/d");
  fs::create_symlink(outside_, path_ + "/up");
  ExpectLinkRefused((*env)->NewWritableFile(path_ + "/up/d/new").status());
  ExpectLinkRefused((*env)->WriteFileAtomically(path_ + "/up/new", "x"));
  ExpectLinkRefused((*env)->CreateDir(path_ + "/up"));
  EXPECT_TRUE(fs::is_empty(outside_ + "/d"));
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  EXPECT_TRUE((*env)->WriteFileAtomically(path_ + "/plain", "ok").ok());
  EXPECT_EQ(*(*env)->ReadFile(path_ + "/plain"), "ok");
}

// RemoveTree takes a tree away, removing the links in it rather than what
// they point at; RenameNoReplace never replaces what is in the way. The same
// through the default Env and a store's confined one.
TEST_P(StoreSafetyTest, RemoveTreeRemovesLinksNotWhatTheyPointAtAndRenameNoReplaceReplacesNothing) {
  auto confined = Env::Default()->Beneath(path_);
  ASSERT_TRUE(confined.ok());
  for (Env* env : {Env::Default(), confined->get()}) {
    const std::string tree = path_ + "/tree";
    fs::create_directories(tree + "/a/b");
    ASSERT_TRUE(env->WriteFileAtomically(tree + "/a/b/f", "x").ok());
    ASSERT_TRUE(Env::Default()->WriteFileAtomically(outside_ + "/kept", "kept").ok());
    fs::create_symlink(outside_, tree + "/a/up");
    fs::create_symlink(outside_ + "/kept", tree + "/kept-link");
    // Nothing in the way: moved; a file or a directory in the way: refused, both kept.
    fs::create_directory(path_ + "/busy");
    ASSERT_TRUE(env->WriteFileAtomically(path_ + "/busy/inside", "busy").ok());
    EXPECT_EQ(env->RenameNoReplace(tree, path_ + "/busy").code(), Status::Code::kAlreadyExists);
    EXPECT_EQ(env->RenameNoReplace(tree + "/a/b/f", path_ + "/busy/inside").code(), Status::Code::kAlreadyExists);
    EXPECT_EQ(Slurp(path_ + "/busy/inside"), "busy");
    EXPECT_TRUE(env->RenameNoReplace(tree, path_ + "/moved").ok());
    EXPECT_EQ(Slurp(path_ + "/moved/a/b/f"), "x");
    EXPECT_TRUE(env->RemoveTree(path_ + "/moved").ok());
    EXPECT_FALSE(fs::exists(fs::symlink_status(path_ + "/moved")));
    EXPECT_EQ(Slurp(outside_ + "/kept"), "kept");
    EXPECT_TRUE(env->RemoveTree(path_ + "/moved").ok()) << "a tree that is not there is no error";
    EXPECT_TRUE(env->RemoveTree(path_ + "/busy").ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Openat2AndWalk, StoreSafetyTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "openat2" : "walk"; });

}  // namespace
}  // namespace strata
