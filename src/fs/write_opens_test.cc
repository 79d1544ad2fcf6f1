#include "fs/write_opens.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace strata::fs {
namespace {

std::vector<uint64_t> Sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(WriteOpens, OnlyNotedFilesTheKernelHoldsAreFlushed) {
  WriteOpens opens;
  opens.Note(5);
  opens.Note(7);
  const uint64_t mark = opens.Mark();
  // 3 is held but was only read; 9 is held and never opened here.
  EXPECT_EQ(Sorted(opens.Among({3, 5, 7, 9}, mark)), (std::vector<uint64_t>{5, 7}));
}

TEST(WriteOpens, ClosedFileStaysNotedWhileHeld) {
  WriteOpens opens;
  opens.Note(5);  // its descriptor may be closed, a mapping of it not
  EXPECT_EQ(opens.Among({5}, opens.Mark()), (std::vector<uint64_t>{5}));
  EXPECT_EQ(opens.Among({5}, opens.Mark()), (std::vector<uint64_t>{5}));
}

TEST(WriteOpens, FileTheKernelLetGoIsForgotten) {
  WriteOpens opens;
  opens.Note(5);
  EXPECT_TRUE(opens.Among({}, opens.Mark()).empty());
  // Held again later (looked up anew, only read): not flushed.
  EXPECT_TRUE(opens.Among({5}, opens.Mark()).empty());
}

TEST(WriteOpens, FileNotedAfterTheMarkIsKept) {
  WriteOpens opens;
  const uint64_t mark = opens.Mark();
  opens.Note(5);  // opened after the held list was read, so not in it
  EXPECT_TRUE(opens.Among({}, mark).empty());
  EXPECT_EQ(opens.Among({5}, opens.Mark()), (std::vector<uint64_t>{5}));
}

}  // namespace
}  // namespace strata::fs
