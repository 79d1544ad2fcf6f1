#include "remote/block_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "testing/fault_env.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

constexpr uint64_t kBlock = 4096;

class BlockCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<BlockCache> Open(uint64_t capacity, Env* env = Env::Default()) {
    auto cache = BlockCache::Open(env, dir_.path() + "/cache", capacity, kBlock);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return cache.ok() ? std::move(cache).value() : nullptr;
  }
  // A fetch from pack_, counting calls.
  BlockCache::Fetch Fetcher() {
    return [this](uint64_t offset, uint64_t length) -> Result<std::string> {
      fetches_++;
      return pack_.substr(offset, length);
    };
  }
  std::string Read(BlockCache& cache, uint64_t offset, size_t n) {
    std::string out;
    Status s = cache.Read("p", pack_.size(), offset, n, &out, Fetcher());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  std::vector<std::string> Blocks() {
    auto names = Env::Default()->ListDir(dir_.path() + "/cache");
    EXPECT_TRUE(names.ok());
    std::sort(names->begin(), names->end());
    return *names;
  }
  uint64_t BytesOnDisk() {
    uint64_t bytes = 0;
    for (const std::string& name : Blocks()) bytes += Env::Default()->FileSize(dir_.path() + "/cache/" + name).value();
    return bytes;
  }

  testing::TempDir dir_;
  std::string pack_ = testing::RandomBytes(10 * kBlock + 123, 7);
  std::atomic<int> fetches_{0};
};

TEST_F(BlockCacheTest, ReadsAcrossBlocksAndServesThemAgainFromDisk) {
  auto cache = Open(1 << 20);
  EXPECT_EQ(Read(*cache, kBlock - 10, 2 * kBlock + 20), pack_.substr(kBlock - 10, 2 * kBlock + 20));
  EXPECT_EQ(fetches_, 4);  // blocks 0..3
  EXPECT_EQ(Read(*cache, kBlock, kBlock), pack_.substr(kBlock, kBlock));
  EXPECT_EQ(Read(*cache, 10 * kBlock, 123), pack_.substr(10 * kBlock, 123));  // the short last block
  EXPECT_EQ(fetches_, 5);
  BlockCacheCounters c = cache->counters();
  EXPECT_EQ(c.misses, 5u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.fetched_bytes, 4 * kBlock + 123);
}

TEST_F(BlockCacheTest, StaysUnderItsCapacityDroppingTheLeastRecentlyUsed) {
  auto cache = Open(3 * kBlock);
  for (int b = 0; b < 3; b++) Read(*cache, b * kBlock, 1);
  Read(*cache, 0, 1);          // block 0 is now the most recent
  Read(*cache, 3 * kBlock, 1);  // evicts block 1, the least recent
  BlockCacheCounters c = cache->counters();
  EXPECT_EQ(c.evictions, 1u);
  EXPECT_LE(c.cached_bytes, 3 * kBlock);
  int before = fetches_;
  Read(*cache, 0, 1);  // still cached
  EXPECT_EQ(fetches_, before);
  Read(*cache, kBlock, 1);  // was evicted
  EXPECT_EQ(fetches_, before + 1);
  EXPECT_LE(Env::Default()->ListDir(dir_.path() + "/cache")->size(), 3u);
}

TEST_F(BlockCacheTest, ConcurrentReadsOfOneBlockShareOneFetch) {
  auto cache = Open(1 << 20);
  auto slow = [this](uint64_t offset, uint64_t length) -> Result<std::string> {
    fetches_++;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return pack_.substr(offset, length);
  };
  std::vector<std::thread> readers;
  std::vector<std::string> got(8);
  for (int i = 0; i < 8; i++)
    readers.emplace_back([&, i] { EXPECT_TRUE(cache->Read("p", pack_.size(), 100 + i, 50, &got[i], slow).ok()); });
  for (auto& t : readers) t.join();
  EXPECT_EQ(fetches_, 1);
  for (int i = 0; i < 8; i++) EXPECT_EQ(got[i], pack_.substr(100 + i, 50));
  EXPECT_EQ(cache->counters().waits, 7u);
}

TEST_F(BlockCacheTest, AFailedFetchIsReportedAndNotCached) {
  auto cache = Open(1 << 20);
  std::string out;
  auto failing = [](uint64_t, uint64_t) -> Result<std::string> { return Status::Unavailable("no answer"); };
  Status s = cache->Read("p", pack_.size(), 0, 10, &out, failing);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  auto short_answer = [](uint64_t, uint64_t) -> Result<std::string> { return std::string("abc"); };
  EXPECT_TRUE(cache->Read("p", pack_.size(), 0, 10, &out, short_answer).IsCorruption());
  EXPECT_EQ(Read(*cache, 0, 10), pack_.substr(0, 10));  // fetched for real now
  EXPECT_EQ(fetches_, 1);
}

TEST_F(BlockCacheTest, RefusesReadsPastThePackEnd) {
  auto cache = Open(1 << 20);
  std::string out;
  EXPECT_TRUE(cache->Read("p", pack_.size(), pack_.size() - 5, 10, &out, Fetcher()).IsCorruption());
  EXPECT_EQ(fetches_, 0);
}

TEST_F(BlockCacheTest, ReopenedCacheKeepsItsBlocksAndDropsUnfinishedOnes) {
  {
    auto cache = Open(1 << 20);
    Read(*cache, 0, 3 * kBlock);
  }
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(dir_.path() + "/cache/p.9.17.part", "half a block").ok());
  auto cache = Open(1 << 20);
  EXPECT_EQ(cache->counters().cached_bytes, 3 * kBlock);
  EXPECT_FALSE(Env::Default()->Exists(dir_.path() + "/cache/p.9.17.part"));
  int before = fetches_;
  EXPECT_EQ(Read(*cache, 0, 3 * kBlock), pack_.substr(0, 3 * kBlock));
  EXPECT_EQ(fetches_, before);
}

// Two mounts of one remote are two processes on one cache directory: the
// bound is the directory's, not each one's.
TEST_F(BlockCacheTest, TwoCachesOnOneDirectoryStayWithinOneBound) {
  const uint64_t capacity = 4 * kBlock;
  auto a = Open(capacity);
  auto b = Open(capacity);
  std::string pack_b = testing::RandomBytes(10 * kBlock, 8);
  auto fetch_b = [&](uint64_t offset, uint64_t length) -> Result<std::string> { return pack_b.substr(offset, length); };
  for (int b_block = 0; b_block < 10; b_block++) {
    Read(*a, b_block * kBlock, 1);
    std::string out;
    ASSERT_TRUE(b->Read("q", pack_b.size(), b_block * kBlock, 1, &out, fetch_b).ok());
    EXPECT_EQ(out, pack_b.substr(b_block * kBlock, 1));
    uint64_t on_disk = 0;
    auto names = Env::Default()->ListDir(dir_.path() + "/cache");
    ASSERT_TRUE(names.ok());
    for (const std::string& name : *names) on_disk += Env::Default()->FileSize(dir_.path() + "/cache/" + name).value();
    // The capacity, plus what each may add between two looks at the directory
    // (a block here: capacity/16 is less than a block).
    EXPECT_LE(on_disk, capacity + 2 * kBlock) << "after block " << b_block;
  }
  EXPECT_EQ(Read(*a, 9 * kBlock, 10), pack_.substr(9 * kBlock, 10));  // still served
}

TEST_F(BlockCacheTest, DropFetchedDeletesWhatThisInstanceFetchedOnly) {
  {
    auto earlier = Open(1 << 20);
    Read(*earlier, 0, 1);  // block 0, left by an earlier run
  }
  auto cache = Open(1 << 20);
  Read(*cache, 2 * kBlock, 2 * kBlock);  // blocks 2 and 3
  ASSERT_TRUE(cache->DropFetched().ok());
  auto names = *Env::Default()->ListDir(dir_.path() + "/cache");
  EXPECT_EQ(names, std::vector<std::string>{"p.0"});
  EXPECT_EQ(cache->counters().cached_bytes, kBlock);
  int before = fetches_;
  EXPECT_EQ(Read(*cache, 2 * kBlock, 10), pack_.substr(2 * kBlock, 10));  // fetched again
  EXPECT_EQ(fetches_, before + 1);
}

// A cache directory whose files cannot be deleted for a while (made
// read-only, say): removals fail with EACCES while `refuse` is set.
class RefusingRemovalEnv : public FaultEnv {
 public:
  RefusingRemovalEnv() : FaultEnv(Env::Default()) {}
  Status RemoveFile(const std::string& path) override {
    if (refuse) return Status::IOError("removing " + path, EACCES);
    return FaultEnv::RemoveFile(path);
  }
  std::atomic<bool> refuse{false};
};

TEST_F(BlockCacheTest, ABlockThatCannotBeDeletedStaysCountedAndNothingMoreIsCached) {
  RefusingRemovalEnv env;
  auto cache = Open(2 * kBlock, &env);
  Read(*cache, 0, 1);
  Read(*cache, kBlock, 1);
  env.refuse = true;
  // Block 2 is cached; evicting block 0 fails, so it stays, and is counted.
  EXPECT_EQ(Read(*cache, 2 * kBlock, 1), pack_.substr(2 * kBlock, 1));
  EXPECT_EQ(Blocks(), (std::vector<std::string>{"p.0", "p.1", "p.2"}));
  EXPECT_EQ(cache->counters().cached_bytes, BytesOnDisk());
  EXPECT_EQ(cache->counters().evictions, 0u);
  // While the cache cannot shrink, blocks are served without being cached.
  EXPECT_EQ(Read(*cache, 3 * kBlock, 10), pack_.substr(3 * kBlock, 10));
  EXPECT_EQ(Blocks(), (std::vector<std::string>{"p.0", "p.1", "p.2"}));
  EXPECT_EQ(cache->counters().cached_bytes, BytesOnDisk());
  // Deleting works again: back under the capacity, caching again.
  env.refuse = false;
  EXPECT_EQ(Read(*cache, 4 * kBlock, 10), pack_.substr(4 * kBlock, 10));
  EXPECT_EQ(Blocks(), (std::vector<std::string>{"p.2", "p.4"}));
  EXPECT_EQ(cache->counters().cached_bytes, 2 * kBlock);
  EXPECT_EQ(cache->counters().evictions, 2u);
}

TEST_F(BlockCacheTest, DropFetchedReportsABlockItCannotDeleteAndKeepsCountingIt) {
  RefusingRemovalEnv env;
  auto cache = Open(1 << 20, &env);
  Read(*cache, 0, 2 * kBlock);
  env.refuse = true;
  Status s = cache->DropFetched();
  EXPECT_EQ(s.errno_value(), EACCES) << s.ToString();
  EXPECT_EQ(cache->counters().cached_bytes, 2 * kBlock);
  EXPECT_EQ(cache->counters().cached_bytes, BytesOnDisk());
  env.refuse = false;
  EXPECT_TRUE(cache->DropFetched().ok());
  EXPECT_TRUE(Blocks().empty());
  EXPECT_EQ(cache->counters().cached_bytes, 0u);
}

}  // namespace
}  // namespace strata
