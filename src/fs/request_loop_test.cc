// Which requests the dispatcher answers itself and which go to its workers.
#include "fs/request_loop.h"

#define FUSE_USE_VERSION 312
#include <gtest/gtest.h>
#include <linux/fuse.h>

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

}  // namespace
}  // namespace strata::fs
