// Which packs a remote gc rewrites (remote_repack.h): mostly-dead packs first,
// then small ones, within the bound of bytes, never a small pack alone and
// never a pack with nothing live.
#include "remote/remote_repack.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr uint64_t kPackSize = 32 << 20;
constexpr uint64_t kMiB = 1 << 20;

RepackCandidate Pack(const std::string& name, uint64_t size, uint64_t live_bytes) {
  return RepackCandidate{name, size, live_bytes, live_bytes > 0 ? 1u : 0u};
}

TEST(PickPacksToRewrite, MostlyDeadFirstThenSmallestWithinTheBound) {
  const std::vector<RepackCandidate> packs = {
      Pack("full", 30 * kMiB, 30 * kMiB),      // full and live: never
      Pack("dead40", 30 * kMiB, 12 * kMiB),    // 40% live
      Pack("dead10", 30 * kMiB, 3 * kMiB),     // 10% live: first
      Pack("small3", 3 * kMiB, 3 * kMiB),
      Pack("small1", 1 * kMiB, 1 * kMiB),
      Pack("small2", 2 * kMiB, 2 * kMiB),
      Pack("garbage", 1 * kMiB, 0),            // nothing live: gc deletes it whole
  };
  EXPECT_EQ(PickPacksToRewrite(packs, kPackSize, 0.5, 1 << 30),
            (std::vector<std::string>{"dead10", "dead40", "small1", "small2", "small3"}));
  // The bound: 30 MiB takes the most dead pack only, plus nothing small that
  // would not fit; 63 MiB both dead ones and the 1 and 2 MiB small ones.
  EXPECT_EQ(PickPacksToRewrite(packs, kPackSize, 0.5, 30 * kMiB), (std::vector<std::string>{"dead10"}));
  EXPECT_EQ(PickPacksToRewrite(packs, kPackSize, 0.5, 63 * kMiB),
            (std::vector<std::string>{"dead10", "dead40", "small1", "small2"}));
  // Threshold 0: only small packs are merged.
  EXPECT_EQ(PickPacksToRewrite(packs, kPackSize, 0.0, 1 << 30),
            (std::vector<std::string>{"small1", "small2", "small3"}));
  EXPECT_TRUE(PickPacksToRewrite(packs, kPackSize, 0.5, 0).empty());
}

TEST(PickPacksToRewrite, OneSmallPackAloneStays) {
  EXPECT_TRUE(PickPacksToRewrite({Pack("a", kMiB, kMiB), Pack("big", 30 * kMiB, 30 * kMiB)}, kPackSize, 0.5, 1 << 30)
                  .empty());
  // Two fit in the bound, or only one does.
  const std::vector<RepackCandidate> two = {Pack("a", kMiB, kMiB), Pack("b", 2 * kMiB, 2 * kMiB)};
  EXPECT_EQ(PickPacksToRewrite(two, kPackSize, 0.5, 3 * kMiB), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(PickPacksToRewrite(two, kPackSize, 0.5, 2 * kMiB).empty());
  // Beside a mostly-dead pack one small pack joins it.
  EXPECT_EQ(PickPacksToRewrite({Pack("d", 30 * kMiB, kMiB), Pack("a", kMiB, kMiB)}, kPackSize, 0.5, 1 << 30),
            (std::vector<std::string>{"d", "a"}));
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

PackEntry At(uint64_t offset, uint64_t len) {
  PackEntry e;
  e.offset = offset;
  e.stored_len = len;
  return e;
}

TEST(CoalesceRanges, JoinsNearObjectsAndSkipsLongDeadRuns) {
  // Out of order, adjacent, a short gap, a long one (a dead object), an
  // object inside another's range.
  const std::vector<PackEntry> entries = {At(500, 100), At(0, 100), At(100, 50), At(150 + 10, 40), At(520, 10),
                                          At(10'000, 1)};
  EXPECT_EQ(CoalesceRanges(entries, 16),
            (std::vector<ByteRange>{{0, 200}, {500, 600}, {10'000, 10'001}}));
  // A gap as long as the bound is joined; one longer is not.
  EXPECT_EQ(CoalesceRanges({At(0, 10), At(20, 10)}, 10), (std::vector<ByteRange>{{0, 30}}));
  EXPECT_EQ(CoalesceRanges({At(0, 10), At(21, 10)}, 10), (std::vector<ByteRange>{{0, 10}, {21, 31}}));
  EXPECT_EQ(CoalesceRanges({At(0, 10), At(30, 10)}, 0), (std::vector<ByteRange>{{0, 10}, {30, 40}}));
  EXPECT_TRUE(CoalesceRanges({}, 10).empty());
}

}  // namespace
}  // namespace strata
