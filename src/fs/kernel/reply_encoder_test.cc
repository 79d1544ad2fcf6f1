#include <dirent.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "fs/kernel/dirent_buffer.h"
#include "fs/kernel/reply.h"

namespace strata::fs::kernel {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

fuse_out_header HeaderOf(const Message& m) {
  fuse_out_header h{};
  EXPECT_GE(m.size(), sizeof(h));
  std::memcpy(&h, m.data(), std::min(sizeof(h), m.size()));
  EXPECT_EQ(h.len, m.size()) << "len must be the whole message";
  return h;
}

template <typename T>
T BodyOf(const Message& m, size_t at = sizeof(fuse_out_header)) {
  T v{};
  EXPECT_GE(m.size(), at + sizeof(T));
  if (m.size() >= at + sizeof(T)) std::memcpy(&v, m.data() + at, sizeof(T));
  return v;
}

struct stat SomeStat() {
  struct stat st {};
  st.st_ino = 42;
  st.st_mode = S_IFREG | 0640;
  st.st_nlink = 2;
  st.st_uid = 1000;
  st.st_gid = 100;
  st.st_size = 12345;
  st.st_blocks = 32;
  st.st_blksize = 4096;
  st.st_mtim = {1700000000, 123456789};
  st.st_ctim = {1700000001, 5};
  st.st_atim = {1700000002, 6};
  return st;
}

TEST(ReplyEncoder, ErrorsAreNegativeErrnoAndBadOnesBecomeEio) {
  auto h = HeaderOf(ErrorReply(8, ENOENT));
  EXPECT_EQ(h.error, -ENOENT);
  EXPECT_EQ(h.unique, 8u);
  EXPECT_EQ(HeaderOf(ErrorReply(8, 0)).error, -EIO);
  EXPECT_EQ(HeaderOf(ErrorReply(8, -3)).error, -EIO);
  EXPECT_EQ(HeaderOf(ErrorReply(8, 512)).error, -EIO);
  EXPECT_EQ(HeaderOf(ErrorReply(8, 511)).error, -511);
  auto ok = EmptyReply(10);
  EXPECT_EQ(ok.size(), sizeof(fuse_out_header));
  EXPECT_EQ(HeaderOf(ok).error, 0);
}

TEST(ReplyEncoder, EntryCarriesIdsTimeoutsAndAttributes) {
  EntryParams e;
  e.nodeid = 7;
  e.generation = 3;
  e.entry_timeout = seconds(2) + milliseconds(500);
  e.attr_timeout = seconds(1);
  e.attr = SomeStat();
  auto m = EntryReply(12, e);
  EXPECT_EQ(m.size(), sizeof(fuse_out_header) + sizeof(fuse_entry_out));
  EXPECT_EQ(HeaderOf(m).unique, 12u);
  auto out = BodyOf<fuse_entry_out>(m);
  EXPECT_EQ(out.nodeid, 7u);
  EXPECT_EQ(out.generation, 3u);
  EXPECT_EQ(out.entry_valid, 2u);
  EXPECT_EQ(out.entry_valid_nsec, 500'000'000u);
  EXPECT_EQ(out.attr_valid, 1u);
  EXPECT_EQ(out.attr.ino, 42u);
  EXPECT_EQ(out.attr.mode, unsigned{S_IFREG | 0640});
  EXPECT_EQ(out.attr.size, 12345u);
  EXPECT_EQ(out.attr.mtime, 1700000000u);
  EXPECT_EQ(out.attr.mtimensec, 123456789u);
  EXPECT_EQ(out.attr.ctimensec, 5u);
  EXPECT_EQ(out.attr.blksize, 4096u);
}

TEST(ReplyEncoder, AttrOpenCreateWriteStatfsLseekXattr) {
  auto attr = BodyOf<fuse_attr_out>(AttrReply(2, SomeStat(), milliseconds(1500)));
  EXPECT_EQ(attr.attr_valid, 1u);
  EXPECT_EQ(attr.attr_valid_nsec, 500'000'000u);
  EXPECT_EQ(attr.attr.nlink, 2u);

  auto open = BodyOf<OpenOut>(OpenReply(2, {5, kOpenPassthrough | FOPEN_KEEP_CACHE, 9}));
  EXPECT_EQ(open.fh, 5u);
  EXPECT_EQ(open.open_flags, kOpenPassthrough | FOPEN_KEEP_CACHE);
  EXPECT_EQ(open.backing_id, 9);

  EntryParams e;
  e.nodeid = 70;
  auto create = CreateReply(2, e, {6, 0, 0});
  EXPECT_EQ(create.size(), sizeof(fuse_out_header) + sizeof(fuse_entry_out) + sizeof(fuse_open_out));
  EXPECT_EQ(BodyOf<fuse_entry_out>(create).nodeid, 70u);
  EXPECT_EQ(BodyOf<OpenOut>(create, sizeof(fuse_out_header) + sizeof(fuse_entry_out)).fh, 6u);

  EXPECT_EQ(BodyOf<fuse_write_out>(WriteReply(2, 4096)).size, 4096u);
  struct statvfs sv {};
  sv.f_blocks = 100;
  sv.f_bavail = 40;
  sv.f_bsize = 4096;
  sv.f_namemax = 255;
  auto st = BodyOf<fuse_statfs_out>(StatfsReply(2, sv));
  EXPECT_EQ(st.st.blocks, 100u);
  EXPECT_EQ(st.st.bavail, 40u);
  EXPECT_EQ(st.st.namelen, 255u);
  EXPECT_EQ(BodyOf<fuse_lseek_out>(LseekReply(2, 8192)).offset, 8192u);
  EXPECT_EQ(BodyOf<fuse_getxattr_out>(XattrSizeReply(2, 17)).size, 17u);
  auto data = DataReply(2, std::string_view("bytes"));
  EXPECT_EQ(data.substr(sizeof(fuse_out_header)), "bytes");
  EXPECT_EQ(HeaderOf(data).len, sizeof(fuse_out_header) + 5);
}

TEST(ReplyEncoder, Notifications) {
  auto inode = NotifyInvalInode(5, 0, -1);
  auto h = HeaderOf(inode);
  EXPECT_EQ(h.unique, 0u);
  EXPECT_EQ(h.error, FUSE_NOTIFY_INVAL_INODE);
  auto in = BodyOf<fuse_notify_inval_inode_out>(inode);
  EXPECT_EQ(in.ino, 5u);
  EXPECT_EQ(in.len, -1);

  auto entry = NotifyInvalEntry(1, "name", FUSE_EXPIRE_ONLY);
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(HeaderOf(*entry).error, FUSE_NOTIFY_INVAL_ENTRY);
  auto eo = BodyOf<fuse_notify_inval_entry_out>(*entry);
  EXPECT_EQ(eo.namelen, 4u);
  EXPECT_EQ(eo.flags, unsigned{FUSE_EXPIRE_ONLY});
  EXPECT_EQ(entry->substr(sizeof(fuse_out_header) + sizeof(eo)), std::string("name\0", 5));

  auto del = NotifyDelete(1, 9, "gone");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(HeaderOf(*del).error, FUSE_NOTIFY_DELETE);
  auto d = BodyOf<fuse_notify_delete_out>(*del);
  EXPECT_EQ(d.child, 9u);
  EXPECT_EQ(del->substr(sizeof(fuse_out_header) + sizeof(d)), std::string("gone\0", 5));

  EXPECT_FALSE(NotifyInvalEntry(1, "", 0).ok());
  EXPECT_FALSE(NotifyInvalEntry(1, "a/b", 0).ok());
  EXPECT_FALSE(NotifyDelete(1, 2, std::string("a\0b", 3)).ok());
}

// Walks a READDIR body as the kernel does: record by record, each at an
// 8-byte boundary.
TEST(DirentBuffer, RecordsAreAlignedAndBounded) {
  DirentBuffer buf(80);
  EXPECT_TRUE(buf.Add(10, 1, DT_REG, "a"));      // 24 + 1 -> 32
  EXPECT_TRUE(buf.Add(11, 2, DT_DIR, "ninechars"));  // 24 + 9 -> 40
  EXPECT_FALSE(buf.Add(12, 3, DT_REG, "x"));     // 72 + 32 > 80: refused, buffer unchanged
  EXPECT_FALSE(buf.Add(12, 3, DT_REG, "a/b"));
  ASSERT_EQ(buf.bytes().size(), 72u);
  const std::string& b = buf.bytes();
  fuse_dirent d{};
  std::memcpy(&d, b.data(), 24);
  EXPECT_EQ(d.ino, 10u);
  EXPECT_EQ(d.off, 1u);
  EXPECT_EQ(d.namelen, 1u);
  EXPECT_EQ(d.type, unsigned{DT_REG});
  EXPECT_EQ(b.substr(24, 8), std::string("a\0\0\0\0\0\0\0", 8));
  std::memcpy(&d, b.data() + 32, 24);
  EXPECT_EQ(d.ino, 11u);
  EXPECT_EQ(d.namelen, 9u);
  EXPECT_EQ(b.substr(56, 9), "ninechars");
  EXPECT_EQ(b.substr(65), std::string(7, '\0'));
}

TEST(DirentBuffer, PlusRecordsCarryTheEntry) {
  DirentBuffer buf(4096);
  EntryParams e;
  e.nodeid = 77;
  e.attr = SomeStat();
  e.entry_timeout = seconds(1);
  ASSERT_TRUE(buf.AddPlus(e, 5, DT_REG, "file"));
  ASSERT_EQ(buf.bytes().size(), DirentRecordBytes(152, 4));
  fuse_direntplus p{};
  std::memcpy(&p, buf.bytes().data(), sizeof(p));
  EXPECT_EQ(p.entry_out.nodeid, 77u);
  EXPECT_EQ(p.entry_out.entry_valid, 1u);
  EXPECT_EQ(p.entry_out.attr.ino, 42u);
  EXPECT_EQ(p.dirent.ino, 42u);
  EXPECT_EQ(p.dirent.off, 5u);
  EXPECT_EQ(p.dirent.namelen, 4u);
  EXPECT_EQ(buf.bytes().substr(152, 4), "file");
  DirentBuffer tiny(152);
  EXPECT_FALSE(tiny.AddPlus(e, 5, DT_REG, "file"));
  EXPECT_TRUE(tiny.empty());
}

}  // namespace
}  // namespace strata::fs::kernel
