// Workspace unit tests: namespace, data, lifetime, crash recovery, and a
// randomized model test (range operations are in data_range_test.cc).
#include "workspace/workspace.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "testing/store_test_util.h"
#include "testing/workspace_test_util.h"

namespace strata {
namespace {

using namespace workspace_testing;

TEST_F(WorkspaceTest, OpeningIsLazyAndOnlyLookedIntoDirectoriesAreLoaded) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  EXPECT_EQ(CountDentries(*ws, -1), 0);  // nothing read at open
  WorkspaceInfo info = ws->Info();
  EXPECT_EQ(info.name, "ws");
  EXPECT_EQ(info.base, base);
  EXPECT_EQ(info.branch, "main");

  Attr a = L(*ws, kRootInode, "a");
  EXPECT_EQ(CountDentries(*ws, kRootInode), 6);
  EXPECT_EQ(CountDentries(*ws, -1), 6);  // a itself is not loaded by being looked up
  EXPECT_TRUE(S_ISDIR(a.mode));
  EXPECT_EQ(a.nlink, 1u);  // unknown until loaded
  EXPECT_EQ(ws->GetAttr(kRootInode)->nlink, 2u + 4u);  // a, b, c, empty

  EXPECT_EQ(Names(*ws, a.ino), (std::set<std::string>{"big", "small", "sub"}));
  EXPECT_EQ(CountDentries(*ws, a.ino), 3);
  EXPECT_EQ(CountDentries(*ws, -1), 9);
  EXPECT_EQ(ws->GetAttr(a.ino)->nlink, 3u);
  EXPECT_EQ(CountDentries(*ws, L(*ws, kRootInode, "c").ino), 0);
  EXPECT_EQ(CountDentries(*ws, L(*ws, a.ino, "sub").ino), 0);
  EXPECT_EQ(ws->Info().changed_inodes, 0u);  // loading is not a change
}

TEST_F(WorkspaceTest, ReadsBaseFilesMetadataAndHardLinks) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  // b first: its hard link names a/small, in a directory nobody looked into yet.
  Attr b = L(*ws, kRootInode, "b");
  Attr link = L(*ws, b.ino, "link_to_small");
  Attr a = L(*ws, kRootInode, "a");
  Attr small = L(*ws, a.ino, "small");
  EXPECT_EQ(link.ino, small.ino);
  EXPECT_EQ(small.nlink, 2u);
  EXPECT_EQ(ReadAll(*ws, link.ino), "hello");

  Attr big = L(*ws, a.ino, "big");
  EXPECT_EQ(big.size, big_.size());
  EXPECT_EQ(big.mode, S_IFREG | 0644u);
  EXPECT_EQ(big.uid, 1000u);
  EXPECT_EQ(big.mtime_ns, 1700000000ll * 1000000000);
  EXPECT_EQ(ReadAll(*ws, big.ino, 65536), big_);
  EXPECT_EQ(ReadAll(*ws, big.ino, 1000003), big_);  // pieces across chunk boundaries
  std::string buf(100, '\0');
  auto n = ws->Read(big.ino, 700 * 1024 - 50, 100, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(buf, big_.substr(700 * 1024 - 50, 100));
  n = ws->Read(big.ino, big_.size() - 10, 100, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 10u);
  EXPECT_EQ(*ws->Read(big.ino, big_.size() + 5, 100, buf.data()), 0u);

  Attr sym = L(*ws, kRootInode, "sym");
  EXPECT_TRUE(S_ISLNK(sym.mode));
  EXPECT_EQ(*ws->ReadLink(sym.ino), "a/small");
  EXPECT_EQ(sym.size, 7u);
  Attr top = L(*ws, kRootInode, "top");
  EXPECT_EQ(*ws->GetXattr(top.ino, "user.k"), "v");
  Attr root = *ws->GetAttr(kRootInode);
  EXPECT_EQ(root.mode, S_IFDIR | 0750u);
  EXPECT_EQ(root.uid, 1000u);
  EXPECT_EQ(root.mtime_ns, 1600000000ll * 1000000000);
  EXPECT_EQ(*ws->GetXattr(kRootInode, "user.root"), "r");
  EXPECT_EQ(Names(*ws, L(*ws, kRootInode, "empty").ino), std::set<std::string>{});
}

TEST_F(WorkspaceTest, HardLinkFindsItsInodeAfterTheFirstNameMoved) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr c = L(*ws, kRootInode, "c");
  Attr small = L(*ws, a.ino, "small");
  ASSERT_TRUE(ws->Rename(a.ino, "small", c.ino, "moved", 0).ok());
  W(*ws, small.ino, 0, "HE");
  Attr b = L(*ws, kRootInode, "b");
  Attr link = L(*ws, b.ino, "link_to_small");
  EXPECT_EQ(link.ino, small.ino);
  EXPECT_EQ(link.nlink, 2u);
  EXPECT_EQ(ReadAll(*ws, link.ino), "HEllo");
}

TEST_F(WorkspaceTest, WriteIntoTheMiddleOfABaseFileKeepsTheRestFromTheBase) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr big = L(*ws, L(*ws, kRootInode, "a").ino, "big");
  const uint64_t off = (3 << 20) / 2 + 3;
  W(*ws, big.ino, off, "PATCH");
  std::string expect = big_;
  expect.replace(off, 5, "PATCH");
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  EXPECT_EQ(ReadAll(*ws, big.ino, 4096), expect);
  EXPECT_EQ(ws->GetAttr(big.ino)->size, big_.size());
  // A second write adjacent to the first merges with it; one overlapping both
  // base and written bytes too.
  W(*ws, big.ino, off + 5, "MORE");
  W(*ws, big.ino, off - 2, "xx");
  expect.replace(off + 5, 4, "MORE");
  expect.replace(off - 2, 2, "xx");
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);

  struct stat st;
  ASSERT_EQ(::stat((WsDir() + "/data/" + std::to_string(big.ino)).c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), off + 9);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 256u * 1024);  // sparse: not a copy of 1.5 MiB
  EXPECT_EQ(ws->Info().changed_inodes, 1u);

  // Extending past the end: base, then zeros, then the new bytes.
  W(*ws, big.ino, big_.size() + 100, "end");
  expect += std::string(100, '\0') + "end";
  EXPECT_EQ(ReadAll(*ws, big.ino), expect);
}

// Dense writes into a base file, in every shape the extents table must merge:
// appends to a written range, rewrites inside one, writes bridging two,
// writes into gaps. Read back against a model, also after reopening (the
// extents come from the database then, not from anything in memory).
TEST_F(WorkspaceTest, DenseOverlappingWritesReadBackAsWritten) {
  Hash base = MakeBase();
  std::string expect = big_;
  {
    auto ws = CreateAndOpen(base);
    ASSERT_TRUE(ws);
    Attr big = L(*ws, L(*ws, kRootInode, "a").ino, "big");
    std::mt19937_64 rng(7);
    const uint64_t region = 64 << 10;
    for (int i = 0; i < 2000; i++) {
      uint64_t off;
      switch (rng() % 3) {
        case 0: off = rng() % region; break;                      // anywhere
        case 1: off = (rng() % (region / 4096)) * 4096; break;    // page-aligned, as fio writes
        default: off = (rng() % 16) * 4096 + 4096 - 1; break;     // just before a page boundary
      }
      std::string data = testing::RandomBytes(1 + rng() % 4096, rng());
      W(*ws, big.ino, off, data);
      expect.replace(off, data.size(), data);
      if (i % 500 == 0) {
        ASSERT_EQ(ReadAll(*ws, big.ino, 4096), expect) << "after write " << i;
      }
    }
    // Sequential appends past the end, each starting where the last ended,
    // every other one a single byte.
    for (int i = 0; i < 50; i++) {
      std::string data = testing::RandomBytes(i % 2 ? 1 : 1000 + i, rng());
      W(*ws, big.ino, expect.size(), data);
      expect += data;
    }
    EXPECT_EQ(ReadAll(*ws, big.ino), expect);
  }
  auto ws = Workspace::Open(*store_, "ws");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  Attr big = L(**ws, L(**ws, kRootInode, "a").ino, "big");
  EXPECT_EQ(ReadAll(**ws, big.ino, 4096), expect);
}

TEST_F(WorkspaceTest, TruncateDownThenUpReadsZeros) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr big = L(*ws, L(*ws, kRootInode, "a").ino, "big");
  SetAttrRequest down;
  down.size = 1000;
  ASSERT_TRUE(ws->SetAttr(big.ino, down).ok());
  EXPECT_EQ(ReadAll(*ws, big.ino), big_.substr(0, 1000));
  SetAttrRequest up;
  up.size = 5000;
  ASSERT_TRUE(ws->SetAttr(big.ino, up).ok());
  EXPECT_EQ(ReadAll(*ws, big.ino), big_.substr(0, 1000) + std::string(4000, '\0'));

  Attr f = Mk(*ws, kRootInode, "new");
  W(*ws, f.ino, 0, "abcdef");
  down.size = 2;
  up.size = 6;
  ASSERT_TRUE(ws->SetAttr(f.ino, down).ok());
  ASSERT_TRUE(ws->SetAttr(f.ino, up).ok());
  EXPECT_EQ(ReadAll(*ws, f.ino), std::string("ab\0\0\0\0", 6));
  struct stat st;
  ASSERT_EQ(::stat((WsDir() + "/data/" + std::to_string(f.ino)).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 6);  // kept until the truncation is committed: a crash may forget it
  ASSERT_TRUE(ws->Sync(f.ino).ok());
  ASSERT_EQ(::stat((WsDir() + "/data/" + std::to_string(f.ino)).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 2);  // then the data file gives back what no extent refers to
}

TEST_F(WorkspaceTest, ErrorsCarryTheErrnoOfALocalFilesystem) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr top = L(*ws, kRootInode, "top");
  EXPECT_EQ(Errno(ws->Lookup(kRootInode, "nope")), ENOENT);
  EXPECT_EQ(Errno(ws->Lookup(top.ino, "x")), ENOTDIR);
  EXPECT_EQ(Errno(ws->Lookup(kRootInode, std::string(256, 'n'))), ENAMETOOLONG);
  EXPECT_EQ(Errno(ws->MakeNode(kRootInode, std::string(256, 'n'), S_IFREG | 0644, 0, kWho)), ENAMETOOLONG);
  EXPECT_EQ(Errno(ws->MakeNode(kRootInode, "a/b", S_IFREG | 0644, 0, kWho)), EINVAL);
  EXPECT_EQ(Errno(ws->MakeNode(kRootInode, "", S_IFREG | 0644, 0, kWho)), EINVAL);
  EXPECT_EQ(Errno(ws->MakeNode(kRootInode, "top", S_IFREG | 0644, 0, kWho)), EEXIST);
  EXPECT_EQ(Errno(ws->MakeDirectory(kRootInode, "a", 0755, kWho)), EEXIST);
  EXPECT_EQ(Errno(ws->MakeNode(top.ino, "x", S_IFREG | 0644, 0, kWho)), ENOTDIR);
  EXPECT_EQ(Errno(ws->RemoveDirectory(kRootInode, "a")), ENOTEMPTY);
  EXPECT_EQ(Errno(ws->RemoveDirectory(kRootInode, "top")), ENOTDIR);
  EXPECT_EQ(Errno(ws->RemoveDirectory(kRootInode, "nope")), ENOENT);
  EXPECT_EQ(Errno(ws->Unlink(kRootInode, "a")), EISDIR);
  EXPECT_EQ(Errno(ws->Unlink(kRootInode, "nope")), ENOENT);
  std::string buf(10, '\0');
  EXPECT_EQ(Errno(ws->Read(a.ino, 0, 10, buf.data())), EISDIR);
  EXPECT_EQ(Errno(ws->Write(a.ino, 0, "x")), EISDIR);
  SetAttrRequest trunc;
  trunc.size = 0;
  EXPECT_EQ(Errno(ws->SetAttr(a.ino, trunc)), EISDIR);
  EXPECT_EQ(Errno(ws->ReadLink(top.ino)), EINVAL);
  EXPECT_EQ(Errno(ws->Link(a.ino, kRootInode, "alink")), EPERM);
  EXPECT_EQ(Errno(ws->Link(top.ino, kRootInode, "a")), EEXIST);
  EXPECT_EQ(Errno(ws->GetAttr(999999)), ENOENT);
  EXPECT_EQ(Errno(ws->ReadDirectory(top.ino, 0, 10)), ENOTDIR);
  EXPECT_EQ(Errno(ws->MakeSymlink(kRootInode, "s", "", kWho)), ENOENT);
  EXPECT_EQ(Errno(ws->MakeNode(kRootInode, "d", S_IFDIR | 0755, 0, kWho)), EINVAL);
  // The empty base directory can go; creating inside it while it is still
  // referenced by the kernel is ENOENT.
  Attr empty = L(*ws, kRootInode, "empty");
  ws->Ref(empty.ino);
  ASSERT_TRUE(ws->RemoveDirectory(kRootInode, "empty").ok());
  EXPECT_EQ(Errno(ws->MakeNode(empty.ino, "f", S_IFREG | 0644, 0, kWho)), ENOENT);
  EXPECT_EQ(ws->GetAttr(empty.ino)->nlink, 0u);
  ws->Unref(empty.ino, 1);
  EXPECT_EQ(Errno(ws->GetAttr(empty.ino)), ENOENT);
  // The user-caused errors above were all IOError-coded with an errno; a
  // workspace whose base is missing from the store reports EIO.
  Commit c;
  c.root = Hash::FromHex(std::string(64, 'a')).value();
  Hash broken = store_->Put(ObjectType::kCommit, EncodeCommit(c))->id;
  ASSERT_TRUE(store_->Flush().ok());
  auto bad = CreateAndOpen(broken, "broken");
  ASSERT_TRUE(bad);
  EXPECT_EQ(Errno(bad->Lookup(kRootInode, "x")), EIO);
}

TEST_F(WorkspaceTest, CreationsSetOwnersTimesAndParentLinkCounts) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr root0 = *ws->GetAttr(kRootInode);
  EXPECT_EQ(root0.nlink, 2u);
  Attr d = Mkdir(*ws, kRootInode, "d");
  EXPECT_EQ(d.uid, 1000u);
  EXPECT_EQ(d.nlink, 2u);
  Attr root1 = *ws->GetAttr(kRootInode);
  EXPECT_EQ(root1.nlink, 3u);
  EXPECT_GE(root1.mtime_ns, root0.mtime_ns);
  EXPECT_GE(root1.mtime_ns, d.ctime_ns);
  Attr f = Mk(*ws, d.ino, "f");
  ASSERT_TRUE(ws->Link(f.ino, kRootInode, "f2").ok());
  EXPECT_EQ(ws->GetAttr(f.ino)->nlink, 2u);
  ASSERT_TRUE(ws->Unlink(d.ino, "f").ok());
  EXPECT_EQ(ws->GetAttr(f.ino)->nlink, 1u);
  ASSERT_TRUE(ws->RemoveDirectory(kRootInode, "d").ok());
  EXPECT_EQ(ws->GetAttr(kRootInode)->nlink, 2u);
  auto s = ws->MakeSymlink(kRootInode, "s", "target", kWho);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*ws->ReadLink(s->ino), "target");
  auto fifo = ws->MakeNode(kRootInode, "fifo", S_IFIFO | 0600, 0, kWho);
  ASSERT_TRUE(fifo.ok());
  EXPECT_TRUE(S_ISFIFO(L(*ws, kRootInode, "fifo").mode));
  SetAttrRequest req;
  req.mode = 0600;
  req.uid = 5;
  req.mtime_ns = 42;
  Attr after = *ws->SetAttr(f.ino, req);
  EXPECT_EQ(after.mode, S_IFREG | 0600u);
  EXPECT_EQ(after.uid, 5u);
  EXPECT_EQ(after.mtime_ns, 42);
  EXPECT_GT(after.ctime_ns, 42);
}

TEST_F(WorkspaceTest, RenameVariants) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr b = L(*ws, kRootInode, "b");
  Attr c = L(*ws, kRootInode, "c");
  Attr sub = L(*ws, a.ino, "sub");
  // Across directories.
  ASSERT_TRUE(ws->Rename(c.ino, "x", b.ino, "x2", 0).ok());
  EXPECT_EQ(Errno(ws->Lookup(c.ino, "x")), ENOENT);
  EXPECT_EQ(ReadAll(*ws, L(*ws, b.ino, "x2").ino), "x");
  // A file over a file: the replaced inode is gone.
  Attr other = L(*ws, b.ino, "other");
  ASSERT_TRUE(ws->Rename(b.ino, "x2", b.ino, "other", 0).ok());
  EXPECT_EQ(ReadAll(*ws, L(*ws, b.ino, "other").ino), "x");
  EXPECT_EQ(Errno(ws->GetAttr(other.ino)), ENOENT);
  // A directory across directories: link counts of both parents.
  uint32_t a_links = ws->GetAttr(a.ino)->nlink, c_links = ws->GetAttr(c.ino)->nlink;
  ASSERT_TRUE(ws->Rename(a.ino, "sub", c.ino, "sub", 0).ok());
  EXPECT_EQ(ws->GetAttr(a.ino)->nlink, a_links - 1);
  EXPECT_EQ(ws->GetAttr(c.ino)->nlink, c_links + 1);
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, c.ino, "sub").ino, "deep").ino), "deep");
  // Into its own subtree.
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "c", sub.ino, "c", 0)), EINVAL);
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "c", c.ino, "c", 0)), EINVAL);
  // Type rules.
  Attr e1 = Mkdir(*ws, kRootInode, "e1");
  Attr e2 = Mkdir(*ws, kRootInode, "e2");
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "e1", kRootInode, "top", 0)), ENOTDIR);
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "top", kRootInode, "e1", 0)), EISDIR);
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "e1", kRootInode, "a", 0)), ENOTEMPTY);
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "nope", kRootInode, "x", 0)), ENOENT);
  uint32_t root_links = ws->GetAttr(kRootInode)->nlink;
  ASSERT_TRUE(ws->Rename(kRootInode, "e1", kRootInode, "e2", 0).ok());  // over an empty directory
  EXPECT_EQ(ws->GetAttr(kRootInode)->nlink, root_links - 1);
  EXPECT_EQ(L(*ws, kRootInode, "e2").ino, e1.ino);
  EXPECT_EQ(Errno(ws->GetAttr(e2.ino)), ENOENT);
  // No-replace.
  EXPECT_EQ(Errno(ws->Rename(kRootInode, "top", b.ino, "other", kRenameNoReplace)), EEXIST);
  ASSERT_TRUE(ws->Rename(kRootInode, "top", b.ino, "top", kRenameNoReplace).ok());
  // Exchange a file and a directory in different parents.
  Attr top = L(*ws, b.ino, "top");
  root_links = ws->GetAttr(kRootInode)->nlink;
  uint32_t b_links = ws->GetAttr(b.ino)->nlink;
  ASSERT_TRUE(ws->Rename(b.ino, "top", kRootInode, "e2", kRenameExchange).ok());
  EXPECT_EQ(L(*ws, b.ino, "top").ino, e1.ino);
  EXPECT_EQ(L(*ws, kRootInode, "e2").ino, top.ino);
  EXPECT_EQ(ws->GetAttr(kRootInode)->nlink, root_links - 1);
  EXPECT_EQ(ws->GetAttr(b.ino)->nlink, b_links + 1);
  EXPECT_EQ(Errno(ws->Rename(b.ino, "top", kRootInode, "nope", kRenameExchange)), ENOENT);
  EXPECT_EQ(Errno(ws->Rename(b.ino, "top", kRootInode, "e2", kRenameExchange | kRenameNoReplace)), EINVAL);
  // Exchanging a directory with one of its ancestors.
  Attr csub = L(*ws, c.ino, "sub");
  EXPECT_EQ(Errno(ws->Rename(csub.ino, "deep", kRootInode, "c", kRenameExchange)), EINVAL);
  // Two names of one inode: nothing happens.
  Attr link = L(*ws, b.ino, "link_to_small");
  ASSERT_TRUE(ws->Rename(b.ino, "link_to_small", a.ino, "small", 0).ok());
  EXPECT_EQ(L(*ws, b.ino, "link_to_small").ino, link.ino);
  EXPECT_EQ(ws->GetAttr(link.ino)->nlink, 2u);
  // Parent times move.
  int64_t before = ws->GetAttr(a.ino)->mtime_ns;
  ASSERT_TRUE(ws->Rename(a.ino, "big", a.ino, "big2", 0).ok());
  EXPECT_GT(ws->GetAttr(a.ino)->mtime_ns, before);
}

TEST_F(WorkspaceTest, ReadDirectoryOffsetsStayValidWhileTheDirectoryChanges) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr d = Mkdir(*ws, kRootInode, "d");
  for (int i = 0; i < 60; i++) Mk(*ws, d.ino, "f" + std::to_string(i));
  std::set<std::string> deleted;  // victims: multiples of 3, from the end
  std::multiset<std::string> seen;
  uint64_t offset = 0;
  int round = 0, next_victim = 59;
  while (true) {
    auto page = ws->ReadDirectory(d.ino, offset, 7);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const DirEntry& e : *page) {
      seen.insert(e.name);
      EXPECT_GT(e.offset, offset);
      EXPECT_EQ(e.type, static_cast<uint32_t>(S_IFREG));
      offset = e.offset;
    }
    // Between pages: add a name, remove one listed or not yet listed.
    if (round < 10) Mk(*ws, d.ino, "new" + std::to_string(round++));  // bounded, or the listing never ends
    while (next_victim >= 0 && next_victim % 3 != 0) next_victim--;
    if (next_victim >= 0) {
      ASSERT_TRUE(ws->Unlink(d.ino, "f" + std::to_string(next_victim)).ok());
      deleted.insert("f" + std::to_string(next_victim));
    }
    next_victim -= 1;
  }
  EXPECT_GE(deleted.size(), 8u);
  for (int i = 0; i < 60; i++) {
    std::string n = "f" + std::to_string(i);
    if (!deleted.count(n)) {
      EXPECT_EQ(seen.count(n), 1u) << n;  // present all along: exactly once
    }
  }
  for (const std::string& n : seen) EXPECT_EQ(seen.count(n), 1u) << n;
  EXPECT_EQ(Names(*ws, d.ino).size(), 60u - deleted.size() + round);
}

TEST_F(WorkspaceTest, Xattrs) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr top = L(*ws, kRootInode, "top");
  EXPECT_EQ(Errno(ws->SetXattr(top.ino, "user.k", "w", XATTR_CREATE)), EEXIST);
  EXPECT_EQ(Errno(ws->SetXattr(top.ino, "user.new", "w", XATTR_REPLACE)), ENODATA);
  ASSERT_TRUE(ws->SetXattr(top.ino, "user.k", "w", XATTR_REPLACE).ok());
  ASSERT_TRUE(ws->SetXattr(top.ino, "user.new", std::string("\0bin", 4), XATTR_CREATE).ok());
  EXPECT_EQ(*ws->GetXattr(top.ino, "user.k"), "w");
  EXPECT_EQ(*ws->GetXattr(top.ino, "user.new"), std::string("\0bin", 4));
  EXPECT_EQ(*ws->ListXattrs(top.ino), (std::vector<std::string>{"user.k", "user.new"}));
  EXPECT_EQ(Errno(ws->GetXattr(top.ino, "user.none")), ENODATA);
  EXPECT_EQ(Errno(ws->RemoveXattr(top.ino, "user.none")), ENODATA);
  ASSERT_TRUE(ws->RemoveXattr(top.ino, "user.k").ok());
  EXPECT_EQ(*ws->ListXattrs(top.ino), std::vector<std::string>{"user.new"});
  EXPECT_EQ(Errno(ws->SetXattr(top.ino, "", "v", 0)), ERANGE);
  EXPECT_EQ(Errno(ws->GetXattr(999999, "user.k")), ENOENT);
  ws.reset();
  ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(*ws->ListXattrs(top.ino), std::vector<std::string>{"user.new"});
}

TEST_F(WorkspaceTest, UnlinkedFileStaysUsableUntilTheLastReference) {
  auto ws = CreateAndOpen(std::nullopt);
  ASSERT_TRUE(ws);
  Attr f = Mk(*ws, kRootInode, "f");
  W(*ws, f.ino, 0, "still here");
  ws->Ref(f.ino);
  ws->Ref(f.ino);
  ASSERT_TRUE(ws->Unlink(kRootInode, "f").ok());
  EXPECT_EQ(Errno(ws->Lookup(kRootInode, "f")), ENOENT);
  EXPECT_EQ(ws->GetAttr(f.ino)->nlink, 0u);
  EXPECT_EQ(ReadAll(*ws, f.ino), "still here");
  W(*ws, f.ino, 0, "STILL");
  EXPECT_EQ(ReadAll(*ws, f.ino), "STILL here");
  ws->Unref(f.ino, 1);
  EXPECT_TRUE(ws->GetAttr(f.ino).ok());
  ws->Unref(f.ino, 1);
  EXPECT_EQ(Errno(ws->GetAttr(f.ino)), ENOENT);
  ASSERT_TRUE(ws->Sync(kRootInode).ok());  // data files go once their deletion is committed
  EXPECT_NE(::access((WsDir() + "/data/" + std::to_string(f.ino)).c_str(), F_OK), 0);
  // Unlinking a file nobody references deletes it at once.
  Attr g = Mk(*ws, kRootInode, "g");
  W(*ws, g.ino, 0, "x");
  ASSERT_TRUE(ws->Unlink(kRootInode, "g").ok());
  EXPECT_EQ(Errno(ws->GetAttr(g.ino)), ENOENT);
  ASSERT_TRUE(ws->Sync(kRootInode).ok());
  EXPECT_NE(::access((WsDir() + "/data/" + std::to_string(g.ino)).c_str(), F_OK), 0);
}

// A process killed before its batch commits forgets the batch, but what it
// synced stays whole: the data files an uncommitted unlink or truncation
// released are still there when the operation turns out never to have happened.
TEST_F(WorkspaceTest, ACrashForgetsUncommittedOperationsButBreaksNoFile) {
  ASSERT_TRUE(Workspace::Create(*store_, "ws", std::nullopt, "").ok());
  const std::string store_path = dir_.path() + "/s";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Its own store and workspace: nothing of the parent's is used after fork.
    auto store = Store::Open(store_path);
    if (!store.ok()) ::_exit(10);
    auto opened = Workspace::Open(**store, "ws");
    if (!opened.ok()) ::_exit(11);
    Workspace& ws = **opened;
    auto kept = ws.MakeNode(kRootInode, "kept", S_IFREG | 0644, 0, kWho);
    auto shrunk = ws.MakeNode(kRootInode, "shrunk", S_IFREG | 0644, 0, kWho);
    if (!kept.ok() || !shrunk.ok() || !ws.Write(kept->ino, 0, "durable data").ok() ||
        !ws.Write(shrunk->ino, 0, "0123456789").ok() || !ws.Sync(kept->ino).ok() || !ws.Sync(shrunk->ino).ok())
      ::_exit(12);
    SetAttrRequest cut;
    cut.size = 2;
    if (!ws.Unlink(kRootInode, "kept").ok() || !ws.SetAttr(shrunk->ino, cut).ok() ||
        !ws.MakeNode(kRootInode, "new", S_IFREG | 0644, 0, kWho).ok())
      ::_exit(13);
    ::_exit(0);  // no destructors: as if killed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  auto ws = std::move(Workspace::Open(*store_, "ws")).value();
  // The last three operations may or may not have been committed before the
  // exit (a batch commits after a short delay); either way every file is whole.
  auto kept = ws->Lookup(kRootInode, "kept");
  if (kept.ok()) {
    EXPECT_EQ(ReadAll(*ws, kept->ino), "durable data");
  }
  auto shrunk = ws->Lookup(kRootInode, "shrunk");
  ASSERT_TRUE(shrunk.ok());
  std::string data = ReadAll(*ws, shrunk->ino);
  EXPECT_TRUE(data == "0123456789" || data == "01") << data;
  EXPECT_EQ(kept.ok(), data == "0123456789") << "one batch: all three operations or none";
  EXPECT_EQ(kept.ok(), !ws->Lookup(kRootInode, "new").ok());
}

// Runs sql on the database file at path (the workspace closed), as an older strata would have left it.
void ExecOnDatabase(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A workspace database of schema version 1 (no tree ids) is upgraded when
// opened; its loaded directories are marked changed, so the next commit writes
// them instead of trusting an id they never had.
TEST_F(WorkspaceTest, AVersion1DatabaseIsUpgradedWhenOpened) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  L(*ws, a.ino, "small");  // loads the root and a
  ws.reset();
  ExecOnDatabase(WsDir() + "/workspace.db",
                 "DROP INDEX dentries_by_ino; ALTER TABLE inodes DROP COLUMN tree_id; "
                 "UPDATE meta SET value = '1' WHERE key = 'schema_version';");
  sqlite3* db = nullptr;

  auto reopened = Workspace::Open(*store_, "ws");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  ws = std::move(reopened).value();
  EXPECT_EQ(ws->Counters().changed_paths, 2u) << "the root and a, the loaded directories";
  EXPECT_EQ(ReadAll(*ws, L(*ws, a.ino, "small").ino), "hello");
  auto out = ws->Commit(CommitRequest{"after the upgrade", "tester", ""});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(out->commit) << "the same tree as the base: nothing to commit";
  EXPECT_EQ(ws->Counters().changed_paths, 0u);
  ws.reset();
  ASSERT_EQ(sqlite3_open((WsDir() + "/workspace.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), "4");
  sqlite3_finalize(st);
  // A version this strata does not know is refused, saying which.
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto refused = Workspace::Open(*store_, "ws");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kUnsupported);
  EXPECT_NE(refused.status().message().find("schema version 99"), std::string::npos) << refused.status().message();
}

// Version 2 kept base chunk lists in the inodes' rows; opened, they move to
// their own table and the files read as before.
TEST_F(WorkspaceTest, AVersion2DatabaseMovesItsChunkListsWhenOpened) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  const InodeId small = L(*ws, L(*ws, kRootInode, "a").ino, "small").ino;
  ws.reset();
  ExecOnDatabase(WsDir() + "/workspace.db",
                 "UPDATE inodes SET base_chunks = (SELECT list FROM base_chunks b WHERE b.ino = inodes.ino) "
                 "WHERE ino IN (SELECT ino FROM base_chunks); DROP TABLE base_chunks; "
                 "UPDATE meta SET value = '2' WHERE key = 'schema_version';");
  sqlite3* db = nullptr;
  auto reopened = Workspace::Open(*store_, "ws");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(ReadAll(**reopened, small), "hello");
  reopened->reset();
  ASSERT_EQ(sqlite3_open((WsDir() + "/workspace.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM inodes WHERE length(base_chunks) > 1", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 0) << "no list is left in an inode's row";
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Version 3 had no table of lists kept by reference; opened, it gets one.
TEST_F(WorkspaceTest, AVersion3DatabaseIsUpgradedWhenOpened) {
  ASSERT_TRUE(CreateAndOpen(MakeBase()));  // closed again at once
  ExecOnDatabase(WsDir() + "/workspace.db",
                 "DROP TABLE base_chunk_refs; UPDATE meta SET value = '3' WHERE key = 'schema_version';");
  auto ws = std::move(Workspace::Open(*store_, "ws")).value();
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "a").ino, "small").ino), "hello");
  ws.reset();
  // Opened at all: the version is this strata's now. And the table is there.
  ExecOnDatabase(WsDir() + "/workspace.db", "SELECT count(*) FROM base_chunk_refs");
}

TEST_F(WorkspaceTest, EverythingSurvivesCloseAndReopen) {
  Hash base = MakeBase();
  auto ws = CreateAndOpen(base);
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  Attr big = L(*ws, a.ino, "big");
  W(*ws, big.ino, 100, "patched");
  Attr d = Mkdir(*ws, kRootInode, "newdir");
  Attr f = Mk(*ws, d.ino, "file");
  W(*ws, f.ino, 0, "content");
  ASSERT_TRUE(ws->MakeSymlink(d.ino, "s", "file", kWho).ok());
  ASSERT_TRUE(ws->Rename(kRootInode, "top", d.ino, "top", 0).ok());
  ASSERT_TRUE(ws->SetXattr(f.ino, "user.x", "1", 0).ok());
  Attr gone = Mk(*ws, kRootInode, "gone");
  W(*ws, gone.ino, 0, "bytes");
  ws->Ref(gone.ino);
  ASSERT_TRUE(ws->Unlink(kRootInode, "gone").ok());
  ASSERT_TRUE(ws->Sync(f.ino).ok());
  uint64_t changed = ws->Info().changed_inodes;
  EXPECT_EQ(Errno(Workspace::Open(*store_, "ws")), EBUSY);  // one daemon per workspace
  ws.reset();  // like a daemon that went away with a reference still held
  // A data file whose inode is gone (crash between the transaction and the unlink).
  const std::string stray = WsDir() + "/data/999999";
  int fd = ::open(stray.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);

  ws = std::move(Workspace::Open(*store_, "ws")).value();
  std::string expect = big_;
  expect.replace(100, 7, "patched");
  EXPECT_EQ(ReadAll(*ws, L(*ws, L(*ws, kRootInode, "a").ino, "big").ino), expect);
  Attr d2 = L(*ws, kRootInode, "newdir");
  EXPECT_EQ(d2.ino, d.ino);
  EXPECT_EQ(Names(*ws, d2.ino), (std::set<std::string>{"file", "s", "top"}));
  EXPECT_EQ(ReadAll(*ws, L(*ws, d2.ino, "file").ino), "content");
  EXPECT_EQ(ReadAll(*ws, L(*ws, d2.ino, "top").ino), "top file");
  EXPECT_EQ(*ws->ReadLink(L(*ws, d2.ino, "s").ino), "file");
  EXPECT_EQ(*ws->GetXattr(f.ino, "user.x"), "1");
  EXPECT_EQ(Errno(ws->GetAttr(gone.ino)), ENOENT);
  EXPECT_NE(::access((WsDir() + "/data/" + std::to_string(gone.ino)).c_str(), F_OK), 0);
  EXPECT_NE(::access(stray.c_str(), F_OK), 0);
  EXPECT_EQ(ws->Info().changed_inodes, changed - 1);
  // New inode numbers continue after the old ones.
  EXPECT_GT(Mk(*ws, kRootInode, "later").ino, gone.ino);
  ws.reset();

  auto list = Workspace::List(*store_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "ws");
  EXPECT_EQ((*list)[0].base, base);
  EXPECT_EQ(Workspace::Create(*store_, "ws", base, "").code(), Status::Code::kAlreadyExists);
  ASSERT_TRUE(Workspace::Create(*store_, "feature/x", std::nullopt, "").ok());
  EXPECT_EQ(Workspace::List(*store_)->size(), 2u);
  EXPECT_EQ(Workspace::Create(*store_, "bad..name", std::nullopt, "").code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(Workspace::Remove(*store_, "ws").ok());
  EXPECT_TRUE(Workspace::Open(*store_, "ws").status().IsNotFound());
  EXPECT_EQ(Workspace::List(*store_)->size(), 1u);
}

TEST_F(WorkspaceTest, ConcurrentReadersAndWritersSeeConsistentData) {
  auto ws = CreateAndOpen(MakeBase());
  ASSERT_TRUE(ws);
  Attr a = L(*ws, kRootInode, "a");
  const InodeId big = L(*ws, a.ino, "big").ino;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  // Readers of the unchanged base file share the chunk cache.
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::string buf(70000, '\0');
      for (int i = 0; i < 200; i++) {
        uint64_t off = rng() % big_.size();
        auto n = ws->Read(big, off, buf.size(), buf.data());
        if (!n.ok() || std::string_view(buf.data(), *n) != std::string_view(big_).substr(off, *n)) bad++;
      }
    });
  }
  // Meanwhile writers create, fill and read back their own files.
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; i++) {
        std::string name = "w" + std::to_string(t) + "-" + std::to_string(i);
        auto f = ws->MakeNode(a.ino, name, S_IFREG | 0644, 0, kWho);
        if (!f.ok()) {
          bad++;
          continue;
        }
        std::string data = testing::RandomBytes(10000 + i, i * 2 + t);
        std::string back(data.size(), '\0');
        auto w = ws->Write(f->ino, 0, data);
        auto r = ws->Read(f->ino, 0, back.size(), back.data());
        if (!w.ok() || !r.ok() || back != data) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(Names(*ws, a.ino).size(), 3u + 100u);
}

// ---- randomized: the workspace against a map of paths

class Model {
 public:
  std::map<std::string, std::optional<std::string>> nodes;  // nullopt: a directory

  static std::string Parent(const std::string& p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? "" : p.substr(0, s);
  }
  bool Exists(const std::string& p) const { return p.empty() || nodes.count(p) > 0; }
  bool IsDir(const std::string& p) const { return p.empty() || (nodes.count(p) && !nodes.at(p)); }
  bool HasChildren(const std::string& p) const {
    auto it = nodes.upper_bound(p + "/");
    return it != nodes.end() && it->first.compare(0, p.size() + 1, p + "/") == 0;
  }
  // The errno of walking to p's parent, 0 if it is a directory.
  int ParentErr(const std::string& p) const {
    std::string parent = Parent(p);
    if (!Exists(parent)) return ENOENT;
    return IsDir(parent) ? 0 : ENOTDIR;
  }
  int Create(const std::string& p, bool dir) {
    if (int e = ParentErr(p)) return e;
    if (Exists(p)) return EEXIST;
    nodes[p] = dir ? std::nullopt : std::optional<std::string>("");
    return 0;
  }
  int Remove(const std::string& p, bool dir) {
    if (int e = ParentErr(p)) return e;
    if (!Exists(p)) return ENOENT;
    if (!dir && IsDir(p)) return EISDIR;
    if (dir && !IsDir(p)) return ENOTDIR;
    if (dir && HasChildren(p)) return ENOTEMPTY;
    nodes.erase(p);
    return 0;
  }
  int Write(const std::string& p, uint64_t off, const std::string& data) {
    if (int e = ParentErr(p)) return e;
    if (!Exists(p)) return ENOENT;
    if (IsDir(p)) return EISDIR;
    std::string& c = *nodes[p];
    if (c.size() < off + data.size()) c.resize(off + data.size(), '\0');
    c.replace(off, data.size(), data);
    return 0;
  }
  int Truncate(const std::string& p, uint64_t size) {
    if (int e = ParentErr(p)) return e;
    if (!Exists(p)) return ENOENT;
    if (IsDir(p)) return EISDIR;
    nodes[p]->resize(size, '\0');
    return 0;
  }
  int Rename(const std::string& from, const std::string& to) {
    // As rename(2): both parents are walked before the source is looked up.
    if (int e = ParentErr(from)) return e;
    if (int e = ParentErr(to)) return e;
    if (!Exists(from)) return ENOENT;
    if (from == to) return 0;
    bool from_dir = IsDir(from);
    if (from_dir && to.compare(0, from.size() + 1, from + "/") == 0) return EINVAL;
    if (Exists(to)) {
      if (IsDir(to) && !from_dir) return EISDIR;
      if (!IsDir(to) && from_dir) return ENOTDIR;
      if (IsDir(to) && HasChildren(to)) return ENOTEMPTY;
      nodes.erase(to);
    }
    std::map<std::string, std::optional<std::string>> moved;
    for (auto it = nodes.begin(); it != nodes.end();) {
      if (it->first == from || it->first.compare(0, from.size() + 1, from + "/") == 0) {
        moved[to + it->first.substr(from.size())] = it->second;
        it = nodes.erase(it);
      } else {
        ++it;
      }
    }
    nodes.merge(moved);
    return 0;
  }
};

// Walks a '/'-separated path from the root.
Result<InodeId> Resolve(Workspace& ws, const std::string& path) {
  InodeId ino = kRootInode;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    STRATA_ASSIGN_OR_RETURN(Attr a, ws.Lookup(ino, name));
    ino = a.ino;
    start = slash == std::string::npos ? path.size() : slash + 1;
  }
  return ino;
}

std::string Base(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// Lists the workspace with small pages, so offsets are exercised too.
void Walk(Workspace& ws, InodeId dir, const std::string& prefix,
          std::map<std::string, std::optional<std::string>>* out) {
  uint64_t offset = 0;
  while (true) {
    auto page = ws.ReadDirectory(dir, offset, 3);
    ASSERT_TRUE(page.ok());
    if (page->empty()) return;
    for (const DirEntry& e : *page) {
      std::string path = prefix.empty() ? e.name : prefix + "/" + e.name;
      if (e.type == S_IFDIR) {
        (*out)[path] = std::nullopt;
        Walk(ws, e.ino, path, out);
      } else {
        std::string data;
        auto attr = ws.GetAttr(e.ino);
        ASSERT_TRUE(attr.ok());
        data.resize(attr->size);
        auto n = ws.Read(e.ino, 0, data.size(), data.data());
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, data.size());
        (*out)[path] = data;
      }
      offset = e.offset;
    }
  }
}

// One run of ~500 random operations from seed; fails the test on the first difference.
}  // namespace

// Declared by the fixture (workspace_test_util.h), so defined in its namespace.
namespace workspace_testing {
void WorkspaceTest::RandomRun(uint64_t seed) {
  std::string b_data = testing::RandomBytes(200000, 3);
  Hash base = PutCommit({Dir("a", {File("b", b_data, 70000)}), File("c", "hello")});
  const std::string ws_name = "random-" + std::to_string(seed);
  auto ws = CreateAndOpen(base, ws_name);
  ASSERT_TRUE(ws);
  Model model;
  model.nodes = {{"a", std::nullopt}, {"a/b", b_data}, {"c", std::string("hello")}};

  std::mt19937_64 rng(seed);
  const std::vector<std::string> names = {"a", "b", "c"};
  auto random_path = [&] {
    // Half the time a path that exists, so most operations have something to do.
    if (rng() % 2 && !model.nodes.empty()) {
      auto it = model.nodes.begin();
      std::advance(it, rng() % model.nodes.size());
      return it->first;
    }
    std::string p = names[rng() % names.size()];
    if (rng() % 2) p += "/" + names[rng() % names.size()];
    return p;
  };
  // Walks to p's parent and runs op there; a parent that is a file is the
  // operation's to refuse (ENOTDIR), one that is missing fails the walk.
  auto with_parent = [&](const std::string& p, auto op) -> int {
    auto parent = Resolve(*ws, Model::Parent(p));
    return parent.ok() ? op(*parent) : Errno(parent);
  };

  int succeeded[8] = {};
  for (int step = 0; step < 500; step++) {
    std::string p = random_path();
    int kind = static_cast<int>(rng() % 8);
    int want = 0, got = 0;
    std::string what;
    switch (kind) {
      case 0:
      case 1: {  // create a file or a directory
        bool dir = kind == 1;
        what = (dir ? "mkdir " : "create ") + p;
        want = model.Create(p, dir);
        got = with_parent(p, [&](InodeId parent) {
          return dir ? Errno(ws->MakeDirectory(parent, Base(p), 0755, kWho))
                     : Errno(ws->MakeNode(parent, Base(p), S_IFREG | 0644, 0, kWho));
        });
        break;
      }
      case 2:
      case 3: {  // write
        uint64_t off = rng() % 250000;
        std::string data = testing::RandomBytes(1 + rng() % 3000, rng());
        what = "write " + p + " at " + std::to_string(off);
        want = model.Write(p, off, data);
        auto ino = Resolve(*ws, p);
        got = ino.ok() ? Errno(ws->Write(*ino, off, data)) : Errno(ino);
        break;
      }
      case 4: {  // truncate
        uint64_t size = rng() % 260000;
        what = "truncate " + p + " to " + std::to_string(size);
        want = model.Truncate(p, size);
        auto ino = Resolve(*ws, p);
        SetAttrRequest req;
        req.size = size;
        got = ino.ok() ? Errno(ws->SetAttr(*ino, req)) : Errno(ino);
        break;
      }
      case 5: {  // rename
        std::string to = random_path();
        what = "rename " + p + " " + to;
        want = model.Rename(p, to);
        auto from_parent = Resolve(*ws, Model::Parent(p));
        auto to_parent = Resolve(*ws, Model::Parent(to));
        if (!from_parent.ok()) {
          got = Errno(from_parent);
        } else if (!to_parent.ok()) {
          // rename(2) walks the source's parent first: if that is a file,
          // ENOTDIR wins over the missing destination parent.
          int from_err = Errno(ws->Lookup(*from_parent, Base(p)));
          got = from_err == ENOTDIR ? from_err : Errno(to_parent);
        } else {
          got = Errno(ws->Rename(*from_parent, Base(p), *to_parent, Base(to), 0));
        }
        break;
      }
      case 6:
      case 7: {  // unlink or rmdir
        bool dir = kind == 7;
        what = (dir ? "rmdir " : "unlink ") + p;
        want = model.Remove(p, dir);
        got = with_parent(p, [&](InodeId parent) {
          return dir ? Errno(ws->RemoveDirectory(parent, Base(p))) : Errno(ws->Unlink(parent, Base(p)));
        });
        break;
      }
    }
    ASSERT_EQ(got, want) << "step " << step << ": " << what;
    succeeded[kind] += want == 0;

    if (step % 50 == 49) {
      std::map<std::string, std::optional<std::string>> seen;
      Walk(*ws, kRootInode, "", &seen);
      ASSERT_EQ(seen.size(), model.nodes.size()) << "step " << step;
      for (const auto& [path, node] : model.nodes) {
        ASSERT_TRUE(seen.count(path)) << path;
        ASSERT_EQ(seen[path].has_value(), node.has_value()) << path;
        if (node) {
          ASSERT_TRUE(*seen[path] == *node) << path << " differs at step " << step;
        }
      }
    }
    if (step % 100 == 99) {  // and everything must survive a reopen
      ws.reset();
      auto reopened = Workspace::Open(*store_, ws_name);
      ASSERT_TRUE(reopened.ok());
      ws = std::move(reopened).value();
    }
  }
  // The sequence must do real work, not only collect errors.
  for (int kind = 0; kind < 8; kind++) EXPECT_GE(succeeded[kind], 5) << "operation kind " << kind;
  std::string counts;
  for (int n : succeeded) counts += std::to_string(n) + " ";
  std::cout << "seed " << seed << ": successful operations per kind: " << counts << "\n";
}
}  // namespace workspace_testing

namespace {

TEST_F(WorkspaceTest, RandomOperationsMatchAModel) {
  for (uint64_t seed : {12345, 777, 4242}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomRun(seed);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace strata
