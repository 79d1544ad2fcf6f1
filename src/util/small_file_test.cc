#include "util/small_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace strata {
namespace {

TEST(SmallFile, ReadsTheWholeFileBytesIncluded) {
  char path[] = "/tmp/strata-small-file-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string bytes("oom_kill 3\n\0tail", 16);
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(ReadSmallFile(path), bytes);
  std::remove(path);
  EXPECT_EQ(ReadSmallFile(path), "");  // missing: empty, not an error
}

}  // namespace
}  // namespace strata
