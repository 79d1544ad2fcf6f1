// Key files: wrap and unwrap, a wrong passphrase refused, and the strict
// decoder refusing every malformed, truncated, oversized or altered file.
#include "crypto/key_file.h"

#include <gtest/gtest.h>

namespace strata::crypto {
namespace {

// Small scrypt parameters keep the tests fast; the format is the same.
constexpr ScryptParams kFast{10, 8, 1};

KeyFile Wrapped(const Key256& master, std::string_view passphrase) {
  auto file = WrapMasterKey(master, passphrase, kFast, 1700000000);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return std::move(file).value();
}

TEST(KeyFileTest, RoundTripAndUnwrap) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  KeyFile file = Wrapped(*master, "correct horse");
  std::string bytes = EncodeKeyFile(file);
  EXPECT_EQ(bytes.find(std::string(master->view())), std::string::npos);
  auto decoded = DecodeKeyFile(bytes, "k.key");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(EncodeKeyFile(*decoded), bytes);
  EXPECT_EQ(decoded->KeyIdHex(), file.KeyIdHex());
  EXPECT_EQ(decoded->KeyIdHex().size(), 32u);
  EXPECT_EQ(decoded->params, kFast);
  EXPECT_EQ(decoded->created_sec, 1700000000);
  auto unwrapped = UnwrapMasterKey(*decoded, "correct horse");
  ASSERT_TRUE(unwrapped.ok()) << unwrapped.status().ToString();
  EXPECT_EQ(*unwrapped, *master);
}

TEST(KeyFileTest, WrongPassphraseIsRefused) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  KeyFile file = Wrapped(*master, "correct horse");
  auto wrong = UnwrapMasterKey(file, "correct horsf");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("wrong passphrase"), std::string::npos);
  EXPECT_FALSE(UnwrapMasterKey(file, "").ok());
}

TEST(KeyFileTest, TwoWrapsOfOneKeyDiffer) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  KeyFile a = Wrapped(*master, "pw");
  KeyFile b = Wrapped(*master, "pw");
  EXPECT_NE(a.KeyIdHex(), b.KeyIdHex());
  EXPECT_NE(a.salt, b.salt);
  EXPECT_NE(a.wrapped, b.wrapped);
}

// The header is associated data: a changed parameter, salt, id or time is
// refused (it cannot be weakened or swapped unnoticed), and so is a changed
// wrapped key.
TEST(KeyFileTest, AlteredFieldsAreRefused) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  const std::string bytes = EncodeKeyFile(Wrapped(*master, "pw"));
  int decoded = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); i++) {
    std::string bad = bytes;
    bad[i] ^= 0x01;
    auto file = DecodeKeyFile(bad, "k.key");
    if (!file.ok()) continue;  // the decoder caught it already
    decoded++;
    auto master_again = UnwrapMasterKey(*file, "pw");
    EXPECT_FALSE(master_again.ok()) << "byte " << i;
    if (!master_again.ok()) refused++;
  }
  EXPECT_GT(decoded, 50);  // most flips pass the decoder and must be caught by the tag
  EXPECT_EQ(refused, decoded);
}

TEST(KeyFileTest, MalformedInputIsAClearError) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  const std::string bytes = EncodeKeyFile(Wrapped(*master, "pw"));
  for (size_t n = 0; n < bytes.size(); n++) {  // every truncation
    auto file = DecodeKeyFile(bytes.substr(0, n), "k.key");
    ASSERT_FALSE(file.ok()) << n;
    EXPECT_TRUE(file.status().IsCorruption()) << file.status().ToString();
    EXPECT_NE(file.status().message().find("k.key"), std::string::npos);
  }
  EXPECT_FALSE(DecodeKeyFile(bytes + "x", "k").ok());                        // trailing bytes
  EXPECT_FALSE(DecodeKeyFile(bytes + std::string(1000, 'x'), "k").ok());     // oversized
  EXPECT_FALSE(DecodeKeyFile(std::string(100000, '\0'), "k").ok());
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_TRUE(DecodeKeyFile(magic, "k").status().IsCorruption());
  std::string version = bytes;
  version[8] = 2;
  EXPECT_EQ(DecodeKeyFile(version, "k").status().code(), Status::Code::kUnsupported);
}

TEST(KeyFileTest, ForgedParametersAreRefusedBeforeDeriving) {
  auto master = RandomKey();
  ASSERT_TRUE(master.ok());
  KeyFile file = Wrapped(*master, "pw");
  file.params.log2_n = 40;  // a KDF that would never end
  EXPECT_TRUE(DecodeKeyFile(EncodeKeyFile(file), "k").status().IsCorruption());
  file.params = ScryptParams{20, 32, 16};  // 4 GiB
  EXPECT_TRUE(DecodeKeyFile(EncodeKeyFile(file), "k").status().IsCorruption());
  file.params = kFast;
  file.salt = "short";
  EXPECT_TRUE(DecodeKeyFile(EncodeKeyFile(file), "k").status().IsCorruption());
  file.salt = std::string(32, 's');
  file.kdf = "argon2id";
  EXPECT_EQ(DecodeKeyFile(EncodeKeyFile(file), "k").status().code(), Status::Code::kUnsupported);
  file.kdf = "scrypt";
  file.wrapped += "x";
  EXPECT_TRUE(DecodeKeyFile(EncodeKeyFile(file), "k").status().IsCorruption());
}

}  // namespace
}  // namespace strata::crypto
