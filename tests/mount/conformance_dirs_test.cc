// Conformance: directories — readdir contents and stability under concurrent
// change, and rename/renameat2 in all its shapes.

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "conformance.h"

namespace strata::conformance {
namespace {

using Dirs = ConformanceTest;

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

long Renameat2(const std::string& from, const std::string& to, unsigned flags) {
  return syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags);
}

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

struct Entry {
  std::string name;
  ino_t ino;
  unsigned char type;
};

// One getdents64 call; appends what it returned. Returns the syscall result.
long GetdentsOnce(int fd, size_t bufsize, std::vector<Entry>* out) {
  alignas(8) char buf[65536];
  if (bufsize > sizeof buf) bufsize = sizeof buf;
  long n = syscall(SYS_getdents64, fd, buf, bufsize);
  for (long pos = 0; n > 0 && pos < n;) {
    auto* d = reinterpret_cast<Dirent64*>(buf + pos);
    out->push_back(Entry{d->d_name, static_cast<ino_t>(d->d_ino), d->d_type});
    pos += d->d_reclen;
  }
  return n;
}

std::string Num(const char* prefix, int i) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%04d", prefix, i);
  return buf;
}

// ---- readdir ---------------------------------------------------------------

TEST_F(Dirs, ReaddirListsEveryEntryOnceWithTypeAndInode) {
  ASSERT_TRUE(Touch(P("file")));
  ASSERT_OK(mkdir(P("sub").c_str(), 0755));
  ASSERT_OK(symlink("file", P("link").c_str()));
  ASSERT_OK(mkfifo(P("fifo").c_str(), 0644));
  const std::vector<std::string> odd = {"with space", "na\xc3\xafve", "new\nline", "ctl\x01", "...", ".hidden", "-x"};
  for (const auto& n : odd) {
    ASSERT_TRUE(Touch(P(n))) << n;
  }
  const std::map<std::string, unsigned char> want_type = {
      {"file", DT_REG}, {"sub", DT_DIR}, {"link", DT_LNK}, {"fifo", DT_FIFO}};

  Fd fd;
  ASSERT_TRUE(Open(&fd, dir(), O_RDONLY | O_DIRECTORY));
  std::vector<Entry> entries;
  for (;;) {
    long n = GetdentsOnce(fd.get(), 4096, &entries);
    ASSERT_GE(n, 0) << "getdents64: " << ErrnoText(errno);
    if (n == 0) break;
  }
  std::map<std::string, int> count;
  for (const auto& e : entries) count[e.name]++;
  EXPECT_EQ(count["."], 1);
  EXPECT_EQ(count[".."], 1);
  for (const auto& [name, n] : count) {
    EXPECT_EQ(n, 1) << "entry \"" << name << "\" listed " << n << " times";
  }
  EXPECT_EQ(entries.size(), 2 + want_type.size() + odd.size());
  // "." and ".." carry real inode numbers: glibc's readdir() silently drops
  // entries whose d_ino is 0.
  struct stat self, parent;
  ASSERT_TRUE(Stat(dir(), &self));
  ASSERT_TRUE(Stat(P(".."), &parent));
  for (const auto& e : entries) {
    if (e.name == ".") {
      EXPECT_EQ(e.ino, self.st_ino) << "d_ino of \".\"";
    } else if (e.name == "..") {
      EXPECT_EQ(e.ino, parent.st_ino) << "d_ino of \"..\"";
    }
  }
  for (const auto& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    struct stat st;
    ASSERT_TRUE(Lstat(P(e.name), &st)) << "listed entry does not exist";
    EXPECT_EQ(e.ino, st.st_ino) << "d_ino of " << e.name << " differs from st_ino";
    auto it = want_type.find(e.name);
    unsigned char want = it != want_type.end() ? it->second : static_cast<unsigned char>(DT_REG);
    if (e.type != DT_UNKNOWN) {
      EXPECT_EQ(e.type, want) << "d_type of " << e.name;
    }
  }
  for (const auto& n : odd) {
    EXPECT_EQ(count[n], 1) << "missing \"" << n << "\"";
  }
  // getdents on a regular file is refused.
  Fd file;
  ASSERT_TRUE(Open(&file, P("file"), O_RDONLY));
  std::vector<Entry> none;
  EXPECT_ERRNO(GetdentsOnce(file.get(), 4096, &none), ENOTDIR);
}

TEST_F(Dirs, EmptyDirectoryHasOnlyDotEntries) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(P("d"), &names));
  EXPECT_TRUE(names.empty());
  // And becomes empty again after its entries go.
  ASSERT_TRUE(Touch(P("d/a")));
  ASSERT_OK(mkdir(P("d/b").c_str(), 0755));
  ASSERT_OK(unlink(P("d/a").c_str()));
  ASSERT_OK(rmdir(P("d/b").c_str()));
  ASSERT_TRUE(ListDir(P("d"), &names));
  EXPECT_TRUE(names.empty());
  EXPECT_OK(rmdir(P("d").c_str()));
}

TEST_F(Dirs, RewinddirSeesCurrentContents) {
  ASSERT_TRUE(Touch(P("a")));
  ASSERT_TRUE(Touch(P("b")));
  DIR* d = opendir(dir().c_str());
  ASSERT_NE(d, nullptr) << "opendir: " << ErrnoText(errno);
  auto read_all = [&] {
    std::set<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.insert(n);
    }
    return names;
  };
  EXPECT_EQ(read_all(), (std::set<std::string>{"a", "b"}));
  ASSERT_OK(unlink(P("a").c_str()));
  ASSERT_TRUE(Touch(P("c")));
  rewinddir(d);
  EXPECT_EQ(read_all(), (std::set<std::string>{"b", "c"}));
  closedir(d);
}

TEST_F(Dirs, TelldirSeekdirResumes) {
  for (int i = 0; i < 120; ++i) {
    ASSERT_TRUE(Touch(P(Num("f", i))));
  }
  DIR* d = opendir(dir().c_str());
  ASSERT_NE(d, nullptr) << "opendir: " << ErrnoText(errno);
  for (int i = 0; i < 50; ++i) {
    ASSERT_NE(readdir(d), nullptr);
  }
  long pos = telldir(d);
  ASSERT_NE(pos, -1L) << "telldir: " << ErrnoText(errno);
  std::vector<std::string> first, second;
  while (dirent* e = readdir(d)) first.push_back(e->d_name);
  seekdir(d, pos);
  while (dirent* e = readdir(d)) second.push_back(e->d_name);
  closedir(d);
  EXPECT_EQ(first.size(), 122u - 50u) << "readdir() must return 122 entries (120 files, \".\", \"..\") in all";
  EXPECT_EQ(first, second) << "seekdir(telldir()) must resume where telldir was taken";
}

TEST_F(Dirs, LargeDirectoryListsAll) {
  constexpr int kFiles = 500;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(Touch(P(Num("entry_", i))));
  }
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(names.size(), static_cast<size_t>(kFiles));
  EXPECT_EQ(unique.size(), static_cast<size_t>(kFiles));
  for (int i = 0; i < kFiles; ++i) {
    EXPECT_TRUE(unique.count(Num("entry_", i))) << Num("entry_", i);
  }
}

// Lists a 500-entry directory a few entries per getdents64 call while other
// entries are created and removed between the calls. Entries that existed
// throughout must each appear exactly once; no name may appear twice; and the
// listing must end even though names keep being added (POSIX leaves it open
// whether names added after opendir show up, but a reader that is handed every
// new name never finishes: Linux fixed exactly that for tmpfs in 6.x).
TEST_F(Dirs, ReaddirStableUnderConcurrentChanges) {
  constexpr int kStable = 500;
  constexpr int kVictims = 300;
  for (int i = 0; i < kStable; ++i) {
    ASSERT_TRUE(Touch(P(Num("stable_", i))));
  }
  for (int i = 0; i < kVictims; ++i) {
    ASSERT_TRUE(Touch(P(Num("victim_", i))));
  }

  Fd fd;
  ASSERT_TRUE(Open(&fd, dir(), O_RDONLY | O_DIRECTORY));
  std::vector<Entry> entries;
  int next_victim = 0, next_new = 0, calls = 0;
  for (;;) {
    long n = GetdentsOnce(fd.get(), 256, &entries);
    ASSERT_GE(n, 0) << "getdents64: " << ErrnoText(errno);
    if (n == 0) break;
    ++calls;
    ASSERT_LT(calls, 2000) << "listing does not terminate (about 100 calls expected)";
    // Churn: remove victims from both ends of the name space, add new names.
    for (int k = 0; k < 3 && next_victim < kVictims; ++k, ++next_victim) {
      int v = (next_victim % 2 == 0) ? next_victim / 2 : kVictims - 1 - next_victim / 2;
      ASSERT_OK(unlink(P(Num("victim_", v)).c_str()));
    }
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(Touch(P(Num("new_", next_new++))));
    }
  }
  EXPECT_GT(calls, 20) << "the buffer should have forced many calls";
  std::map<std::string, int> count;
  for (const auto& e : entries) count[e.name]++;
  for (int i = 0; i < kStable; ++i) {
    EXPECT_EQ(count[Num("stable_", i)], 1) << Num("stable_", i) << " listed " << count[Num("stable_", i)] << " times";
  }
  for (const auto& [name, n] : count) {
    EXPECT_LE(n, 1) << name << " listed " << n << " times";
  }
  EXPECT_EQ(count["."], 1);
  EXPECT_EQ(count[".."], 1);
}

// ---- rename ----------------------------------------------------------------

TEST_F(Dirs, RenameFileWithinDirectory) {
  ASSERT_TRUE(WriteFile(P("a"), "content"));
  struct stat before, after;
  ASSERT_TRUE(Stat(P("a"), &before));
  ASSERT_OK(rename(P("a").c_str(), P("b").c_str()));
  EXPECT_ERRNO(stat(P("a").c_str(), &after), ENOENT);
  ASSERT_TRUE(Stat(P("b"), &after));
  EXPECT_EQ(after.st_ino, before.st_ino);
  std::string got;
  ASSERT_TRUE(ReadFile(P("b"), &got));
  EXPECT_EQ(got, "content");
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_EQ(names, std::vector<std::string>{"b"});
  // Renaming to the same name is a no-op.
  EXPECT_OK(rename(P("b").c_str(), P("b").c_str()));
  EXPECT_TRUE(Stat(P("b"), &after));
}

TEST_F(Dirs, RenameAcrossDirectories) {
  ASSERT_OK(mkdir(P("d1").c_str(), 0755));
  ASSERT_OK(mkdir(P("d2").c_str(), 0755));
  ASSERT_TRUE(WriteFile(P("d1/f"), "moved"));
  ASSERT_OK(rename(P("d1/f").c_str(), P("d2/g").c_str()));
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(P("d1"), &names));
  EXPECT_TRUE(names.empty());
  ASSERT_TRUE(ListDir(P("d2"), &names));
  EXPECT_EQ(names, std::vector<std::string>{"g"});
  std::string got;
  ASSERT_TRUE(ReadFile(P("d2/g"), &got));
  EXPECT_EQ(got, "moved");
}

TEST_F(Dirs, RenameDirectoryAcrossDirectoriesUpdatesParents) {
  ASSERT_OK(mkdir(P("p1").c_str(), 0755));
  ASSERT_OK(mkdir(P("p2").c_str(), 0755));
  ASSERT_OK(mkdir(P("p1/d").c_str(), 0755));
  ASSERT_TRUE(WriteFile(P("p1/d/inner"), "x"));
  struct stat p1a, p2a, p1b, p2b, dotdot;
  ASSERT_TRUE(Stat(P("p1"), &p1a));
  ASSERT_TRUE(Stat(P("p2"), &p2a));
  ASSERT_OK(rename(P("p1/d").c_str(), P("p2/d").c_str()));
  ASSERT_TRUE(Stat(P("p1"), &p1b));
  ASSERT_TRUE(Stat(P("p2"), &p2b));
  ASSERT_TRUE(Stat(P("p2/d/.."), &dotdot));
  EXPECT_EQ(dotdot.st_ino, p2b.st_ino) << "\"..\" of the moved directory must be its new parent";
  if (p1a.st_nlink >= 2) {  // filesystems that count subdirectories in nlink
    EXPECT_EQ(p1b.st_nlink, p1a.st_nlink - 1);
    EXPECT_EQ(p2b.st_nlink, p2a.st_nlink + 1);
  }
  std::string got;
  ASSERT_TRUE(ReadFile(P("p2/d/inner"), &got));
  EXPECT_EQ(got, "x");
}

TEST_F(Dirs, RenameOverExistingFileReplacesIt) {
  ASSERT_TRUE(WriteFile(P("src"), "new"));
  ASSERT_TRUE(WriteFile(P("dst"), "old"));
  ASSERT_TRUE(WriteFile(P("dst2"), "old2"));
  ASSERT_OK(link(P("dst2").c_str(), P("dst2.keep").c_str()));
  struct stat src, dst, after;
  ASSERT_TRUE(Stat(P("src"), &src));
  ASSERT_TRUE(Stat(P("dst"), &dst));
  Fd old_fd;
  ASSERT_TRUE(Open(&old_fd, P("dst"), O_RDWR));
  ASSERT_OK(rename(P("src").c_str(), P("dst").c_str()));
  ASSERT_TRUE(Stat(P("dst"), &after));
  EXPECT_EQ(after.st_ino, src.st_ino);
  std::string got;
  ASSERT_TRUE(ReadFile(P("dst"), &got));
  EXPECT_EQ(got, "new");
  // The replaced inode lost its only name: nlink 0, content still readable.
  struct stat old_st;
  ASSERT_OK(fstat(old_fd.get(), &old_st));
  EXPECT_EQ(old_st.st_ino, dst.st_ino);
  EXPECT_EQ(old_st.st_nlink, 0u);
  ASSERT_TRUE(PreadUpTo(old_fd.get(), 100, 0, &got));
  EXPECT_EQ(got, "old");
  // A replaced inode with another name keeps it, one link fewer.
  ASSERT_OK(rename(P("dst").c_str(), P("dst2").c_str()));
  ASSERT_TRUE(Stat(P("dst2.keep"), &after));
  EXPECT_EQ(after.st_nlink, 1u);
  ASSERT_TRUE(ReadFile(P("dst2.keep"), &got));
  EXPECT_EQ(got, "old2");
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), (std::set<std::string>{"dst2", "dst2.keep"}));
}

TEST_F(Dirs, RenameBetweenHardLinksOfOneInodeIsNoOp) {
  ASSERT_TRUE(Touch(P("a")));
  ASSERT_OK(link(P("a").c_str(), P("b").c_str()));
  EXPECT_OK(rename(P("a").c_str(), P("b").c_str()));
  struct stat st;
  EXPECT_TRUE(Stat(P("a"), &st)) << "POSIX: both names remain";
  EXPECT_TRUE(Stat(P("b"), &st));
  EXPECT_EQ(st.st_nlink, 2u);
}

TEST_F(Dirs, RenameDirectoryOverEmptyDirectory) {
  ASSERT_OK(mkdir(P("a").c_str(), 0755));
  ASSERT_OK(mkdir(P("b").c_str(), 0755));
  ASSERT_TRUE(WriteFile(P("a/child"), "c"));
  struct stat a, parent_before, parent_after, b;
  ASSERT_TRUE(Stat(P("a"), &a));
  ASSERT_TRUE(Stat(dir(), &parent_before));
  ASSERT_OK(rename(P("a").c_str(), P("b").c_str()));
  ASSERT_TRUE(Stat(P("b"), &b));
  EXPECT_EQ(b.st_ino, a.st_ino);
  EXPECT_ERRNO(stat(P("a").c_str(), &b), ENOENT);
  std::string got;
  ASSERT_TRUE(ReadFile(P("b/child"), &got));
  EXPECT_EQ(got, "c");
  ASSERT_TRUE(Stat(dir(), &parent_after));
  if (parent_before.st_nlink >= 2) {
    EXPECT_EQ(parent_after.st_nlink, parent_before.st_nlink - 1);
  }
}

TEST_F(Dirs, RenameErrors) {
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_OK(mkdir(P("full").c_str(), 0755));
  ASSERT_TRUE(Touch(P("full/x")));
  ASSERT_TRUE(Touch(P("f")));
  ASSERT_OK(mkdir(P("d/sub").c_str(), 0755));
  // Directory over a non-empty directory: Linux allows ENOTEMPTY or EEXIST.
  EXPECT_ERRNO(rename(P("d").c_str(), P("full").c_str()), ENOTEMPTY, EEXIST);
  EXPECT_ERRNO(rename(P("f").c_str(), P("d").c_str()), EISDIR);
  EXPECT_ERRNO(rename(P("d").c_str(), P("f").c_str()), ENOTDIR);
  EXPECT_ERRNO(rename(P("d").c_str(), P("d/sub/inside").c_str()), EINVAL);
  EXPECT_ERRNO(rename(P("d").c_str(), P("d/inside").c_str()), EINVAL);
  EXPECT_ERRNO(rename(P("missing").c_str(), P("x").c_str()), ENOENT);
  EXPECT_ERRNO(rename(P("f").c_str(), P("missing/x").c_str()), ENOENT);
  EXPECT_ERRNO(rename(P("f").c_str(), P("f/x").c_str()), ENOTDIR);
  // Nothing moved.
  std::vector<std::string> names;
  ASSERT_TRUE(ListDir(dir(), &names));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), (std::set<std::string>{"d", "full", "f"}));
  ASSERT_TRUE(ListDir(P("full"), &names));
  EXPECT_EQ(names, std::vector<std::string>{"x"});
  ASSERT_TRUE(ListDir(P("d"), &names));
  EXPECT_EQ(names, std::vector<std::string>{"sub"});
}

TEST_F(Dirs, RenameSymlinkMovesTheLink) {
  ASSERT_TRUE(WriteFile(P("target"), "t"));
  ASSERT_OK(symlink("target", P("l").c_str()));
  ASSERT_OK(rename(P("l").c_str(), P("l2").c_str()));
  struct stat st;
  ASSERT_TRUE(Lstat(P("l2"), &st));
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(Stat(P("target"), &st));
}

TEST_F(Dirs, RenameNoReplace) {
  ASSERT_TRUE(WriteFile(P("a"), "A"));
  ASSERT_TRUE(WriteFile(P("b"), "B"));
  long rc = Renameat2(P("a"), P("b"), RENAME_NOREPLACE);
  if (rc != 0 && errno == ENOSYS) GTEST_SKIP() << "kernel without renameat2";
  EXPECT_EQ(rc, -1) << "RENAME_NOREPLACE over an existing name succeeded";
  EXPECT_EQ(errno, EEXIST) << ErrnoText(errno);
  std::string got;
  ASSERT_TRUE(ReadFile(P("a"), &got));
  EXPECT_EQ(got, "A");
  ASSERT_TRUE(ReadFile(P("b"), &got));
  EXPECT_EQ(got, "B");
  ASSERT_OK(Renameat2(P("a"), P("c"), RENAME_NOREPLACE));
  ASSERT_TRUE(ReadFile(P("c"), &got));
  EXPECT_EQ(got, "A");
  struct stat st;
  EXPECT_ERRNO(stat(P("a").c_str(), &st), ENOENT);
}

TEST_F(Dirs, RenameExchange) {
  ASSERT_TRUE(WriteFile(P("f"), "file"));
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_TRUE(Touch(P("d/child")));
  ASSERT_OK(mkdir(P("other").c_str(), 0755));
  ASSERT_TRUE(WriteFile(P("other/g"), "gee"));
  struct stat f0, d0;
  ASSERT_TRUE(Stat(P("f"), &f0));
  ASSERT_TRUE(Stat(P("d"), &d0));
  long rc = Renameat2(P("f"), P("d"), RENAME_EXCHANGE);
  if (rc != 0 && errno == ENOSYS) GTEST_SKIP() << "kernel without renameat2";
  ASSERT_EQ(rc, 0) << "renameat2(RENAME_EXCHANGE): " << ErrnoText(errno);
  struct stat f1, d1;
  ASSERT_TRUE(Stat(P("f"), &f1));
  ASSERT_TRUE(Stat(P("d"), &d1));
  EXPECT_TRUE(S_ISDIR(f1.st_mode));
  EXPECT_TRUE(S_ISREG(d1.st_mode));
  EXPECT_EQ(f1.st_ino, d0.st_ino);
  EXPECT_EQ(d1.st_ino, f0.st_ino);
  struct stat st;
  EXPECT_TRUE(Stat(P("f/child"), &st));
  std::string got;
  ASSERT_TRUE(ReadFile(P("d"), &got));
  EXPECT_EQ(got, "file");
  // Across directories.
  ASSERT_OK(Renameat2(P("d"), P("other/g"), RENAME_EXCHANGE));
  ASSERT_TRUE(ReadFile(P("d"), &got));
  EXPECT_EQ(got, "gee");
  ASSERT_TRUE(ReadFile(P("other/g"), &got));
  EXPECT_EQ(got, "file");
  // Both names must exist.
  EXPECT_ERRNO(Renameat2(P("d"), P("missing"), RENAME_EXCHANGE), ENOENT);
  EXPECT_ERRNO(Renameat2(P("missing"), P("d"), RENAME_EXCHANGE), ENOENT);
  ASSERT_TRUE(ReadFile(P("d"), &got));
  EXPECT_EQ(got, "gee");
  EXPECT_ERRNO(Renameat2(P("d"), P("e"), RENAME_EXCHANGE | RENAME_NOREPLACE), EINVAL);
}

// What kernel overlayfs asks of its upper layer: the source's name becomes a
// whiteout (a character device 0:0) in the same rename; also over an existing
// target, and for a directory. Root only (the kernel wants CAP_MKNOD).
TEST_F(Dirs, RenameWhiteoutLeavesAWhiteoutAtTheSource) {
  if (!IsRoot()) GTEST_SKIP() << "RENAME_WHITEOUT needs CAP_MKNOD";
  ASSERT_TRUE(WriteFile(P("a"), "a"));
  ASSERT_TRUE(WriteFile(P("old"), "old"));
  ASSERT_OK(mkdir(P("d").c_str(), 0755));
  ASSERT_OK(Renameat2(P("a"), P("b"), RENAME_WHITEOUT));
  ASSERT_OK(Renameat2(P("b"), P("old"), RENAME_WHITEOUT));
  ASSERT_OK(Renameat2(P("d"), P("e"), RENAME_WHITEOUT | RENAME_NOREPLACE));
  for (const char* name : {"a", "b", "d"}) {
    struct stat st;
    ASSERT_TRUE(Lstat(P(name), &st));
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << name << ": mode 0" << std::oct << st.st_mode;
    EXPECT_EQ(st.st_rdev, makedev(0, 0)) << name;
    EXPECT_EQ(st.st_mode & 07777, 0u) << name;
  }
  std::string data;
  ASSERT_TRUE(ReadFile(P("old"), &data));
  EXPECT_EQ(data, "a");
  struct stat st;
  ASSERT_TRUE(Lstat(P("e"), &st));
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_ERRNO(Renameat2(P("old"), P("e"), RENAME_WHITEOUT | RENAME_NOREPLACE), EEXIST);
  EXPECT_ERRNO(Renameat2(P("old"), P("e"), RENAME_WHITEOUT | RENAME_EXCHANGE), EINVAL);
  ASSERT_TRUE(ReadFile(P("old"), &data)) << "a refused rename left the source";
}

}  // namespace
}  // namespace strata::conformance
