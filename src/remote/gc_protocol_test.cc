// The bodies of leases and gc lists (gc_protocol.h): what is written reads
// back the same, and anything else is refused rather than half-understood.
#include "remote/gc_protocol.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

namespace strata {
namespace {

Hash IdOf(const std::string& s) {
  Sha256 h;
  h.Update(s);
  return h.Finish();
}

TEST(GcProtocol, LeaseRoundTrips) {
  auto seconds = DecodeLease(EncodeLease(3600));
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_EQ(*seconds, 3600u);
}

TEST(GcProtocol, DamagedLeasesAreRefused) {
  for (const char* body : {"", "strata-lease 1 \n", "strata-lease 1 12", "strata-lease 2 12\n", "strata-lease 1 -4\n",
                           "strata-lease 1 12x\n", "strata-lease 1 12\nmore", "strata-lease 1 99999999999\n"})
    EXPECT_TRUE(DecodeLease(body).status().IsCorruption()) << body;
}

TEST(GcProtocol, CondemnedListRoundTrips) {
  CondemnedList list{7200, {IdOf("a"), IdOf("b"), IdOf("c")}};
  auto back = DecodeCondemned(EncodeCondemned(list));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->seconds, 7200u);
  EXPECT_EQ(back->ids, list.ids);
  auto empty = DecodeCondemned(EncodeCondemned({5, {}}));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->ids.empty());
}

TEST(GcProtocol, DamagedListsAreRefused) {
  const std::string good = EncodeCondemned({60, {IdOf("a")}});
  for (const std::string& body : {good.substr(0, good.size() - 1), good + "zz\n", std::string("strata-lease 1 60\n"),
                                  "strata-condemned 1 60\n" + IdOf("a").ToHex().substr(0, 10) + "\n"})
    EXPECT_TRUE(DecodeCondemned(body).status().IsCorruption()) << body;
}

TEST(GcProtocol, ForgottenNamesRoundTripInGroups) {
  std::vector<Hash> ids;
  for (int i = 0; i < 32; i++) ids.push_back(IdOf("c" + std::to_string(i)));
  const std::vector<std::string> names = EncodeForgottenNames(ids, 15);
  ASSERT_EQ(names.size(), 3u);  // 15, 15 and 2
  std::vector<Hash> back;
  for (const std::string& name : names) {
    auto decoded = DecodeForgottenName(name);
    ASSERT_TRUE(decoded.has_value()) << name;
    back.insert(back.end(), decoded->begin(), decoded->end());
  }
  EXPECT_EQ(back, ids);
  EXPECT_EQ(names[2].size(), 2u * 64);
  EXPECT_TRUE(EncodeForgottenNames({}, 15).empty());
  EXPECT_EQ(EncodeForgottenNames(ids, 0).size(), ids.size());  // at least one id a name
}

TEST(GcProtocol, OneIdNamesOfTheOldFormDecode) {
  // The form of every marker before names held several ids, in either case.
  std::string hex = IdOf("old").ToHex();
  auto one = DecodeForgottenName(hex);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, std::vector<Hash>{IdOf("old")});
  for (char& c : hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(DecodeForgottenName(hex).has_value());
}

TEST(GcProtocol, OtherForgottenNamesAreNotIds) {
  const std::string hex = IdOf("x").ToHex();
  for (const std::string& name : {std::string(), hex.substr(1), hex + "0", hex + hex.substr(0, 63), hex + "-" + hex,
                                  std::string(64, 'g'), "set-" + hex})
    EXPECT_FALSE(DecodeForgottenName(name).has_value()) << name;
}

TEST(GcProtocol, ForgottenNamesFitTheKeyLimit) {
  S3Location short_prefix;
  short_prefix.prefix = "team/store";
  EXPECT_EQ(ForgottenIdsPerKey(short_prefix), 15u);
  S3Location long_prefix;
  long_prefix.prefix = std::string(600, 'p');
  const size_t n = ForgottenIdsPerKey(long_prefix);
  EXPECT_EQ(n, 6u);  // (1024 - 600 - 1 - 10) / 64
  EXPECT_LE(long_prefix.prefix.size() + 1 + std::string("forgotten/").size() + n * 64, 1024u);
  S3Location huge;
  huge.prefix = std::string(2000, 'p');
  EXPECT_EQ(ForgottenIdsPerKey(huge), 1u);
}

TEST(GcProtocol, KeyIdsDiffer) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; i++) {
    std::string id = RandomKeyId();
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 100u);
}

}  // namespace
}  // namespace strata
