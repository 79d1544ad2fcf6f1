// Tests of the snapshot layer: exporting trees from a store into directories.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "snapshot/exporter.h"
#include "store/store.h"
#include "store/tree.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

struct stat Lstat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// Runs fn on a thread whose effective capabilities lack CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH, so that permission bits apply even when the tests run as
// root. Capabilities are per thread in the kernel; the raw syscall (unlike
// glibc's set*id wrappers) changes only the calling thread.
void RunWithPermissionChecks(const std::function<void()>& fn) {
  std::thread t([&] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capget, &header, data) == 0) {
      data[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
      ::syscall(SYS_capset, &header, data);
    }
    fn();
  });
  t.join();
}

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-exporter-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    Status st = Store::Init(root_ + "/store", StoreConfig{});
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto store = Store::Open(root_ + "/store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    dest_ = root_ + "/out";
  }

  void TearDown() override {
    store_.reset();
    // Exports may contain read-only directories; make everything removable.
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
    fs::remove_all(root_, ec);
  }

  Hash Put(ObjectType type, std::string_view data) {
    auto r = store_->Put(type, data);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : Hash{};
  }

  // Stores a tree, sorting its entries first (EncodeTree requires it).
  Hash PutTree(Tree tree) {
    std::sort(tree.entries.begin(), tree.entries.end(),
              [](const TreeEntry& a, const TreeEntry& b) { return a.name < b.name; });
    return Put(ObjectType::kTree, EncodeTree(tree));
  }

  TreeEntry File(const std::string& name, const std::vector<std::string>& chunks, uint32_t mode = 0644) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kFile;
    e.mode = mode;
    e.mtime_sec = 1600000000;
    for (const std::string& c : chunks) {
      e.chunks.push_back({Put(ObjectType::kChunk, c), c.size()});
      e.size += c.size();
    }
    return e;
  }

  static TreeEntry Link(const std::string& name, EntryKind kind, const std::string& target) {
    TreeEntry e;
    e.name = name;
    e.kind = kind;
    e.mode = kind == EntryKind::kSymlink ? 0777 : 0;
    e.target = target;
    return e;
  }

  static TreeEntry Dir(const std::string& name, const Hash& subtree, uint32_t mode = 0755) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kDirectory;
    e.mode = mode;
    e.subtree = subtree;
    return e;
  }

  Result<ExportStats> Export(const Hash& root, const std::string& dest, bool privileged = false,
                             Progress* progress = nullptr) {
    Status st = store_->Flush();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return ExportTree(*store_, root, dest, ExportOptions{.privileged = privileged}, progress);
  }

  std::string root_;  // temp dir holding the store, the exports and "outside" files
  std::string dest_;
  std::unique_ptr<Store> store_;
};

TEST_F(ExporterTest, RoundTripsContentsAndMetadata) {
  const bool root = ::geteuid() == 0;
  Tree sub;
  sub.entries.push_back(File("inner", {"inside"}, 0600));
  sub.entries.push_back(Link("zlink", EntryKind::kHardlink, "a.txt"));
  TreeEntry subdir = Dir("sub", PutTree(sub), 0750);
  subdir.mtime_sec = 1500000000;
  subdir.mtime_nsec = 987654321;

  TreeEntry a = File("a.txt", {"hello ", "world"}, 0640);
  a.mtime_sec = 1700000000;
  a.mtime_nsec = 123456789;
  a.xattrs = {{"user.color", "blue"}, {"user.empty", ""}};
  TreeEntry exec = File("exec", {"#!/bin/sh\n"}, 04755);
  exec.uid = 1234;
  exec.gid = 5678;
  const std::string zeros4k(4096, '\0'), zeros8k(8192, '\0');
  TreeEntry sparse = File("sparse", {"abc", zeros4k, "def", zeros8k});
  TreeEntry sym = Link("sym", EntryKind::kSymlink, "a.txt");
  sym.mtime_sec = 1400000000;
  sym.mtime_nsec = 42;
  TreeEntry fifo = Link("fifo", EntryKind::kFifo, "");
  fifo.mode = 0640;
  TreeEntry sock = Link("sock", EntryKind::kSocket, "");
  sock.mode = 0755;
  TreeEntry dev = Link("null", EntryKind::kCharDevice, "");
  dev.mode = 0666;
  dev.rdev = makedev(1, 3);

  Tree top;
  top.entries = {a, File("empty", {}, 0600), exec, sparse, sym, fifo, sock, dev, subdir};
  Hash id = PutTree(top);

  Progress progress("export", 0, 0);
  auto stats = Export(id, dest_, /*privileged=*/false, &progress);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files, 5u);
  EXPECT_EQ(stats->directories, 1u);
  EXPECT_EQ(stats->symlinks, 1u);
  EXPECT_EQ(stats->hardlinks, 1u);
  EXPECT_EQ(stats->specials, 2u);
  EXPECT_EQ(stats->skipped, 1u);  // the device node
  EXPECT_EQ(stats->bytes, 11u + 10u + 3u + 4096u + 3u + 8192u + 6u);
  EXPECT_FALSE(Exists(dest_ + "/null"));

  EXPECT_EQ(ReadFile(dest_ + "/a.txt"), "hello world");
  struct stat st = Lstat(dest_ + "/a.txt");
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1700000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 123456789);
  EXPECT_EQ(st.st_nlink, 2u);
  char value[64];
  ssize_t n = ::getxattr((dest_ + "/a.txt").c_str(), "user.color", value, sizeof(value));
  ASSERT_EQ(n, 4);
  EXPECT_EQ(std::string(value, 4), "blue");
  EXPECT_EQ(::getxattr((dest_ + "/a.txt").c_str(), "user.empty", value, sizeof(value)), 0);

  EXPECT_EQ(ReadFile(dest_ + "/empty"), "");
  EXPECT_EQ(Lstat(dest_ + "/empty").st_mode & 07777, 0600u);
  EXPECT_EQ(Lstat(dest_ + "/exec").st_mode & 07777, 04755u);

  EXPECT_EQ(ReadFile(dest_ + "/sparse"), "abc" + zeros4k + "def" + zeros8k);
  st = Lstat(dest_ + "/sparse");
  EXPECT_EQ(st.st_size, 3 + 4096 + 3 + 8192);
  EXPECT_LT(st.st_blocks * 512, st.st_size);  // the zero chunks became holes

  st = Lstat(dest_ + "/sym");
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(fs::read_symlink(dest_ + "/sym").string(), "a.txt");
  EXPECT_EQ(st.st_mtim.tv_sec, 1400000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 42);

  st = Lstat(dest_ + "/fifo");
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  st = Lstat(dest_ + "/sock");
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0755u);

  st = Lstat(dest_ + "/sub");
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1500000000);  // set after the entries were created
  EXPECT_EQ(st.st_mtim.tv_nsec, 987654321);
  EXPECT_EQ(ReadFile(dest_ + "/sub/inner"), "inside");
  EXPECT_EQ(Lstat(dest_ + "/sub/zlink").st_ino, Lstat(dest_ + "/a.txt").st_ino);

  if (!root) GTEST_SKIP() << "owners and device nodes need root";
  const std::string dest2 = root_ + "/out2";
  stats = Export(id, dest2, /*privileged=*/true);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->skipped, 0u);
  EXPECT_EQ(stats->specials, 3u);
  st = Lstat(dest2 + "/exec");
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_mode & 07777, 04755u);  // chown did not clear setuid: mode came after it
  st = Lstat(dest2 + "/null");
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(st.st_mode & 07777, 0666u);
}

TEST_F(ExporterTest, ReadOnlyDirectoryIsFilledBeforeItsModeIsSet) {
  Tree inner;
  inner.entries.push_back(File("deep", {"deeper"}, 0444));
  Tree ro;
  ro.entries.push_back(File("f", {"content"}, 0444));
  ro.entries.push_back(Dir("inner", PutTree(inner), 0555));
  Tree top;
  top.entries.push_back(Dir("ro", PutTree(ro), 0555));
  Hash id = PutTree(top);
  ASSERT_TRUE(store_->Flush().ok());

  // As root, permission bits would not stop us anyway; drop the override so
  // this checks the post-order chmod for real.
  Result<ExportStats> stats = Status::Ok();
  RunWithPermissionChecks([&] { stats = ExportTree(*store_, id, dest_, ExportOptions{}, nullptr); });
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(Lstat(dest_ + "/ro").st_mode & 07777, 0555u);
  EXPECT_EQ(Lstat(dest_ + "/ro/inner").st_mode & 07777, 0555u);
  EXPECT_EQ(Lstat(dest_ + "/ro/f").st_mode & 07777, 0444u);
  EXPECT_EQ(ReadFile(dest_ + "/ro/f"), "content");
  EXPECT_EQ(ReadFile(dest_ + "/ro/inner/deep"), "deeper");
}

TEST_F(ExporterTest, RefusesHardlinksThatLeaveTheExport) {
  WriteFile(root_ + "/x", "outside");
  struct stat passwd_before {};
  const bool have_passwd = ::lstat("/etc/passwd", &passwd_before) == 0;
  int i = 0;
  for (const std::string target :
       {"../x", "/etc/passwd", "./a", "a/../a", "sub/../a", "a/", "a//a", "missing"}) {
    SCOPED_TRACE(target);
    Tree tree;
    tree.entries.push_back(File("a", {"data"}));
    tree.entries.push_back(Link("b", EntryKind::kHardlink, target));
    const std::string dest = dest_ + std::to_string(i++);
    auto stats = Export(PutTree(tree), dest);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().IsCorruption()) << stats.status().ToString();
    EXPECT_NE(stats.status().message().find(dest + "/b"), std::string::npos) << stats.status().ToString();
    EXPECT_FALSE(Exists(dest + "/b"));
  }
  EXPECT_EQ(Lstat(root_ + "/x").st_nlink, 1u);
  struct stat passwd_after {};
  if (have_passwd && ::lstat("/etc/passwd", &passwd_after) == 0) {
    EXPECT_EQ(passwd_after.st_nlink, passwd_before.st_nlink);
  }
}

TEST_F(ExporterTest, HardlinkToASymlinkLinksTheSymlinkItself) {
  WriteFile(root_ + "/x", "outside");
  Tree tree;
  tree.entries = {Link("a", EntryKind::kSymlink, root_ + "/x"), Link("b", EntryKind::kHardlink, "a")};
  auto stats = Export(PutTree(tree), dest_);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  struct stat a = Lstat(dest_ + "/a"), b = Lstat(dest_ + "/b");
  EXPECT_TRUE(S_ISLNK(b.st_mode));
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(b.st_nlink, 2u);
  EXPECT_EQ(Lstat(root_ + "/x").st_nlink, 1u);  // the outside file was not linked
}

TEST_F(ExporterTest, RefusesHardlinksThroughSymlinksToDirectoriesAndLaterEntries) {
  WriteFile(root_ + "/x", "outside");
  fs::create_directory(root_ + "/outdir");
  WriteFile(root_ + "/outdir/f", "outside too");
  Hash empty = PutTree(Tree{});
  std::vector<Tree> trees(4);
  // A link to a path below a symlink that points outside.
  trees[0].entries = {Link("a", EntryKind::kSymlink, root_), Link("b", EntryKind::kHardlink, "a/x")};
  // A link through a symlink to an outside directory.
  trees[1].entries = {Link("a", EntryKind::kSymlink, root_ + "/outdir"),
                      Link("b", EntryKind::kHardlink, "a/f")};
  // A link to a directory.
  trees[2].entries = {Dir("a", empty), Link("b", EntryKind::kHardlink, "a")};
  // A link to a file that has not been written yet.
  trees[3].entries = {Link("a", EntryKind::kHardlink, "b"), File("b", {"later"})};
  for (size_t i = 0; i < trees.size(); i++) {
    SCOPED_TRACE(i);
    const std::string dest = dest_ + std::to_string(i);
    auto stats = Export(PutTree(trees[i]), dest);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().IsCorruption()) << stats.status().ToString();
  }
  EXPECT_FALSE(Exists(dest_ + "0/b"));
  EXPECT_FALSE(Exists(dest_ + "1/b"));
  EXPECT_FALSE(Exists(dest_ + "2/b"));
  EXPECT_FALSE(Exists(dest_ + "3/a"));
  EXPECT_EQ(Lstat(root_ + "/x").st_nlink, 1u);
  EXPECT_EQ(Lstat(root_ + "/outdir/f").st_nlink, 1u);
  EXPECT_EQ(Names(root_ + "/outdir"), std::set<std::string>{"f"});
}

TEST_F(ExporterTest, RefusesInvalidNamesInStoredTrees) {
  // EncodeTree assumes valid names, so write a valid two-byte name and patch it:
  // version (1 byte), entry count (1), name length (1), then the name.
  int i = 0;
  for (const std::string bad : {"..", "./", "a/"}) {
    SCOPED_TRACE(bad);
    i++;
    Tree tree;
    tree.entries.push_back(File("zz", {"escaped"}));
    std::string bytes = EncodeTree(tree);
    ASSERT_EQ(bytes.substr(3, 2), "zz");
    bytes.replace(3, 2, bad);
    Hash bad_id = Put(ObjectType::kTree, bytes);

    // As the root: refused before dest is even created.
    const std::string dest = dest_ + "-root-" + std::to_string(i);
    auto stats = Export(bad_id, dest);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().IsCorruption()) << stats.status().ToString();
    EXPECT_FALSE(Exists(dest));

    // As a subdirectory: refused with the path of that directory.
    Tree top;
    top.entries.push_back(Dir("sub", bad_id));
    const std::string dest2 = dest_ + "-sub-" + std::to_string(i);
    stats = Export(PutTree(top), dest2);
    ASSERT_FALSE(stats.ok());
    EXPECT_TRUE(stats.status().IsCorruption()) << stats.status().ToString();
    EXPECT_NE(stats.status().message().find(dest2 + "/sub"), std::string::npos) << stats.status().ToString();
    // An export is all or nothing: the directories it wrote are gone again,
    // and so is dest2, which it created.
    EXPECT_FALSE(Exists(dest2));
  }
  EXPECT_FALSE(Exists(root_ + "/zz"));
  EXPECT_FALSE(Exists(root_ + "/a"));
}

TEST_F(ExporterTest, NeverWritesThroughAnExportedSymlink) {
  const std::string outside = root_ + "/outside";
  fs::create_directory(outside);
  ::chmod(outside.c_str(), 0755);
  const timespec old_times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, outside.c_str(), old_times, 0), 0);

  const bool root = ::geteuid() == 0;
  TreeEntry link = Link("link", EntryKind::kSymlink, outside);
  link.mtime_sec = 1234567890;
  link.mtime_nsec = 5;
  link.uid = 4321;
  link.gid = 4321;
  // Linux refuses user.* xattrs on symlinks; trusted.* works for root.
  if (root) link.xattrs = {{"trusted.strata", "v"}};
  Tree sub;
  sub.entries.push_back(File("f", {"x"}));
  Tree tree;
  tree.entries = {link, Dir("linked", PutTree(sub), 0700), File("zzz", {"y"}, 0600)};

  auto stats = Export(PutTree(tree), dest_, /*privileged=*/root);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  struct stat st = Lstat(dest_ + "/link");
  ASSERT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(fs::read_symlink(dest_ + "/link").string(), outside);
  EXPECT_EQ(st.st_mtim.tv_sec, 1234567890);
  EXPECT_EQ(st.st_mtim.tv_nsec, 5);
  if (root) {
    EXPECT_EQ(st.st_uid, 4321u);
    char value[8];
    EXPECT_EQ(::lgetxattr((dest_ + "/link").c_str(), "trusted.strata", value, sizeof(value)), 1);
  }

  // The directory the symlink points to is untouched.
  EXPECT_EQ(Names(outside), std::set<std::string>{});
  st = Lstat(outside);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_uid, ::geteuid());
  char value[8];
  EXPECT_LT(::getxattr(outside.c_str(), "trusted.strata", value, sizeof(value)), 0);
}

TEST_F(ExporterTest, ChecksChunkLengths) {
  TreeEntry f = File("f", {"abc"});
  f.chunks[0].length = 5;  // the stored chunk has 3 bytes
  f.size = 5;
  Tree tree;
  tree.entries.push_back(f);
  auto stats = Export(PutTree(tree), dest_);
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(stats.status().IsCorruption()) << stats.status().ToString();
  EXPECT_NE(stats.status().message().find(dest_ + "/f"), std::string::npos) << stats.status().ToString();
}

TEST_F(ExporterTest, DestinationMustBeAMissingOrEmptyDirectory) {
  Tree tree;
  tree.entries.push_back(File("f", {"x"}));
  Hash id = PutTree(tree);

  // Missing: created, 0700.
  auto stats = Export(id, dest_);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(Lstat(dest_).st_mode & 07777, 0700u);

  // Not empty (the export above): refused, contents untouched.
  WriteFile(dest_ + "/f2", "keep");
  stats = Export(id, dest_);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), Status::Code::kInvalidArgument) << stats.status().ToString();
  EXPECT_EQ(ReadFile(dest_ + "/f"), "x");
  EXPECT_EQ(ReadFile(dest_ + "/f2"), "keep");

  // A regular file: refused.
  WriteFile(root_ + "/file", "data");
  stats = Export(id, root_ + "/file");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), Status::Code::kInvalidArgument) << stats.status().ToString();
  EXPECT_EQ(ReadFile(root_ + "/file"), "data");

  // A symlink to an empty directory: refused, nothing written through it.
  fs::create_directory(root_ + "/empty");
  fs::create_directory_symlink(root_ + "/empty", root_ + "/symlink");
  stats = Export(id, root_ + "/symlink");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), Status::Code::kInvalidArgument) << stats.status().ToString();
  EXPECT_EQ(Names(root_ + "/empty"), std::set<std::string>{});

  // An existing empty directory: fine.
  stats = Export(id, root_ + "/empty");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(ReadFile(root_ + "/empty/f"), "x");
}

}  // namespace
}  // namespace strata
