#include "util/buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace strata {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % Buffer::kAlignment == 0; }

TEST(BufferTest, HoldsWhatIsWrittenAndIsAligned) {
  Buffer b(600 * 1024 + 17);
  ASSERT_EQ(b.size(), 600u * 1024 + 17);
  EXPECT_TRUE(Aligned(b.data()));
  std::memset(b.data(), 'x', b.size());
  b.data()[b.size() - 1] = 'y';
  EXPECT_EQ(b.view().substr(b.size() - 2), "xy");
}

TEST(BufferTest, EmptyBufferOwnsNothing) {
  Buffer b;
  EXPECT_TRUE(b.empty());
  Buffer zero(0);
  EXPECT_TRUE(zero.empty());
  EXPECT_EQ(zero.view(), "");
}

TEST(BufferTest, NarrowKeepsTheBytesInViewWithoutCopying) {
  Buffer b(8192);
  for (size_t i = 0; i < b.size(); i++) b.data()[i] = static_cast<char>(i % 251);
  const char* start = b.data();
  b.Narrow(100, 5000);
  EXPECT_EQ(b.data(), start + 100);
  EXPECT_EQ(b.size(), 5000u);
  EXPECT_EQ(static_cast<unsigned char>(b.data()[0]), 100u);
  b.Narrow(4999, 1);
  EXPECT_EQ(static_cast<unsigned char>(b.data()[0]), (100 + 4999) % 251);
  EXPECT_DEATH(b.Narrow(0, 2), "");
}

TEST(BufferTest, MoveLeavesTheSourceEmpty) {
  Buffer a(5000);
  a.data()[0] = 'q';
  Buffer b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.view()[0], 'q');
  Buffer c(10);
  c = std::move(b);
  EXPECT_EQ(c.size(), 5000u);
  EXPECT_EQ(c.view()[0], 'q');
}

TEST(BufferTest, ThreadsUseBuffersOfTheirOwn) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; i++) {
        Buffer b(4096 * (1 + (i + t) % 40) + static_cast<size_t>(i % 3));  // sizes off the alignment too
        std::memset(b.data(), t, b.size());
        ASSERT_EQ(b.data()[b.size() - 1], t);
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace strata
