// Cgroup against a directory laid out like a cgroup file system: what it
// writes where, for v2 (the unified hierarchy current distributions use) and
// v1. A real cgroupfs creates a group's control files itself on mkdir; here
// the test lays them out first, as the kernel would.
#include "sandbox/cgroup.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing/store_test_util.h"
#include "util/small_file.h"

namespace strata::sandbox {
namespace {

namespace fs = std::filesystem;

void Put(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string Own() { return "exec-" + std::to_string(::getpid()); }

// A v2 root offering `controllers`, with this process's group already made.
void LayOutV2(const std::string& root, const std::string& controllers) {
  Put(root + "/cgroup.controllers", controllers + "\n");
  Put(root + "/cgroup.subtree_control", "");
  Put(root + "/strata/cgroup.subtree_control", "");
  const std::string g = root + "/strata/" + Own();
  for (const char* f : {"cgroup.procs", "memory.max", "memory.swap.max", "memory.events", "cpu.max", "pids.max"})
    Put(g + "/" + f, "");
}

Limits AllLimits() {
  Limits l;
  l.memory_bytes = 64u << 20;
  l.cpus = 1.5;
  l.pids = 100;
  return l;
}

TEST(CgroupV2, WritesEachLimitAndEnablesItsControllersOnTheWayDown) {
  strata::testing::TempDir dir;
  LayOutV2(dir.path(), "cpuset cpu io memory hugetlb pids rdma misc");
  auto cg = Cgroup::CreateUnder(dir.path(), AllLimits());
  ASSERT_TRUE(cg.ok()) << cg.status().message();
  EXPECT_STREQ((*cg)->version(), "v2");
  const std::string g = dir.path() + "/strata/" + Own();
  EXPECT_EQ(ReadSmallFile(dir.path() + "/cgroup.subtree_control"), "+memory +cpu +pids");
  EXPECT_EQ(ReadSmallFile(dir.path() + "/strata/cgroup.subtree_control"), "+memory +cpu +pids");
  EXPECT_EQ(ReadSmallFile(g + "/memory.max"), std::to_string(64u << 20));
  EXPECT_EQ(ReadSmallFile(g + "/memory.swap.max"), "0");
  EXPECT_EQ(ReadSmallFile(g + "/cpu.max"), "150000 100000");
  EXPECT_EQ(ReadSmallFile(g + "/pids.max"), "100");
  EXPECT_EQ((*cg)->AddSelf(), 0);
  EXPECT_EQ(ReadSmallFile(g + "/cgroup.procs"), "0");  // "0": the writer itself
}

TEST(CgroupV2, EnablesOnlyTheControllersOfTheLimitsAsked) {
  strata::testing::TempDir dir;
  LayOutV2(dir.path(), "memory pids");
  Limits l;
  l.pids = 7;
  auto cg = Cgroup::CreateUnder(dir.path(), l);
  ASSERT_TRUE(cg.ok()) << cg.status().message();
  EXPECT_EQ(ReadSmallFile(dir.path() + "/cgroup.subtree_control"), "+pids");
  EXPECT_EQ(ReadSmallFile(dir.path() + "/strata/" + Own() + "/pids.max"), "7");
  EXPECT_EQ(ReadSmallFile(dir.path() + "/strata/" + Own() + "/memory.max"), "");
  EXPECT_FALSE((*cg)->MemoryLimitHit());  // no memory limit, nothing to have hit
}

TEST(CgroupV2, AMissingControllerIsUnsupportedAndNamed) {
  strata::testing::TempDir dir;
  // This machine's own v2 hierarchy offers no controller at all; "cpuset"
  // is not "cpu".
  for (const char* offered : {"", "cpuset memory pids"}) {
    LayOutV2(dir.path(), offered);
    Limits l;
    l.cpus = 1;
    auto cg = Cgroup::CreateUnder(dir.path(), l);
    ASSERT_FALSE(cg.ok()) << offered;
    EXPECT_EQ(cg.status().code(), Status::Code::kUnsupported);
    EXPECT_NE(cg.status().message().find("cpu controller"), std::string::npos) << cg.status().message();
    EXPECT_EQ(ReadSmallFile(dir.path() + "/cgroup.subtree_control"), "") << "nothing enabled before the refusal";
  }
}

TEST(CgroupV2, TheOomKillCountSaysTheMemoryLimitWasHit) {
  strata::testing::TempDir dir;
  LayOutV2(dir.path(), "memory");
  Limits l;
  l.memory_bytes = 1u << 20;
  auto cg = Cgroup::CreateUnder(dir.path(), l);
  ASSERT_TRUE(cg.ok()) << cg.status().message();
  const std::string events = dir.path() + "/strata/" + Own() + "/memory.events";
  Put(events, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\n");
  EXPECT_FALSE((*cg)->MemoryLimitHit());
  Put(events, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n");
  EXPECT_TRUE((*cg)->MemoryLimitHit());
}

TEST(CgroupV2, RemoveStaleRemovesOnlyTheGroupsOfProcessesThatAreGone) {
  strata::testing::TempDir dir;
  LayOutV2(dir.path(), "pids");
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string parent = dir.path() + "/strata/";
  fs::create_directory(parent + "exec-" + std::to_string(child));  // its owner is gone
  fs::create_directory(parent + "other");                         // not strata's naming
  Cgroup::RemoveStaleUnder(dir.path());
  EXPECT_FALSE(fs::exists(parent + "exec-" + std::to_string(child)));
  EXPECT_TRUE(fs::exists(parent + Own()));  // this process lives
  EXPECT_TRUE(fs::exists(parent + "other"));
}

TEST(CgroupV1, EachControllerGetsItsOwnGroup) {
  strata::testing::TempDir dir;
  const std::string r = dir.path();
  for (const char* c : {"memory", "cpu", "pids"}) Put(r + "/" + c + "/cgroup.procs", "");
  const std::string id = "/strata/" + Own();
  for (const char* f : {"cgroup.procs", "memory.limit_in_bytes", "memory.swappiness", "memory.oom_control"})
    Put(r + "/memory" + id + "/" + f, "");
  for (const char* f : {"cgroup.procs", "cpu.cfs_period_us", "cpu.cfs_quota_us"}) Put(r + "/cpu" + id + "/" + f, "");
  for (const char* f : {"cgroup.procs", "pids.max"}) Put(r + "/pids" + id + "/" + f, "");
  auto cg = Cgroup::CreateUnder(r, AllLimits());
  ASSERT_TRUE(cg.ok()) << cg.status().message();
  EXPECT_STREQ((*cg)->version(), "v1");
  EXPECT_EQ(ReadSmallFile(r + "/memory" + id + "/memory.limit_in_bytes"), std::to_string(64u << 20));
  EXPECT_EQ(ReadSmallFile(r + "/memory" + id + "/memory.swappiness"), "0");
  EXPECT_EQ(ReadSmallFile(r + "/cpu" + id + "/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(ReadSmallFile(r + "/cpu" + id + "/cpu.cfs_quota_us"), "150000");
  EXPECT_EQ(ReadSmallFile(r + "/pids" + id + "/pids.max"), "100");
  EXPECT_EQ((*cg)->AddSelf(), 0);
  for (const char* c : {"memory", "cpu", "pids"}) EXPECT_EQ(ReadSmallFile(r + "/" + c + id + "/cgroup.procs"), "0") << c;
  Put(r + "/memory" + id + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  EXPECT_TRUE((*cg)->MemoryLimitHit());
}

}  // namespace
}  // namespace strata::sandbox
