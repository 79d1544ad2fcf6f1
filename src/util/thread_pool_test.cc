#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>

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

}  // namespace
}  // namespace strata
