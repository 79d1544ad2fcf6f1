// A disk that fills while a pack is being written: the write that found no
// room fails, and everything before it stays as it was, so that the same
// store (a daemon's, open for the whole mount) stores and seals correctly once
// there is room again. The file size limit (RLIMIT_FSIZE) stands in for the
// full disk: like ENOSPC halfway through a write(2), it cuts the write short
// at an exact byte, then fails the next one.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "store/store.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Holds the process's file size limit at `bytes` until destroyed.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(uint64_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // a short write, then EFBIG, not a signal
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

class FullDiskPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/store";
    ASSERT_TRUE(Store::Init(path_, StoreConfig()).ok());
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  // The open pack, still a temp file: its size is where the limit goes.
  uint64_t OpenPackSize() {
    for (const auto& e : fs::directory_iterator(path_ + "/tmp"))
      if (e.path().extension() == ".tmp") return fs::file_size(e.path());
    return 0;
  }
  Hash PutOk(uint64_t seed) {
    auto put = store_->Put(ObjectType::kChunk, testing::RandomBytes(kChunk, seed));
    EXPECT_TRUE(put.ok()) << put.status().ToString();
    return put.ok() ? put->id : Hash{};
  }
  void ExpectReadable(const Hash& id, uint64_t seed) {
    auto got = store_->Get(id, ObjectType::kChunk);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == testing::RandomBytes(kChunk, seed)) << "object of seed " << seed << " reads other bytes";
  }

  static constexpr size_t kChunk = 100000;  // random: stored as it is, not compressed
  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(FullDiskPackTest, AWriteCutShortLeavesThePackGoodForTheNextOnes) {
  Hash a = PutOk(1), b = PutOk(2);
  const uint64_t before = OpenPackSize();
  ASSERT_GT(before, 2 * kChunk);
  {
    // Room for half of the next object only.
    FileSizeLimit full(before + kChunk / 2);
    auto put = store_->Put(ObjectType::kChunk, testing::RandomBytes(kChunk, 3));
    ASSERT_FALSE(put.ok()) << "a write past the limit succeeded";
  }
  EXPECT_EQ(OpenPackSize(), before) << "the half written object was left in the pack";
  Hash c = PutOk(3), d = PutOk(4);  // room again: the one that failed, and one more
  ASSERT_TRUE(store_->Flush().ok());
  ExpectReadable(a, 1);
  ExpectReadable(b, 2);
  ExpectReadable(c, 3);
  ExpectReadable(d, 4);

  // And from a fresh open, through the index and the sealed pack alone.
  store_.reset();
  auto reopened = Store::Open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(reopened).value();
  ExpectReadable(c, 3);
  ExpectReadable(d, 4);
}

TEST_F(FullDiskPackTest, ASealWithoutRoomKeepsThePackToSealLater) {
  Hash a = PutOk(11), b = PutOk(12);
  {
    // The objects fit; the footer, trailer and checksum do not.
    FileSizeLimit full(OpenPackSize() + 10);
    ASSERT_FALSE(store_->Flush().ok()) << "a seal past the limit succeeded";
  }
  Hash c = PutOk(13);
  Status flushed = store_->Flush();
  ASSERT_TRUE(flushed.ok()) << "the pack was lost with its first seal: " << flushed.ToString();
  ExpectReadable(a, 11);
  ExpectReadable(b, 12);
  ExpectReadable(c, 13);
}

}  // namespace
}  // namespace strata
