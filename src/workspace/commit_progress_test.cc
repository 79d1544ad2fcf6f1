// The counters of a running commit: read by another thread while the commit
// runs, they only grow, never pass their totals, and end at the files and
// bytes the commit captured.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <thread>
#include <set>
#include <string>

#include "testing/store_test_util.h"
#include "workspace/workspace.h"

namespace strata {
namespace {

constexpr Credentials kWho{1000, 1000};

class CommitProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
    ASSERT_TRUE(Workspace::Create(*store_, "w", std::nullopt, "main").ok());
    ws_ = std::move(Workspace::Open(*store_, "w")).value();
  }
  void Write(const std::string& name, size_t size) {
    auto a = ws_->MakeNode(kRootInode, name, S_IFREG | 0644, 0, kWho);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    std::string data(size, '\0');
    for (size_t i = 0; i < size; i++) data[i] = static_cast<char>((i * 2654435761u) >> 13);
    ASSERT_TRUE(ws_->Write(a->ino, 0, data).ok());
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Workspace> ws_;
};

TEST_F(CommitProgressTest, AReaderSeesTheCountsGrowAndEndAtWhatWasCaptured) {
  constexpr int kFiles = 40;
  constexpr size_t kSize = 300'000;
  for (int i = 0; i < kFiles; i++) Write("f" + std::to_string(i), kSize + i);
  uint64_t sizes = 0;
  for (int i = 0; i < kFiles; i++) sizes += kSize + i;

  CommitProgress progress;
  EXPECT_EQ(progress.Read().phase, CommitPhase::kIdle);
  std::atomic<bool> over{false};
  // What the reader saw go wrong (checked here, not stored: it reads in a tight loop).
  uint64_t shrank = 0, past_total = 0;
  std::thread reader([&] {
    uint64_t files = 0, bytes = 0;
    while (!over) {
      const CommitProgressView v = progress.Read();
      if (v.files_done < files || v.bytes_done < bytes) shrank++;
      files = v.files_done;
      bytes = v.bytes_done;
      // The totals are set before the capture begins, and read here after the done counts.
      if (v.phase != CommitPhase::kCut && (v.files_done > v.files_total || v.bytes_done > v.bytes_total)) past_total++;
    }
  });
  auto out = ws_->Commit(CommitRequest{"m", "tester", ""}, &progress);
  over = true;
  reader.join();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(out->commit);

  const CommitProgressView end = progress.Read();
  EXPECT_EQ(end.phase, CommitPhase::kDone);
  EXPECT_EQ(end.files_total, out->stats.files_captured);
  EXPECT_EQ(end.files_done, static_cast<uint64_t>(kFiles));
  EXPECT_EQ(end.files_total, static_cast<uint64_t>(kFiles));
  EXPECT_EQ(end.bytes_done, sizes);
  EXPECT_EQ(end.bytes_total, sizes);
  EXPECT_EQ(shrank, 0u);
  EXPECT_EQ(past_total, 0u);
}

TEST_F(CommitProgressTest, ASecondCommitCountsFromZeroAndNothingToCommitCountsNothing) {
  Write("a", 100'000);
  CommitProgress progress;
  const CommitRequest request{"m", "tester", ""};
  ASSERT_TRUE(ws_->Commit(request, &progress).ok());
  EXPECT_EQ(progress.Read().files_done, 1u);

  Write("b", 5'000);
  Write("c", 7'000);
  ASSERT_TRUE(ws_->Commit(request, &progress).ok());
  CommitProgressView v = progress.Read();
  EXPECT_EQ(v.files_done, 2u);
  EXPECT_EQ(v.bytes_done, 12'000u);
  EXPECT_EQ(v.phase, CommitPhase::kDone);

  auto nothing = ws_->Commit(request, &progress);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->commit);
  v = progress.Read();
  EXPECT_EQ(v.phase, CommitPhase::kDone);
  EXPECT_EQ(v.files_done, 0u);
  EXPECT_EQ(v.files_total, 0u);
}

TEST(CommitPhaseNameTest, EveryPhaseHasItsOwnName) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(CommitPhase::kDone); i++) names.insert(CommitPhaseName(static_cast<CommitPhase>(i)));
  EXPECT_EQ(names.size(), 7u);
}

}  // namespace
}  // namespace strata
