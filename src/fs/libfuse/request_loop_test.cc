// Which requests the dispatcher answers itself and which go to its workers.
#include "fs/libfuse/request_loop.h"

#define FUSE_USE_VERSION 312
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fuse.h>

#include <vector>

namespace strata::fs {
namespace {

TEST(RequestLoopTest, NamespaceRequestsAreAnsweredByTheDispatcher) {
  for (uint32_t op : {FUSE_LOOKUP, FUSE_FORGET, FUSE_GETATTR, FUSE_SETATTR, FUSE_CREATE, FUSE_MKNOD, FUSE_MKDIR,
                      FUSE_UNLINK, FUSE_RMDIR, FUSE_RENAME2, FUSE_LINK, FUSE_SYMLINK, FUSE_READLINK, FUSE_OPEN,
                      FUSE_RELEASE, FUSE_FLUSH, FUSE_OPENDIR, FUSE_READDIRPLUS, FUSE_STATFS, FUSE_SETXATTR,
                      FUSE_GETXATTR, FUSE_INIT}) {
    for (bool writes_may_wait : {false, true}) {
      EXPECT_FALSE(RunsOnWorker(op, writes_may_wait)) << "opcode " << op;
    }
  }
}

TEST(RequestLoopTest, RequestsThatMayWaitOnIoGoToWorkers) {
  for (uint32_t op : {FUSE_READ, FUSE_FSYNC, FUSE_FSYNCDIR, FUSE_FALLOCATE, FUSE_LSEEK, FUSE_COPY_FILE_RANGE}) {
    for (bool writes_may_wait : {false, true}) {
      EXPECT_TRUE(RunsOnWorker(op, writes_may_wait)) << "opcode " << op;
    }
  }
}

TEST(RequestLoopTest, WritesGoToWorkersOnlyWhenTheyMayWait) {
  EXPECT_FALSE(RunsOnWorker(FUSE_WRITE, false));
  EXPECT_TRUE(RunsOnWorker(FUSE_WRITE, true));
}

// A WRITE request as the kernel sends it: the header, then fuse_write_in.
std::vector<char> WriteRequest(uint32_t open_flags, uint32_t write_flags) {
  std::vector<char> req(sizeof(fuse_in_header) + sizeof(fuse_write_in) + 4096);
  auto* header = reinterpret_cast<fuse_in_header*>(req.data());
  header->opcode = FUSE_WRITE;
  header->len = static_cast<uint32_t>(req.size());
  auto* in = reinterpret_cast<fuse_write_in*>(header + 1);
  in->size = 4096;
  in->flags = open_flags;
  in->write_flags = write_flags;
  return req;
}

TEST(RequestLoopTest, DirectWritesAreToldApartFromOthers) {
  auto direct = WriteRequest(O_RDWR | O_DIRECT, 0);
  EXPECT_TRUE(IsDirectWrite(direct.data(), direct.size()));
  auto buffered = WriteRequest(O_RDWR, 0);
  EXPECT_FALSE(IsDirectWrite(buffered.data(), buffered.size()));
  auto writeback = WriteRequest(O_RDWR | O_DIRECT, FUSE_WRITE_CACHE);  // a cached page written back
  EXPECT_FALSE(IsDirectWrite(writeback.data(), writeback.size()));
  EXPECT_FALSE(IsDirectWrite(direct.data(), sizeof(fuse_in_header) + 4)) << "too short for fuse_write_in";
  auto read = WriteRequest(O_RDWR | O_DIRECT, 0);
  reinterpret_cast<fuse_in_header*>(read.data())->opcode = FUSE_READ;
  EXPECT_FALSE(IsDirectWrite(read.data(), read.size()));
}

}  // namespace
}  // namespace strata::fs
