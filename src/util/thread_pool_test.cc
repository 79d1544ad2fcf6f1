#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

namespace strata {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskBeforeWaitReturns) {
  ThreadPool pool(2, 4);  // a small queue forces Submit to block and resume
  std::atomic<int> sum{0};
  for (int i = 1; i <= 1000; i++) pool.Submit([&sum, i] { sum += i; });
  pool.Wait();
  EXPECT_EQ(sum.load(), 500500);
}

TEST(ThreadPoolTest, UsesSeveralThreads) {
  ThreadPool pool(2);
  std::atomic<int> running{0}, peak{0};
  for (int i = 0; i < 8; i++) {
    pool.Submit([&] {
      int now = ++running;
      int old = peak.load();
      while (now > old && !peak.compare_exchange_weak(old, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --running;
    });
  }
  pool.Wait();
  EXPECT_EQ(peak.load(), 2);
}

// The threads of this process, as the kernel lists them.
size_t ThreadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n++;
  return n;
}

TEST(ThreadPoolTest, StartsWorkersOnlyAsTasksNeedThem) {
  const size_t before = ThreadsOfThisProcess();
  ThreadPool pool(8);
  EXPECT_EQ(ThreadsOfThisProcess(), before) << "a pool not used yet has no threads";
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; i++) {
    pool.Submit([&ran] { ran++; });
    pool.Wait();  // one task at a time: the first worker serves them all
  }
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(ThreadsOfThisProcess(), before + 1);
}

}  // namespace
}  // namespace strata
