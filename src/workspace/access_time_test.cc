// Access times moved by reads (NoteRead) and renames that leave a whiteout
// (RenameLeavingWhiteout): what they change, and what they must not.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "workspace/workspace.h"
#include "testing/workspace_test_util.h"

namespace strata {
namespace {

using namespace workspace_testing;

TEST_F(WorkspaceTest, RelativeAtimeMovesOnceAfterAChangeAndChangesNothingToCommit) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr small = L(*ws, a.ino, "small");
  ASSERT_EQ(small.atime_ns, small.mtime_ns) << "a file from a commit shows its mtime as atime";
  const uint64_t changed = ws->Info().changed_inodes;

  ASSERT_TRUE(ws->NoteRead(small.ino, AtimeRule::kRelative).ok());
  const Attr read = *ws->GetAttr(small.ino);
  EXPECT_GT(read.atime_ns, small.mtime_ns);
  EXPECT_EQ(read.ctime_ns, small.ctime_ns) << "an atime update is no change of the inode";
  EXPECT_EQ(read.mtime_ns, small.mtime_ns);
  ASSERT_TRUE(ws->NoteRead(small.ino, AtimeRule::kRelative).ok());
  EXPECT_EQ(ws->GetAttr(small.ino)->atime_ns, read.atime_ns) << "relatime: a second read moved atime";
  EXPECT_EQ(ws->Info().changed_inodes, changed) << "a file that was only read counts as changed";
  auto outcome = ws->Commit(CommitRequest{"only read", "t", "main"});
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->commit) << "a workspace that was only read made a commit";
  EXPECT_EQ(ws->Counters().changed_paths, 0u);

  // After a write, the next read moves it again.
  W(*ws, small.ino, 0, "H");
  ASSERT_TRUE(ws->NoteRead(small.ino, AtimeRule::kRelative).ok());
  EXPECT_GE(ws->GetAttr(small.ino)->atime_ns, ws->GetAttr(small.ino)->mtime_ns);
  EXPECT_GT(ws->GetAttr(small.ino)->atime_ns, read.atime_ns);
}

TEST_F(WorkspaceTest, StrictAtimeMovesOnEveryRead) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  ASSERT_TRUE(ws->NoteRead(f.ino, AtimeRule::kStrict).ok());
  const int64_t first = ws->GetAttr(f.ino)->atime_ns;
  ASSERT_TRUE(ws->NoteRead(f.ino, AtimeRule::kStrict).ok());
  EXPECT_GT(ws->GetAttr(f.ino)->atime_ns, first);
  // A directory's atime is not moved (reads of files only), nor is a missing inode found.
  const int64_t root_atime = ws->GetAttr(kRootInode)->atime_ns;
  ASSERT_TRUE(ws->NoteRead(kRootInode, AtimeRule::kStrict).ok());
  EXPECT_EQ(ws->GetAttr(kRootInode)->atime_ns, root_atime);
  EXPECT_EQ(ws->NoteRead(999999, AtimeRule::kStrict).errno_value(), ENOENT);
}

TEST_F(WorkspaceTest, RenameLeavingWhiteoutPutsADevice00AtTheSource) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  W(*ws, f.ino, 0, "data");
  Attr d = Mkdir(*ws, kRootInode, "d");
  const Credentials who{1234, 5678, 077};
  ASSERT_TRUE(ws->RenameLeavingWhiteout(kRootInode, "f", d.ino, "g", 0, who).ok());
  Attr g = L(*ws, d.ino, "g");
  EXPECT_EQ(g.ino, f.ino);
  EXPECT_EQ(ReadAll(*ws, g.ino), "data");
  Attr w = L(*ws, kRootInode, "f");
  EXPECT_NE(w.ino, f.ino);
  EXPECT_EQ(w.mode, static_cast<uint32_t>(S_IFCHR)) << "mode 0" << std::oct << w.mode;
  EXPECT_EQ(w.rdev, makedev(0, 0));
  EXPECT_EQ(w.uid, 1234u);
  EXPECT_EQ(w.gid, 5678u);
  // Refused: an exchange, and an existing target with NOREPLACE; nothing changes.
  EXPECT_EQ(ws->RenameLeavingWhiteout(d.ino, "g", kRootInode, "f", kRenameExchange, who).errno_value(), EINVAL);
  EXPECT_EQ(ws->RenameLeavingWhiteout(d.ino, "g", kRootInode, "f", kRenameNoReplace, who).errno_value(), EEXIST);
  EXPECT_EQ(L(*ws, d.ino, "g").ino, f.ino);
  EXPECT_EQ(L(*ws, kRootInode, "f").ino, w.ino);
  EXPECT_EQ(Names(*ws, kRootInode), (std::set<std::string>{"d", "f"}));
}

}  // namespace
}  // namespace strata
