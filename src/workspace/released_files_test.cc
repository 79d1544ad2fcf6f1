#include "workspace/released_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "testing/store_test_util.h"

namespace strata::workspace_internal {
namespace {

using strata::testing::TempDir;

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::unique_ptr<Directory> OpenDir(const std::string& path) {
  auto dir = Env::Default()->OpenDirectory(path);
  EXPECT_TRUE(dir.ok()) << dir.status().ToString();
  return dir.ok() ? std::move(dir).value() : nullptr;
}

// The name of a file directly in the test's directory.
std::string NameOf(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

void WriteFile(const std::string& path, size_t bytes) {
  std::ofstream(path) << std::string(bytes, 'x');
}

size_t CountEntries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) n++;
  return n;
}

TEST(ReleasedFilesTest, AReleasedFileLeavesItsNameAtOnceAndIsDeletedByDrain) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  std::vector<std::string> paths;
  for (int i = 0; i < 200; i++) {
    paths.push_back(dir.path() + "/" + std::to_string(i));
    WriteFile(paths.back(), 5000);
  }
  for (const std::string& p : paths) {
    released.Release(NameOf(p));
    EXPECT_FALSE(Exists(p)) << p;  // a new file may take the name right away
  }
  // The name is free for a new file of the same inode, which is not touched.
  WriteFile(paths[0], 10);
  released.Drain();
  EXPECT_EQ(released.pending(), 0u);
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
  struct stat st;
  ASSERT_EQ(::stat(paths[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 10);
}

TEST(ReleasedFilesTest, AMissingFileIsNothingToDo) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  released.Release("never-written");
  EXPECT_EQ(released.pending(), 0u);
  EXPECT_FALSE(released.Drain());
}

TEST(ReleasedFilesTest, TheSameNameReleasedTwiceLosesNeither) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  const std::string p = dir.path() + "/7";
  WriteFile(p, 100);
  released.Release(NameOf(p));
  WriteFile(p, 200);
  released.Release(NameOf(p));
  EXPECT_FALSE(Exists(p));
  released.Drain();
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
}

TEST(ReleasedFilesTest, WhatAnEarlierInstanceLeftIsDeleted) {
  TempDir dir;
  const std::string folder = dir.path() + "/released";
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  for (int i = 0; i < 5; i++) WriteFile(folder + "/123." + std::to_string(i), 4096);
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  released.Drain();
  EXPECT_EQ(CountEntries(folder), 0u);
}

TEST(ReleasedFilesTest, TheDestructorDeletesWhatIsStillQueued) {
  TempDir dir;
  {
    auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
    for (int i = 0; i < 500; i++) {
      const std::string p = dir.path() + "/" + std::to_string(i);
      WriteFile(p, 4096);
      released.Release(NameOf(p));
    }
  }
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
}

TEST(ReleasedFilesTest, WithoutItsFolderFilesAreDeletedInPlace) {
  TempDir dir;
  // A regular file where the folder should be: it cannot be created.
  WriteFile(dir.path() + "/released", 1);
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  const std::string p = dir.path() + "/3";
  WriteFile(p, 100);
  released.Release(NameOf(p));
  EXPECT_FALSE(Exists(p));
  EXPECT_EQ(released.pending(), 0u);
}

TEST(ReleasedFilesTest, AFileReleasedLaterIsDeletedByDrain) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  for (int i = 0; i < 300; i++) {
    WriteFile(dir.path() + "/" + std::to_string(i), 100);
    released.ReleaseLater(std::to_string(i));
  }
  released.ReleaseLater("never-written");
  released.Drain();
  EXPECT_EQ(released.pending(), 0u);
  EXPECT_EQ(CountEntries(dir.path()), 1u);  // the folder alone
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
}

TEST(ReleasedFilesTest, AClaimedNameIsFreeAtOnceAndItsNewFileIsKept) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  // Many noted at once, so the thread has not got to the last ones when
  // they are claimed; whichever it reached first, the new files stay.
  std::vector<std::string> paths;
  for (int i = 0; i < 500; i++) {
    paths.push_back(dir.path() + "/" + std::to_string(i));
    WriteFile(paths.back(), 5000);
    released.ReleaseLater(NameOf(paths.back()));
  }
  for (int i = 499; i >= 450; i--) {
    released.Claim(NameOf(paths[i]));
    EXPECT_FALSE(Exists(paths[i])) << paths[i];  // the old file is out of the way
    WriteFile(paths[i], 10);                     // the inode's new data file
  }
  released.Claim("never-noted");  // nothing to do
  released.Drain();
  EXPECT_EQ(released.pending(), 0u);
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
  for (int i = 0; i < 500; i++) {
    struct stat st;
    if (i < 450) {
      EXPECT_FALSE(Exists(paths[i])) << paths[i];
    } else {
      ASSERT_EQ(::stat(paths[i].c_str(), &st), 0) << paths[i];
      EXPECT_EQ(st.st_size, 10) << paths[i];
    }
  }
}

TEST(ReleasedFilesTest, ReleasingNowANameNotedForLaterKeepsItsNextFile) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  std::vector<std::string> paths;
  for (int i = 0; i < 300; i++) {
    paths.push_back(dir.path() + "/" + std::to_string(i));
    WriteFile(paths.back(), 100);
    released.ReleaseLater(NameOf(paths.back()));
  }
  released.Release(NameOf(paths.back()));
  EXPECT_FALSE(Exists(paths.back()));
  WriteFile(paths.back(), 7);  // no longer noted: the thread leaves it alone
  released.Drain();
  struct stat st;
  ASSERT_EQ(::stat(paths.back().c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 7);
  EXPECT_EQ(CountEntries(dir.path()), 2u);  // the folder and that file
}

TEST(ReleasedFilesTest, WithoutItsFolderFilesReleasedLaterAreDeletedInPlace) {
  TempDir dir;
  WriteFile(dir.path() + "/released", 1);
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  WriteFile(dir.path() + "/4", 100);
  WriteFile(dir.path() + "/5", 100);
  released.ReleaseLater("4");
  released.ReleaseLater("5");
  released.Claim("5");
  EXPECT_FALSE(Exists(dir.path() + "/5"));
  released.Drain();
  EXPECT_FALSE(Exists(dir.path() + "/4"));
  EXPECT_EQ(released.pending(), 0u);
}

TEST(ReleasedFilesTest, ReleasesFromManyThreadsAreAllDeleted) {
  TempDir dir;
  auto parent = OpenDir(dir.path());
  ReleasedFiles released(parent.get(), "released");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; i++) {
        const std::string p = dir.path() + "/" + std::to_string(t * 1000 + i);
        WriteFile(p, 512);
        released.Release(NameOf(p));
        if (i % 25 == 0) released.Drain();
      }
    });
  }
  for (auto& th : threads) th.join();
  released.Drain();
  EXPECT_EQ(CountEntries(dir.path() + "/released"), 0u);
  EXPECT_EQ(CountEntries(dir.path()), 1u);  // the folder alone
}

}  // namespace
}  // namespace strata::workspace_internal
