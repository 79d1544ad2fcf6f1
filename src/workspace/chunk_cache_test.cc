// ChunkCache: single-flight, parallel fetches, read-ahead bounds, capacity.
//
// The store's pack reads pass a gate (GatedEnv) the tests close to hold
// fetches in flight, so overlaps are certain, not a matter of timing.
#include "workspace/chunk_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "testing/store_test_util.h"
#include "testing/gated_env_test_util.h"

namespace strata::workspace_internal {
namespace {

constexpr size_t kChunkSize = 64 << 10;

// Waits (up to 20 s) until cond holds; false if it never did.
bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 20000; i++) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cond();
}

class ChunkCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = dir_.path() + "/s";
    ASSERT_TRUE(Store::Init(path, StoreConfig(), &env_).ok());
    store_ = std::move(Store::Open(path, &env_)).value();
    for (int i = 0; i < 8; i++) {
      data_.push_back(testing::RandomBytes(kChunkSize, 100 + i));
      auto put = store_->Put(ObjectType::kChunk, data_.back());
      ASSERT_TRUE(put.ok());
      ids_.push_back(put->id);
    }
    ASSERT_TRUE(store_->Flush().ok());
    env_.ResetReads();
  }

  // An executor that keeps the prefetch tasks for the test to run.
  ChunkCache::Executor Keep() {
    return [this](std::function<void()> task) { tasks_.push_back(std::move(task)); };
  }

  testing::TempDir dir_;
  testing::GatedEnv env_;
  std::unique_ptr<Store> store_;
  std::vector<std::string> data_;
  std::vector<Hash> ids_;
  std::vector<std::function<void()>> tasks_;
};

TEST_F(ChunkCacheTest, ConcurrentDemandsForOneChunkShareOneFetch) {
  ChunkCache cache(64 << 20);
  env_.Close();
  constexpr int kThreads = 8;
  std::vector<Result<std::shared_ptr<const Buffer>>> got(kThreads, Status::InvalidArgument("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) threads.emplace_back([&, i] { got[i] = cache.Get(*store_, ids_[0]); });
  // Every thread has asked while the one fetch is held at the pack read.
  ASSERT_TRUE(WaitFor([&] { return cache.counters().demands == kThreads && env_.blocked() == 1; }));
  env_.Open();
  for (auto& t : threads) t.join();

  for (auto& g : got) {
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ((*g)->view(), data_[0]);
  }
  ChunkCache::Counters c = cache.counters();
  EXPECT_EQ(c.fetches, 1u);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.waits, kThreads - 1u);
  EXPECT_EQ(env_.reads(), 1) << "one pread of the pack";
  EXPECT_EQ(store_->ReadCounters().bytes_verified, kChunkSize) << "verified once";
}

TEST_F(ChunkCacheTest, DifferentChunksAreFetchedInParallel) {
  ChunkCache cache(64 << 20);
  env_.Close();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; i++) threads.emplace_back([&, i] { EXPECT_TRUE(cache.Get(*store_, ids_[i]).ok()); });
  // Four preads are in flight at once: nothing on the read path serialises them.
  ASSERT_TRUE(WaitFor([&] { return env_.blocked() == 4; }));
  env_.Open();
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.counters().fetches_in_flight_max, 4u);
  EXPECT_EQ(store_->ReadCounters().max_in_flight, 4u);
  EXPECT_EQ(cache.counters().fetches, 4u);
}

TEST_F(ChunkCacheTest, DemandJoinsAPrefetchInFlight) {
  ChunkCache cache(64 << 20);
  ASSERT_TRUE(cache.Prefetch(*store_, ids_[0], kChunkSize, Keep()));
  EXPECT_FALSE(cache.Prefetch(*store_, ids_[0], kChunkSize, Keep())) << "already in flight";
  ASSERT_EQ(tasks_.size(), 1u);
  env_.Close();
  std::thread prefetcher(tasks_[0]);
  ASSERT_TRUE(WaitFor([&] { return env_.blocked() == 1; }));
  Result<std::shared_ptr<const Buffer>> got = Status::InvalidArgument("not run");
  std::thread reader([&] { got = cache.Get(*store_, ids_[0]); });
  ASSERT_TRUE(WaitFor([&] { return cache.counters().waits == 1; }));
  env_.Open();
  prefetcher.join();
  reader.join();

  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->view(), data_[0]);
  ChunkCache::Counters c = cache.counters();
  EXPECT_EQ(c.fetches, 1u);
  EXPECT_EQ(c.readahead_issued, 1u);
  EXPECT_EQ(c.readahead_used, 1u);
  EXPECT_EQ(c.misses, 0u);
  EXPECT_EQ(c.readahead_bytes, 0u) << "the prefetched chunk was read";
  EXPECT_EQ(env_.reads(), 1);
}

TEST_F(ChunkCacheTest, ReadAheadBytesStayWithinTheirBound) {
  ChunkCache cache(64 << 20, ReadAheadLimits{3 * kChunkSize, 100});
  for (int i = 0; i < 6; i++) EXPECT_EQ(cache.Prefetch(*store_, ids_[i], kChunkSize, Keep()), i < 3) << i;
  EXPECT_EQ(cache.counters().readahead_skipped, 3u);
  EXPECT_EQ(cache.counters().readahead_bytes, 3 * kChunkSize);
  for (auto& t : tasks_) t();
  // Loaded but unread, they still count against the bound.
  EXPECT_EQ(cache.counters().readahead_bytes, 3 * kChunkSize);
  EXPECT_FALSE(cache.Prefetch(*store_, ids_[3], kChunkSize, Keep()));

  ASSERT_TRUE(cache.Get(*store_, ids_[0]).ok());
  ChunkCache::Counters c = cache.counters();
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.readahead_used, 1u);
  EXPECT_EQ(c.readahead_bytes, 2 * kChunkSize);
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[3], kChunkSize, Keep())) << "a read made room";
}

TEST_F(ChunkCacheTest, ReadAheadFetchesInFlightStayWithinTheirBound) {
  ChunkCache cache(64 << 20, ReadAheadLimits{32 << 20, 2});
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[0], kChunkSize, Keep()));
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[1], kChunkSize, Keep()));
  EXPECT_FALSE(cache.Prefetch(*store_, ids_[2], kChunkSize, Keep()));
  tasks_[0]();
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[2], kChunkSize, Keep())) << "one finished";
  for (size_t i = 1; i < tasks_.size(); i++) tasks_[i]();
  EXPECT_EQ(cache.counters().fetches, 3u);
}

TEST_F(ChunkCacheTest, StaysWithinCapacityAndEvictsTheLeastRecentlyUsed) {
  ChunkCache cache(3 * kChunkSize);
  for (int i : {0, 1, 2, 0, 3}) ASSERT_TRUE(cache.Get(*store_, ids_[i]).ok());  // 3 evicts 1, not 0
  EXPECT_LE(cache.counters().bytes, 3 * kChunkSize);
  EXPECT_EQ(cache.counters().fetches, 4u);
  ASSERT_TRUE(cache.Get(*store_, ids_[0]).ok());
  EXPECT_EQ(cache.counters().fetches, 4u) << "0 was used recently: still cached";
  ASSERT_TRUE(cache.Get(*store_, ids_[1]).ok());
  EXPECT_EQ(cache.counters().fetches, 5u) << "1 was evicted";
  EXPECT_EQ(cache.counters().bytes, 3 * kChunkSize);
}

TEST_F(ChunkCacheTest, UnreadPrefetchesEvictedAreCountedAsWasted) {
  ChunkCache cache(4 * kChunkSize);  // read-ahead may hold 2 chunks
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[0], kChunkSize, Keep()));
  EXPECT_TRUE(cache.Prefetch(*store_, ids_[1], kChunkSize, Keep()));
  for (auto& t : tasks_) t();
  for (int i = 2; i < 6; i++) ASSERT_TRUE(cache.Get(*store_, ids_[i]).ok());
  ChunkCache::Counters c = cache.counters();
  EXPECT_EQ(c.readahead_wasted, 2u);
  EXPECT_EQ(c.readahead_used, 0u);
  EXPECT_EQ(c.readahead_bytes, 0u);
}

TEST_F(ChunkCacheTest, ReadAheadMayHoldAtMostHalfTheCapacity) {
  ChunkCache cache(4 << 20, ReadAheadLimits{100 << 20, 4});
  EXPECT_EQ(cache.limits().max_bytes, 2u << 20);
  cache.Configure(1 << 20, ReadAheadLimits{});
  EXPECT_EQ(cache.capacity(), 1u << 20);
  EXPECT_EQ(cache.limits().max_bytes, 512u << 10);
}

TEST_F(ChunkCacheTest, AFailedFetchIsAnErrorForEveryWaiter) {
  ChunkCache cache(64 << 20);
  Hash missing = ComputeObjectId(ObjectType::kChunk, "not in the store");
  auto got = cache.Get(*store_, missing);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().errno_value(), EIO);
  EXPECT_EQ(cache.counters().fetch_errors, 1u);
  EXPECT_EQ(cache.counters().bytes, 0u);
}

}  // namespace
}  // namespace strata::workspace_internal
