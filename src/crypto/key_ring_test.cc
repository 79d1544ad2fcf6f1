// The key ring: create, add, list, remove, change a passphrase, files of
// mode 0600; and crash safety of a passphrase change, failing or cutting the
// power at every step with the fault-injecting Env.
#include "crypto/key_ring.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>

#include "testing/fault_env.h"
#include "testing/store_test_util.h"

namespace strata::crypto {
namespace {

constexpr ScryptParams kFast{10, 8, 1};

class KeyRingTest : public ::testing::Test {
 protected:
  std::string Dir() const { return tmp_.path() + "/keys"; }
  KeyRing Ring(Env* env = Env::Default()) { return KeyRing(env, Dir(), kFast); }
  bool Opens(std::string_view passphrase) { return Ring().Open(passphrase).ok(); }

  testing::TempDir tmp_;
};

TEST_F(KeyRingTest, CreateOpenAndRefuseAWrongPassphrase) {
  auto created = Ring().Create("first");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto opened = Ring().Open("first");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->key_id, created->id);
  auto wrong = Ring().Open("second");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("wrong passphrase"), std::string::npos);
  EXPECT_EQ(Ring().Create("again").status().code(), Status::Code::kAlreadyExists);
  EXPECT_TRUE(KeyRing(Env::Default(), tmp_.path() + "/none", kFast).Open("first").status().IsNotFound());
}

TEST_F(KeyRingTest, KeyFilesAreMode0600) {
  auto created = Ring().Create("first");
  ASSERT_TRUE(created.ok());
  struct stat st {};
  ASSERT_EQ(::stat((Dir() + "/" + created->id + ".key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat(Dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
}

TEST_F(KeyRingTest, AddListRemove) {
  auto first = Ring().Create("first");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(Ring().Add("wrong", "second").ok());
  auto second = Ring().Add("first", "second");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto keys = Ring().List();
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ(Ring().Open("first")->master, Ring().Open("second")->master);  // one master key
  // A key goes only with the passphrase of another one.
  EXPECT_FALSE(Ring().Remove("first", first->id).ok());
  EXPECT_TRUE(Ring().Remove("first", "00").IsNotFound());
  ASSERT_TRUE(Ring().Remove("second", first->id).ok());
  EXPECT_FALSE(Opens("first"));
  EXPECT_TRUE(Opens("second"));
  // Never the last one.
  Status last = Ring().Remove("second", second->id);
  EXPECT_FALSE(last.ok());
  EXPECT_NE(last.message().find("last key"), std::string::npos);
  EXPECT_TRUE(Opens("second"));
}

TEST_F(KeyRingTest, ChangePassphraseKeepsTheMasterKey) {
  ASSERT_TRUE(Ring().Create("old").ok());
  auto before = Ring().Open("old");
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(Ring().ChangePassphrase("wrong", "new").ok());
  auto changed = Ring().ChangePassphrase("old", "new");
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_FALSE(Opens("old"));
  auto after = Ring().Open("new");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->master, before->master);
  EXPECT_EQ(Ring().List()->size(), 1u);
}

TEST_F(KeyRingTest, DamagedKeyFileIsNamed) {
  auto created = Ring().Create("first");
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(Dir() + "/" + std::string(32, 'a') + ".key", "junk").ok());
  auto keys = Ring().List();
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find(std::string(32, 'a')), std::string::npos);
  EXPECT_TRUE(Opens("first"));  // a good key still opens
}

// A crash at any step of a passphrase change: every Env call from the n-th
// on fails (the process dies there), then the power is cut. The old or the
// new passphrase opens the ring afterwards, and the next change succeeds.
TEST_F(KeyRingTest, CrashDuringChangePassphraseLeavesAWorkingPassphrase) {
  bool saw_both = false, saw_done = false;
  for (uint64_t n = 1; n < 40 && !saw_done; n++) {
    std::filesystem::remove_all(Dir());
    ASSERT_TRUE(Ring().Create("old").ok());
    auto master = Ring().Open("old");
    ASSERT_TRUE(master.ok());
    FaultEnv fault(Env::Default());
    fault.FailAt(n, EIO, /*sticky=*/true);
    Result<KeyInfo> changed = KeyRing(&fault, Dir(), kFast).ChangePassphrase("old", "new");
    ASSERT_TRUE(fault.PowerCut().ok());
    bool old_opens = Opens("old"), new_opens = Opens("new");
    ASSERT_TRUE(old_opens || new_opens) << "crash at step " << n;
    if (changed.ok()) {
      EXPECT_TRUE(new_opens && !old_opens) << "step " << n;
    }
    for (std::string_view pw : {"old", "new"}) {
      if (auto opened = Ring().Open(pw); opened.ok()) {
        EXPECT_EQ(opened->master, master->master);
      }
    }
    saw_both |= old_opens && new_opens;
    saw_done |= changed.ok();
    // What the crash left does not hinder the next change.
    std::string_view working = old_opens ? "old" : "new";
    ASSERT_TRUE(Ring().ChangePassphrase(working, "third").ok()) << "step " << n;
    EXPECT_TRUE(Opens("third"));
  }
  EXPECT_TRUE(saw_both);  // some crash fell between writing the new key and removing the old
  EXPECT_TRUE(saw_done);  // and the loop ran past the last step
}

// The same with only the n-th call failing and the process going on: the
// change reports the error, and one passphrase opens the ring.
TEST_F(KeyRingTest, FailedStepOfChangePassphraseLeavesAWorkingPassphrase) {
  bool saw_done = false;
  for (uint64_t n = 1; n < 40 && !saw_done; n++) {
    std::filesystem::remove_all(Dir());
    ASSERT_TRUE(Ring().Create("old").ok());
    FaultEnv fault(Env::Default());
    fault.FailAt(n, ENOSPC);
    Result<KeyInfo> changed = KeyRing(&fault, Dir(), kFast).ChangePassphrase("old", "new");
    ASSERT_TRUE(Opens("old") || Opens("new")) << "failure at step " << n;
    if (changed.ok()) saw_done = fault.operations() < n;
    auto keys = Ring().List();
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();  // no half-written key file
  }
  EXPECT_TRUE(saw_done);
}

}  // namespace
}  // namespace strata::crypto
