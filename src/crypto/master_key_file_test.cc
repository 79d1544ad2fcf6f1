// Master key files: the one spelling round-trips, and every other one is
// refused with a message naming the file.
#include "crypto/master_key_file.h"

#include <gtest/gtest.h>

namespace strata::crypto {
namespace {

TEST(MasterKeyFileTest, RoundTrip) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  const std::string bytes = EncodeMasterKeyFile(*master);
  EXPECT_EQ(bytes.size(), kMasterKeyFileSize);
  EXPECT_TRUE(bytes.starts_with("strata master key v1 "));
  auto decoded = DecodeMasterKeyFile(bytes, "k");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, *master);
}

TEST(MasterKeyFileTest, EveryOtherSpellingIsRefusedNamingTheFile) {
  Key256 master;
  master.bytes.fill(0xab);
  const std::string good = EncodeMasterKeyFile(master);
  std::string upper = good;
  upper[30] = 'A';
  std::string not_hex = good;
  not_hex[40] = 'g';
  std::string no_newline = good;
  no_newline.back() = ' ';
  std::string v2 = good;
  v2[19] = '2';
  for (const std::string& bad : {std::string(), good.substr(0, good.size() - 1), good + "\n", good + "x", upper,
                                 not_hex, no_newline, v2, std::string("STRATA") + good.substr(6),
                                 good.substr(0, 21) + std::string(64, 'a') + "\r\n"}) {
    auto refused = DecodeMasterKeyFile(bad, "/keys/vault.key");
    ASSERT_FALSE(refused.ok()) << "'" << bad << "' was taken";
    EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("/keys/vault.key"), std::string::npos) << refused.status().ToString();
  }
  auto version = DecodeMasterKeyFile(v2, "f");
  EXPECT_NE(version.status().message().find("version"), std::string::npos) << version.status().ToString();
}

}  // namespace
}  // namespace strata::crypto
