#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fs/kernel/interrupt_tracker.h"

namespace strata::fs::kernel {
namespace {

using Target = InterruptTracker::Target;

TEST(InterruptTracker, RunningRequestIsMarked) {
  InterruptTracker t;
  ASSERT_TRUE(t.Begin(10));
  EXPECT_FALSE(t.IsInterrupted(10));
  EXPECT_EQ(t.Interrupt(10), Target::kRunning);
  EXPECT_TRUE(t.IsInterrupted(10));
  t.Finish(10);
  EXPECT_FALSE(t.IsInterrupted(10));
  EXPECT_EQ(t.running(), 0u);
}

TEST(InterruptTracker, AnsweredAndNotSeenDiffer) {
  InterruptTracker t;
  ASSERT_TRUE(t.Begin(10));
  t.Finish(10);
  EXPECT_EQ(t.Interrupt(10), Target::kAnswered);
  EXPECT_EQ(t.Interrupt(12), Target::kNotSeen);
  // Seen later (the kernel resent the INTERRUPT after our EAGAIN): now it counts.
  ASSERT_TRUE(t.Begin(12));
  EXPECT_EQ(t.Interrupt(12), Target::kRunning);
}

TEST(InterruptTracker, ALiveIdCannotBeginTwice) {
  InterruptTracker t;
  ASSERT_TRUE(t.Begin(10));
  EXPECT_FALSE(t.Begin(10));
  t.Finish(10);
  EXPECT_TRUE(t.Begin(10));
}

TEST(InterruptTracker, AnsweredMemoryIsBounded) {
  InterruptTracker t;
  for (uint64_t id = 2; id < 2 + 2 * (InterruptTracker::kAnsweredMemory + 10); id += 2) {
    ASSERT_TRUE(t.Begin(id));
    t.Finish(id);
  }
  EXPECT_EQ(t.Interrupt(2), Target::kNotSeen) << "the oldest answers are forgotten";
  EXPECT_EQ(t.Interrupt(2 + 2 * (InterruptTracker::kAnsweredMemory + 9)), Target::kAnswered);
}

TEST(InterruptTracker, ReadersAndInterruptsFromManyThreads) {
  InterruptTracker t;
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) {
    threads.emplace_back([&t, i] {
      for (int n = 0; n < kPerThread; n++) {
        uint64_t id = 2 * (static_cast<uint64_t>(i) * kPerThread + n + 1);
        EXPECT_TRUE(t.Begin(id));
        EXPECT_EQ(t.Interrupt(id), Target::kRunning);
        EXPECT_TRUE(t.IsInterrupted(id));
        t.Finish(id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.running(), 0u);
}

}  // namespace
}  // namespace strata::fs::kernel
