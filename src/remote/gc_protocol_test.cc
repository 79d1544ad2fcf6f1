// The bodies of leases and gc lists (gc_protocol.h): what is written reads
// back the same, and anything else is refused rather than half-understood.
#include "remote/gc_protocol.h"

#include <gtest/gtest.h>

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
