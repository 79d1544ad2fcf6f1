#include "sandbox/command_lookup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/store_test_util.h"

namespace strata::sandbox {
namespace {

class CommandLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_ = dir_.path() + "/tree";
    ASSERT_EQ(::mkdir(tree_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((tree_ + "/bin").c_str(), 0755), 0);
    Write("/bin/prog", 0755);
    Write("/bin/data", 0644);
    // Absolute: inside a root tree it leads to the tree's /bin/prog, whatever the host has there.
    ASSERT_EQ(::symlink("/bin/prog", (tree_ + "/bin/abs").c_str()), 0);
  }
  void Write(const std::string& rel, mode_t mode) {
    std::ofstream(tree_ + rel) << "#!/bin/sh\n";
    ASSERT_EQ(::chmod((tree_ + rel).c_str(), mode), 0);
  }
  SandboxSpec Spec(SandboxSpec::Layout layout, const std::string& program) {
    SandboxSpec spec;
    spec.layout = layout;
    spec.tree = tree_;
    spec.at = "/strata-lookup-test-at";  // not on the host: only the tree answers there
    spec.command = {program};
    return spec;
  }
  testing::TempDir dir_;
  std::string tree_;
};

TEST_F(CommandLookupTest, ARootTreeIsSearchedAsTheSandboxSeesIt) {
  using L = SandboxSpec::Layout;
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "prog"), "/usr/bin:/bin"), CommandLookup::kFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "abs"), "/bin"), CommandLookup::kFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "/bin/prog"), ""), CommandLookup::kFound);
  // The host's own programs are not in the tree.
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "sh"), "/usr/bin:/bin"), CommandLookup::kNotFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "data"), "/bin"), CommandLookup::kNotExecutable);
  EXPECT_EQ(LookUpCommand(Spec(L::kRoot, "bin"), ":/usr/bin"), CommandLookup::kNotExecutable);  // "" is "/"
}

TEST_F(CommandLookupTest, UnderAtTheTreeIsTheWorkingDirectoryAndTheHostTheRest) {
  using L = SandboxSpec::Layout;
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "./bin/prog"), "/bin"), CommandLookup::kFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "bin/data"), "/bin"), CommandLookup::kNotExecutable);
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "bin/nothing"), "/bin"), CommandLookup::kNotFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "sh"), "/nonexistent:/bin"), CommandLookup::kFound);
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "no-such-program-anywhere"), "/usr/bin:/bin"), CommandLookup::kNotFound);
  // A link out of the tree under --at cannot be followed from here: bwrap decides.
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "bin/abs"), "/bin"), CommandLookup::kFound);
  // The sandbox's own /tmp is not the host's: never a sure answer.
  EXPECT_EQ(LookUpCommand(Spec(L::kAt, "/tmp/none"), ""), CommandLookup::kFound);
  EXPECT_EQ(ExitStatusOf(CommandLookup::kNotFound), 127);
  EXPECT_EQ(ExitStatusOf(CommandLookup::kNotExecutable), 126);
}

}  // namespace
}  // namespace strata::sandbox
