// Tests of the importer: what a commit records, hard links, and the import
// cache that makes a repeated import cost what changed.
#include "snapshot/importer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "snapshot/exporter.h"
#include "snapshot/import_cache.h"
#include "store/revision.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

class ImporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_.path() + "/src";
    ASSERT_EQ(::mkdir(src_.c_str(), 0755), 0);
    ASSERT_TRUE(Store::Init(dir_.path() + "/store", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/store")).value();
  }

  ImportStats Import(bool use_cache = true) {
    ImportOptions o;
    o.branch = "main";
    o.message = "test";
    if (use_cache) o.cache_path = dir_.path() + "/import-cache.db";
    auto stats = ImportTree(*store_, src_, o);
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : ImportStats{};
  }

  std::string Cat(const std::string& spec) {
    RevPath rp = SplitRevPath(spec);
    Hash id = *ResolveRevision(*store_, rp.rev);
    auto entry = LookupPath(*store_, store_->GetCommit(id)->root, rp.path);
    EXPECT_TRUE(entry.ok()) << entry.status().ToString();
    std::string out;
    for (const ChunkRef& c : entry->chunks) out += *store_->Get(c.id, ObjectType::kChunk);
    return out;
  }

  testing::TempDir dir_;
  std::string src_;
  std::unique_ptr<Store> store_;
};

TEST_F(ImporterTest, RecordsFilesLinksAndHistory) {
  ASSERT_EQ(::mkdir((src_ + "/d").c_str(), 0700), 0);
  WriteFile(src_ + "/d/a", "alpha");
  WriteFile(src_ + "/big", testing::RandomBytes(3 << 20, 9));
  ASSERT_EQ(::link((src_ + "/d/a").c_str(), (src_ + "/z-link").c_str()), 0);
  ASSERT_EQ(::symlink("d/a", (src_ + "/sym").c_str()), 0);
  ImportStats first = Import();
  EXPECT_EQ(first.files, 2u);
  EXPECT_EQ(first.hardlinks, 1u);
  EXPECT_EQ(first.symlinks, 1u);
  EXPECT_EQ(first.directories, 1u);
  EXPECT_GE(first.chunks, 3u);  // 3 MiB of random data is several chunks
  EXPECT_EQ(Cat("main:d/a"), "alpha");
  auto link = LookupPath(*store_, first.root, "z-link");
  EXPECT_EQ(link->kind, EntryKind::kHardlink);
  EXPECT_EQ(link->target, "d/a");

  WriteFile(src_ + "/d/a", "beta");
  ImportStats second = Import();
  EXPECT_EQ(Cat("main:d/a"), "beta");
  EXPECT_EQ(Cat("main~1:d/a"), "alpha");
  EXPECT_EQ(store_->GetCommit(second.commit)->parents, std::vector<Hash>{first.commit});
  EXPECT_EQ(second.new_chunks, 1u);  // the big file deduplicates
}

TEST_F(ImporterTest, RepeatedImportReadsOnlyChangedFiles) {
  for (int i = 0; i < 20; i++) WriteFile(src_ + "/f" + std::to_string(i), std::string(1000 + i, 'a' + i % 26));
  // Files changed within the racy window are never cached; age them past it.
  std::this_thread::sleep_for(ImportCache::kRacyWindow + std::chrono::milliseconds(200));
  ImportStats first = Import();
  EXPECT_EQ(first.cached_files, 0u);
  EXPECT_EQ(first.bytes_read, first.bytes);

  ImportStats again = Import();
  EXPECT_EQ(again.cached_files, 20u);
  EXPECT_EQ(again.bytes_read, 0u);
  EXPECT_EQ(again.root, first.root);

  // Same size, same mtime, other content: ctime still gives the change away.
  struct stat before;
  ASSERT_EQ(::stat((src_ + "/f3").c_str(), &before), 0);
  WriteFile(src_ + "/f3", std::string(1003, 'Z'));
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (src_ + "/f3").c_str(), times, 0), 0);
  ImportStats changed = Import();
  EXPECT_EQ(changed.cached_files, 19u);
  EXPECT_EQ(changed.bytes_read, 1003u);
  EXPECT_EQ(Cat("main:f3"), std::string(1003, 'Z'));

  // Without the cache everything is read, and the result is the same tree.
  ImportStats full = Import(/*use_cache=*/false);
  EXPECT_EQ(full.bytes_read, full.bytes);
  EXPECT_EQ(full.root, changed.root);
}

TEST_F(ImporterTest, HardLinkedSpecialFilesAndSymlinksStayLinked) {
  ASSERT_EQ(::mkfifo((src_ + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::link((src_ + "/fifo").c_str(), (src_ + "/fifo2").c_str()), 0);
  ASSERT_EQ(::symlink("somewhere", (src_ + "/sym").c_str()), 0);
  ASSERT_EQ(::linkat(AT_FDCWD, (src_ + "/sym").c_str(), AT_FDCWD, (src_ + "/sym2").c_str(), 0), 0);
  ImportStats stats = Import();
  EXPECT_EQ(stats.hardlinks, 2u);
  ExportOptions eo;
  auto exported = ExportCommit(*store_, *store_->GetCommit(stats.commit), dir_.path() + "/out", eo, nullptr);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  struct stat a, b;
  ASSERT_EQ(::lstat((dir_.path() + "/out/fifo2").c_str(), &b), 0);
  ASSERT_EQ(::lstat((dir_.path() + "/out/fifo").c_str(), &a), 0);
  EXPECT_TRUE(S_ISFIFO(b.st_mode));
  EXPECT_EQ(a.st_ino, b.st_ino);
  ASSERT_EQ(::lstat((dir_.path() + "/out/sym").c_str(), &a), 0);
  ASSERT_EQ(::lstat((dir_.path() + "/out/sym2").c_str(), &b), 0);
  EXPECT_TRUE(S_ISLNK(b.st_mode));
  EXPECT_EQ(a.st_ino, b.st_ino);
}

TEST_F(ImporterTest, LeavesOutAStoreInsideTheTree) {
  WriteFile(src_ + "/keep", "k");
  ASSERT_TRUE(Store::Init(src_ + "/inner-store", StoreConfig()).ok());
  auto inner = Store::Open(src_ + "/inner-store");
  ASSERT_TRUE(inner.ok());
  ImportOptions o;
  o.branch = "main";
  o.cache_path = dir_.path() + "/import-cache.db";
  auto stats = ImportTree(**inner, src_, o);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->excluded, 1u);
  auto tree = (*inner)->GetTree(stats->root);
  ASSERT_EQ(tree->entries.size(), 1u);
  EXPECT_EQ(tree->entries[0].name, "keep");
  EXPECT_EQ(ImportTree(**inner, src_ + "/inner-store", o).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(ImporterTest, RejectsBadBranchAndMissingSource) {
  ImportOptions o;
  o.branch = "a..b";
  EXPECT_EQ(ImportTree(*store_, src_, o).status().code(), Status::Code::kInvalidArgument);
  o.branch = "main";
  EXPECT_FALSE(ImportTree(*store_, dir_.path() + "/missing", o).ok());
  WriteFile(dir_.path() + "/plain", "x");
  EXPECT_EQ(ImportTree(*store_, dir_.path() + "/plain", o).status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(store_->GetRef("main")->has_value());  // nothing was committed
}

}  // namespace
}  // namespace strata
