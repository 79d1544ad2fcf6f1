// The user keyring as strata uses it: a kept secret is found until it is
// dropped or times out, replacing one keeps the new one, and descriptions
// never mix. Skipped where the kernel keyring cannot be used.
#include "crypto/kernel_keyring.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "crypto/aead.h"

namespace strata::crypto {
namespace {

// A description no other run (or test) uses.
std::string UniqueDescription(const std::string& what) {
  auto key = RandomKey();
  EXPECT_TRUE(key.ok());
  return "strata-test:" + what + ":" + std::to_string(::getpid()) + ":" +
         std::to_string(key->bytes[0]) + std::to_string(key->bytes[1]) + std::to_string(key->bytes[2]);
}

class KernelKeyringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = UniqueDescription("probe");
    Status s = KeepInUserKeyring(probe_, "x", 5);
    if (s.code() == Status::Code::kUnsupported) GTEST_SKIP() << s.ToString();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(DropFromUserKeyring(probe_).ok());
  }
  std::string probe_;
};

TEST_F(KernelKeyringTest, AKeptSecretIsFoundUntilItIsDropped) {
  const std::string d = UniqueDescription("kept");
  ASSERT_TRUE(KeepInUserKeyring(d, std::string("se\0cret", 7), 60).ok());
  auto found = FindInUserKeyring(d, 64);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, std::string("se\0cret", 7));
  auto dropped = DropFromUserKeyring(d);
  ASSERT_TRUE(dropped.ok());
  EXPECT_TRUE(*dropped);
  auto gone = FindInUserKeyring(d, 64);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  auto again = DropFromUserKeyring(d);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST_F(KernelKeyringTest, KeepingAgainReplacesAndDescriptionsNeverMix) {
  const std::string a = UniqueDescription("a"), b = UniqueDescription("b");
  ASSERT_TRUE(KeepInUserKeyring(a, "first", 60).ok());
  ASSERT_TRUE(KeepInUserKeyring(b, "other", 60).ok());
  ASSERT_TRUE(KeepInUserKeyring(a, "second", 60).ok());
  auto found_a = FindInUserKeyring(a, 64), found_b = FindInUserKeyring(b, 64);
  ASSERT_TRUE(found_a.ok() && found_a->has_value());
  ASSERT_TRUE(found_b.ok() && found_b->has_value());
  EXPECT_EQ(**found_a, "second");
  EXPECT_EQ(**found_b, "other");
  ASSERT_TRUE(DropFromUserKeyring(a).ok());
  auto after = FindInUserKeyring(b, 64);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ(**after, "other");
  ASSERT_TRUE(DropFromUserKeyring(b).ok());
}

TEST_F(KernelKeyringTest, ASecretLargerThanAskedForIsNotReturned) {
  const std::string d = UniqueDescription("large");
  ASSERT_TRUE(KeepInUserKeyring(d, std::string(40, 'k'), 60).ok());
  auto found = FindInUserKeyring(d, 32);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  ASSERT_TRUE(DropFromUserKeyring(d).ok());
}

TEST_F(KernelKeyringTest, ASecretIsGoneAfterItsTimeout) {
  const std::string d = UniqueDescription("timeout");
  ASSERT_TRUE(KeepInUserKeyring(d, "brief", 1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  auto found = FindInUserKeyring(d, 64);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_FALSE(found->has_value());
  EXPECT_FALSE(KeepInUserKeyring(d, "x", 0).ok());
}

}  // namespace
}  // namespace strata::crypto
