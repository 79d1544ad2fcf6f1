// How a request that came over io_uring in three pieces is laid out again:
// the in header's length must account for the header, a fixed struct of at
// most the ring's op_in area, and the payload the kernel says it wrote.
#include "fs/kernel/uring_entry.h"

#include <gtest/gtest.h>

namespace strata::fs::kernel {
namespace {

fuse_in_header HeaderOfLength(uint32_t len) {
  fuse_in_header h{};
  h.len = len;
  h.opcode = FUSE_WRITE;
  h.unique = 2;
  return h;
}

TEST(UringEntryLayout, TheFixedStructIsWhatTheLengthLeaves) {
  auto write = UringEntry::FixedStructBytes(HeaderOfLength(40 + sizeof(fuse_write_in) + 4096), 4096);
  ASSERT_TRUE(write.ok()) << write.status().ToString();
  EXPECT_EQ(*write, sizeof(fuse_write_in));
  // LOOKUP: no fixed struct, the name in the payload.
  auto lookup = UringEntry::FixedStructBytes(HeaderOfLength(40 + 6), 6);
  ASSERT_TRUE(lookup.ok());
  EXPECT_EQ(*lookup, 0u);
  auto largest = UringEntry::FixedStructBytes(HeaderOfLength(40 + kUringOpInBytes), 0);
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(*largest, kUringOpInBytes);
}

TEST(UringEntryLayout, LengthsThatCannotBeAreRefused) {
  // Shorter than the header and payload together.
  EXPECT_TRUE(UringEntry::FixedStructBytes(HeaderOfLength(40 + 100), 200).status().IsInvalidArgument());
  EXPECT_TRUE(UringEntry::FixedStructBytes(HeaderOfLength(10), 0).status().IsInvalidArgument());
  // A fixed struct larger than the ring's op_in area.
  EXPECT_TRUE(UringEntry::FixedStructBytes(HeaderOfLength(40 + kUringOpInBytes + 1), 0).status().IsInvalidArgument());
}

TEST(UringEntryLayout, ThereIsAtLeastOneQueue) {
  auto cpus = PossibleCpus();
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_GE(*cpus, 1u);
}

}  // namespace
}  // namespace strata::fs::kernel
