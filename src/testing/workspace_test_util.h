// The fixture the workspace unit tests share: a store, base commits built
// from tree entries, workspaces on them, and short helpers for the calls.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "testing/store_test_util.h"
#include "testing/tree_test_util.h"
#include "workspace/workspace.h"

namespace strata::workspace_testing {

constexpr Credentials kWho{1000, 1000};

inline int Errno(const Status& s) { return s.errno_value(); }
template <typename T>
int Errno(const Result<T>& r) {
  return r.ok() ? 0 : r.status().errno_value();
}

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Init(dir_.path() + "/s", StoreConfig()).ok());
    store_ = std::move(Store::Open(dir_.path() + "/s")).value();
  }

  // ---- building base commits

  TreeEntry File(const std::string& name, const std::string& data, size_t chunk = 700 * 1024) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kFile;
    e.mode = 0644;
    e.uid = e.gid = 1000;
    e.mtime_sec = 1700000000;
    e.size = data.size();
    for (size_t off = 0; off < data.size(); off += chunk) {
      std::string piece = data.substr(off, chunk);
      auto put = store_->Put(ObjectType::kChunk, piece);
      EXPECT_TRUE(put.ok());
      e.chunks.push_back(ChunkRef{put->id, piece.size()});
    }
    return e;
  }
  TreeEntry Dir(const std::string& name, std::vector<TreeEntry> entries) {
    TreeEntry e;
    e.name = name;
    e.kind = EntryKind::kDirectory;
    e.mode = 0755;
    e.mtime_sec = 1700000000;
    e.subtree = PutTree(std::move(entries));
    return e;
  }
  TreeEntry Link(const std::string& name, EntryKind kind, const std::string& target) {
    TreeEntry e;
    e.name = name;
    e.kind = kind;
    e.mode = 0777;
    e.target = target;
    return e;
  }
  Hash PutTree(std::vector<TreeEntry> entries) { return testing::PutTree(*store_, std::move(entries)); }
  Hash PutCommit(std::vector<TreeEntry> root_entries, RootMeta meta = RootMeta()) {
    Commit c;
    c.root = PutTree(std::move(root_entries));
    c.root_meta = meta;
    c.message = "base";
    Hash id = store_->Put(ObjectType::kCommit, EncodeCommit(c))->id;
    EXPECT_TRUE(store_->Flush().ok());
    return id;
  }

  // The standard base:  a/{big, small, sub/deep}  b/{link_to_small => a/small, other}
  //                     c/x  empty/  sym -> a/small  top (xattr user.k=v)
  Hash MakeBase() {
    big_ = testing::RandomBytes(3 << 20, 7);
    TreeEntry top = File("top", "top file");
    top.xattrs = {{"user.k", "v"}};
    RootMeta meta;
    meta.mode = 0750;
    meta.uid = meta.gid = 1000;
    meta.mtime_sec = 1600000000;
    meta.xattrs = {{"user.root", "r"}};
    return PutCommit({Dir("a", {File("big", big_), File("small", "hello"), Dir("sub", {File("deep", "deep")})}),
                      Dir("b", {Link("link_to_small", EntryKind::kHardlink, "a/small"), File("other", "other")}),
                      Dir("c", {File("x", "x")}), Dir("empty", {}), Link("sym", EntryKind::kSymlink, "a/small"), top},
                     meta);
  }

  std::unique_ptr<Workspace> CreateAndOpen(const std::optional<Hash>& base, const std::string& name = "ws") {
    Status s = Workspace::Create(*store_, name, base, "main");
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto ws = Workspace::Open(*store_, name);
    EXPECT_TRUE(ws.ok()) << ws.status().ToString();
    return ws.ok() ? std::move(ws).value() : nullptr;
  }

  std::string WsDir(const std::string& name = "ws") { return dir_.path() + "/s/workspaces/" + name; }

  // How many entries the database holds for a directory (-1: all directories),
  // read by a connection of its own once ws has committed its operations.
  int64_t CountDentries(Workspace& ws, int64_t parent) {
    EXPECT_TRUE(ws.Sync(kRootInode).ok());
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2((WsDir() + "/workspace.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    const char* sql = parent < 0 ? "SELECT count(*) FROM dentries" : "SELECT count(*) FROM dentries WHERE parent = ?";
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK);
    if (parent >= 0) sqlite3_bind_int64(st, 1, parent);
    EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }

  static Attr L(Workspace& ws, InodeId parent, std::string_view name) {
    auto a = ws.Lookup(parent, name);
    EXPECT_TRUE(a.ok()) << name << ": " << a.status().ToString();
    return a.ok() ? *a : Attr();
  }
  static Attr Mk(Workspace& ws, InodeId parent, std::string_view name) {
    auto a = ws.MakeNode(parent, name, S_IFREG | 0644, 0, kWho);
    EXPECT_TRUE(a.ok()) << name << ": " << a.status().ToString();
    return a.ok() ? *a : Attr();
  }
  static Attr Mkdir(Workspace& ws, InodeId parent, std::string_view name) {
    auto a = ws.MakeDirectory(parent, name, 0755, kWho);
    EXPECT_TRUE(a.ok()) << name << ": " << a.status().ToString();
    return a.ok() ? *a : Attr();
  }
  static void W(Workspace& ws, InodeId ino, uint64_t off, std::string_view data) {
    auto n = ws.Write(ino, off, data);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_EQ(*n, data.size());
  }
  static std::string ReadAll(Workspace& ws, InodeId ino, size_t piece = 100000) {
    std::string out;
    auto attr = ws.GetAttr(ino);
    EXPECT_TRUE(attr.ok());
    if (!attr.ok()) return out;
    std::string buf(piece, '\0');
    for (uint64_t off = 0;; off += piece) {
      auto n = ws.Read(ino, off, piece, buf.data());
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) break;
      out.append(buf.data(), *n);
    }
    EXPECT_EQ(out.size(), attr->size);
    return out;
  }
  static std::set<std::string> Names(Workspace& ws, InodeId dir) {
    std::set<std::string> out;
    auto entries = ws.ReadDirectory(dir, 0, 100000);
    EXPECT_TRUE(entries.ok());
    if (entries.ok())
      for (const DirEntry& e : *entries) out.insert(e.name);
    return out;
  }

  void RandomRun(uint64_t seed);  // defined with the model below

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string big_;
};

}  // namespace strata::workspace_testing
