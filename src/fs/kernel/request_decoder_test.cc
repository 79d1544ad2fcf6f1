#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <list>
#include <set>
#include <string>
#include <vector>

#include "fs/kernel/request.h"
#include "fs/kernel/request_builder.h"
#include "fs/kernel/request_encoder.h"

namespace strata::fs::kernel {
namespace {

DecodeOptions Session() {
  DecodeOptions o;
  o.minor = kProtocolMinor;
  o.max_write = 1 << 20;
  return o;
}

// Decoded names and payloads point into the request's bytes, which must
// outlive them: the tests' requests are temporaries, so keep a copy of each
// for the life of the test binary.
const std::vector<uint8_t>& Kept(const std::vector<uint8_t>& bytes) {
  static std::list<std::vector<uint8_t>> kept;
  return kept.emplace_back(bytes);
}

template <typename Args>
Args DecodeAs(const std::vector<uint8_t>& temporary, DecodeOptions options = Session()) {
  const std::vector<uint8_t>& bytes = Kept(temporary);
  auto r = DecodeRequest(bytes, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Args{};
  EXPECT_TRUE(std::holds_alternative<Args>(r->args)) << "variant index " << r->args.index();
  if (!std::holds_alternative<Args>(r->args)) return Args{};
  return std::get<Args>(r->args);
}

std::string Refusal(const std::vector<uint8_t>& bytes, DecodeOptions options = Session()) {
  auto r = DecodeRequest(bytes, options);
  EXPECT_FALSE(r.ok()) << "decoded a request that should be refused";
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  return r.status().message();
}

TEST(RequestDecoder, LookupGivesHeaderAndName) {
  auto bytes = RequestBuilder(FUSE_LOOKUP, 10, 1).Name("hello.txt").Bytes();
  auto r = DecodeRequest(bytes, Session());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->header.opcode, uint32_t{FUSE_LOOKUP});
  EXPECT_EQ(r->header.unique, 10u);
  EXPECT_EQ(r->header.nodeid, 1u);
  EXPECT_EQ(r->header.uid, 1000u);
  EXPECT_EQ(r->header.pid, 4242u);
  EXPECT_EQ(std::get<NameArgs>(r->args).name, "hello.txt");
}

TEST(RequestDecoder, InitLongAndShortForms) {
  fuse_init_in in{};
  in.major = 7;
  in.minor = 44;
  in.max_readahead = 1 << 17;
  in.flags = FUSE_ASYNC_READ | FUSE_INIT_EXT;
  in.flags2 = static_cast<uint32_t>(kInitPassthrough >> 32);
  auto init = DecodeAs<InitArgs>(RequestBuilder(FUSE_INIT, 2, 0).Struct(in).Bytes(), DecodeOptions{});
  EXPECT_EQ(init.minor, 44u);
  EXPECT_EQ(init.flags, FUSE_ASYNC_READ | FUSE_INIT_EXT | kInitPassthrough);

  // A pre-7.36 kernel sends 16 bytes; flags2 is absent.
  auto short_init = DecodeAs<InitArgs>(RequestBuilder(FUSE_INIT, 2, 0).Raw(std::string(reinterpret_cast<char*>(&in), 16)).Bytes(),
                                       DecodeOptions{});
  EXPECT_EQ(short_init.flags, FUSE_ASYNC_READ | FUSE_INIT_EXT);
  // flags2 counts only when FUSE_INIT_EXT says it is there.
  in.flags = FUSE_ASYNC_READ;
  auto no_ext = DecodeAs<InitArgs>(RequestBuilder(FUSE_INIT, 2, 0).Struct(in).Bytes(), DecodeOptions{});
  EXPECT_EQ(no_ext.flags, uint64_t{FUSE_ASYNC_READ});
}

TEST(RequestDecoder, OnlyInitBeforeInitAndOnlyOnce) {
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a").Bytes(), DecodeOptions{}).find("before INIT"),
            std::string::npos);
  fuse_init_in in{};
  in.major = 7;
  in.minor = 44;
  EXPECT_NE(Refusal(RequestBuilder(FUSE_INIT, 4, 0).Struct(in).Bytes()).find("second INIT"), std::string::npos);
}

TEST(RequestDecoder, EntryCreatingOpcodes) {
  fuse_mknod_in mknod{0100644, 0, 022, 0};
  auto m = DecodeAs<MknodArgs>(RequestBuilder(FUSE_MKNOD, 2, 1).Struct(mknod).Name("f").Bytes());
  EXPECT_EQ(m.in.mode, 0100644u);
  EXPECT_EQ(m.in.umask, 022u);
  EXPECT_EQ(m.name, "f");

  fuse_mkdir_in mkdir{0755, 022};
  EXPECT_EQ(DecodeAs<MkdirArgs>(RequestBuilder(FUSE_MKDIR, 2, 1).Struct(mkdir).Name("d").Bytes()).name, "d");

  fuse_create_in create{O_WRONLY | O_CREAT, 0100600, 022, 0};
  auto c = DecodeAs<CreateArgs>(RequestBuilder(FUSE_CREATE, 2, 1).Struct(create).Name("new").Bytes());
  EXPECT_EQ(c.in.flags, uint32_t{O_WRONLY | O_CREAT});
  EXPECT_EQ(c.name, "new");

  auto s = DecodeAs<SymlinkArgs>(RequestBuilder(FUSE_SYMLINK, 2, 1).Name("link").Name("../some/target").Bytes());
  EXPECT_EQ(s.name, "link");
  EXPECT_EQ(s.target, "../some/target");

  fuse_link_in link{7};
  auto l = DecodeAs<LinkArgs>(RequestBuilder(FUSE_LINK, 2, 1).Struct(link).Name("other").Bytes());
  EXPECT_EQ(l.oldnodeid, 7u);
  EXPECT_EQ(l.new_name, "other");
}

TEST(RequestDecoder, RenameAndRename2) {
  fuse_rename_in r1{5};
  auto a = DecodeAs<RenameArgs>(RequestBuilder(FUSE_RENAME, 2, 1).Struct(r1).Name("old").Name("new").Bytes());
  EXPECT_EQ(a.newdir, 5u);
  EXPECT_EQ(a.flags, 0u);
  EXPECT_EQ(a.old_name, "old");
  EXPECT_EQ(a.new_name, "new");
  fuse_rename2_in r2{6, RENAME_NOREPLACE, 0};
  auto b = DecodeAs<RenameArgs>(RequestBuilder(FUSE_RENAME2, 2, 1).Struct(r2).Name("x").Name("y").Bytes());
  EXPECT_EQ(b.newdir, 6u);
  EXPECT_EQ(b.flags, unsigned{RENAME_NOREPLACE});
  fuse_rename_in to_zero{0};
  EXPECT_NE(Refusal(RequestBuilder(FUSE_RENAME, 2, 1).Struct(to_zero).Name("a").Name("b").Bytes()).find("node 0"),
            std::string::npos);
}

TEST(RequestDecoder, WritePayloadMustMatchItsSize) {
  fuse_write_in w{};
  w.fh = 3;
  w.offset = 4096;
  w.size = 5;
  auto ok = DecodeAs<WriteArgs>(RequestBuilder(FUSE_WRITE, 2, 9).Struct(w).Raw("hello").Bytes());
  EXPECT_EQ(ok.in.offset, 4096u);
  EXPECT_EQ(std::string(ok.data.begin(), ok.data.end()), "hello");
  EXPECT_NE(Refusal(RequestBuilder(FUSE_WRITE, 2, 9).Struct(w).Raw("hell").Bytes()).find("carries 4"),
            std::string::npos);
  EXPECT_NE(Refusal(RequestBuilder(FUSE_WRITE, 2, 9).Struct(w).Raw("hello!").Bytes()).find("carries 6"),
            std::string::npos);
  DecodeOptions small = Session();
  small.max_write = 4;
  EXPECT_NE(Refusal(RequestBuilder(FUSE_WRITE, 2, 9).Struct(w).Raw("hello").Bytes(), small).find("max_write"),
            std::string::npos);
}

TEST(RequestDecoder, XattrRequests) {
  fuse_setxattr_in set{};
  set.size = 3;
  set.flags = XATTR_CREATE;
  std::string compat(reinterpret_cast<char*>(&set), kSetxattrInCompatSize);
  auto s = DecodeAs<SetxattrArgs>(RequestBuilder(FUSE_SETXATTR, 2, 1).Raw(compat).Name("user.k").Raw("abc").Bytes());
  EXPECT_EQ(s.name, "user.k");
  EXPECT_EQ(std::string(s.value.begin(), s.value.end()), "abc");
  EXPECT_EQ(s.flags, unsigned{XATTR_CREATE});

  // With FUSE_SETXATTR_EXT agreed the struct has 16 bytes.
  DecodeOptions ext = Session();
  ext.setxattr_ext = true;
  set.setxattr_flags = 1;
  auto e = DecodeAs<SetxattrArgs>(RequestBuilder(FUSE_SETXATTR, 2, 1).Struct(set).Name("user.k").Raw("abc").Bytes(), ext);
  EXPECT_EQ(e.setxattr_flags, 1u);
  EXPECT_EQ(std::string(e.value.begin(), e.value.end()), "abc");
  // The same bytes without the agreement are a 3-byte value that does not match.
  Refusal(RequestBuilder(FUSE_SETXATTR, 2, 1).Struct(set).Name("user.k").Raw("abc").Bytes());

  fuse_getxattr_in get{64, 0};
  auto g = DecodeAs<GetxattrArgs>(RequestBuilder(FUSE_GETXATTR, 2, 1).Struct(get).Name("user.k").Bytes());
  EXPECT_EQ(g.size, 64u);
  EXPECT_EQ(g.name, "user.k");
  auto l = DecodeAs<GetxattrArgs>(RequestBuilder(FUSE_LISTXATTR, 2, 1).Struct(get).Bytes());
  EXPECT_EQ(l.size, 64u);
  EXPECT_TRUE(l.name.empty());
  EXPECT_EQ(DecodeAs<RemovexattrArgs>(RequestBuilder(FUSE_REMOVEXATTR, 2, 1).Name("user.k").Bytes()).name, "user.k");
  // An xattr name is not a path component: '/' is the kernel's to allow.
  EXPECT_EQ(DecodeAs<RemovexattrArgs>(RequestBuilder(FUSE_REMOVEXATTR, 2, 1).Name("user/k").Bytes()).name, "user/k");
}

TEST(RequestDecoder, BatchForgetCountMustMatchTheBytes) {
  fuse_batch_forget_in in{2, 0};
  fuse_forget_one a{5, 1}, b{6, 3};
  auto f = DecodeAs<BatchForgetArgs>(RequestBuilder(FUSE_BATCH_FORGET, 2, 0).Struct(in).Struct(a).Struct(b).Bytes());
  ASSERT_EQ(f.items.size(), 2u);
  EXPECT_EQ(f.items[1].nodeid, 6u);
  EXPECT_EQ(f.items[1].nlookup, 3u);
  fuse_batch_forget_in huge{0xffffffffu, 0};
  Refusal(RequestBuilder(FUSE_BATCH_FORGET, 2, 0).Struct(huge).Struct(a).Bytes());
  Refusal(RequestBuilder(FUSE_BATCH_FORGET, 2, 0).Struct(in).Struct(a).Bytes());
}

TEST(RequestDecoder, InterruptIdsMustPair) {
  fuse_interrupt_in in{40};
  EXPECT_EQ(DecodeAs<InterruptArgs>(RequestBuilder(FUSE_INTERRUPT, 41, 0).Struct(in).Bytes()).unique, 40u);
  Refusal(RequestBuilder(FUSE_INTERRUPT, 40, 0).Struct(in).Bytes());  // its own id lacks the bit
  Refusal(RequestBuilder(FUSE_INTERRUPT, 43, 0).Struct(in).Bytes());  // names another request
}

TEST(RequestDecoder, FixedStructOpcodes) {
  fuse_getattr_in ga{FUSE_GETATTR_FH, 0, 77};
  EXPECT_EQ(DecodeAs<GetattrArgs>(RequestBuilder(FUSE_GETATTR, 2, 1).Struct(ga).Bytes()).in.fh, 77u);
  fuse_setattr_in sa{};
  sa.valid = FATTR_SIZE;
  sa.size = 100;
  EXPECT_EQ(DecodeAs<SetattrArgs>(RequestBuilder(FUSE_SETATTR, 2, 1).Struct(sa).Bytes()).in.size, 100u);
  fuse_read_in rd{};
  rd.size = 4096;
  for (uint32_t op : {FUSE_READ, FUSE_READDIR, FUSE_READDIRPLUS})
    EXPECT_EQ(DecodeAs<ReadArgs>(RequestBuilder(op, 2, 1).Struct(rd).Bytes()).in.size, 4096u);
  fuse_open_in op{O_RDONLY, 0};
  DecodeAs<OpenArgs>(RequestBuilder(FUSE_OPEN, 2, 1).Struct(op).Bytes());
  fuse_release_in rel{};
  rel.fh = 9;
  EXPECT_EQ(DecodeAs<ReleaseArgs>(RequestBuilder(FUSE_RELEASEDIR, 2, 1).Struct(rel).Bytes()).in.fh, 9u);
  fuse_fsync_in fs{};
  DecodeAs<FsyncArgs>(RequestBuilder(FUSE_FSYNC, 2, 1).Struct(fs).Bytes());
  fuse_fallocate_in fa{};
  fa.length = 10;
  EXPECT_EQ(DecodeAs<FallocateArgs>(RequestBuilder(FUSE_FALLOCATE, 2, 1).Struct(fa).Bytes()).in.length, 10u);
  fuse_copy_file_range_in cf{};
  cf.len = 11;
  EXPECT_EQ(DecodeAs<CopyFileRangeArgs>(RequestBuilder(FUSE_COPY_FILE_RANGE, 2, 1).Struct(cf).Bytes()).in.len, 11u);
  fuse_lseek_in ls{};
  ls.whence = SEEK_DATA;
  EXPECT_EQ(DecodeAs<LseekArgs>(RequestBuilder(FUSE_LSEEK, 2, 1).Struct(ls).Bytes()).in.whence, unsigned{SEEK_DATA});
  fuse_forget_in fg{3};
  EXPECT_EQ(DecodeAs<ForgetArgs>(RequestBuilder(FUSE_FORGET, 2, 1).Struct(fg).Bytes()).nlookup, 3u);
  DecodeAs<EmptyArgs>(RequestBuilder(FUSE_STATFS, 2, 1).Bytes());
  DecodeAs<EmptyArgs>(RequestBuilder(FUSE_READLINK, 2, 1).Bytes());
  DecodeAs<EmptyArgs>(RequestBuilder(FUSE_DESTROY, 2, 0).Bytes());
  // A struct with a byte more or less is refused.
  Refusal(RequestBuilder(FUSE_GETATTR, 2, 1).Struct(ga).Raw("x").Bytes());
  Refusal(RequestBuilder(FUSE_STATFS, 2, 1).Raw("x").Bytes());
}

TEST(RequestDecoder, UnservedOpcodesAreUnsupportedNotErrors) {
  for (uint32_t op : {uint32_t{FUSE_IOCTL}, uint32_t{FUSE_GETLK}, kOpStatx, uint32_t{9999}})
    DecodeAs<UnsupportedArgs>(RequestBuilder(op, 2, 1).Raw("anything at all").Bytes());
}

TEST(RequestDecoder, HostileHeaders) {
  auto good = RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a").Bytes();
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a").Bytes(good.size() + 1)).find("header says"),
            std::string::npos);
  Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a").Bytes(good.size() - 1));
  Refusal(std::vector<uint8_t>(good.begin(), good.begin() + 39));
  Refusal({});
  Refusal(RequestBuilder(FUSE_LOOKUP, 0, 1).Name("a").Bytes());  // unique 0
  Refusal(RequestBuilder(FUSE_LOOKUP, 3, 1).Name("a").Bytes());  // interrupt bit on a request
  Refusal(RequestBuilder(FUSE_LOOKUP, 2, 0).Name("a").Bytes());  // node 0
  RequestBuilder ext(FUSE_LOOKUP, 2, 1);
  ext.header().total_extlen = 1;
  Refusal(ext.Name("a").Raw(std::string(8, '\0')).Bytes());
}

// The structs the decoder takes apart must have zero padding, as the kernel
// sends them, so that no two byte strings decode to the same request.
TEST(RequestDecoder, NonZeroPaddingIsRefused) {
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LISTXATTR, 2, 1).Struct(fuse_getxattr_in{0, 43}).Bytes()).find("padding"),
            std::string::npos);
  Refusal(RequestBuilder(FUSE_GETXATTR, 2, 1).Struct(fuse_getxattr_in{0, 1}).Name("user.k").Bytes());
  Refusal(RequestBuilder(FUSE_RENAME2, 2, 1).Struct(fuse_rename2_in{1, 0, 1}).Name("a").Name("b").Bytes());
  Refusal(RequestBuilder(FUSE_BATCH_FORGET, 2, 0).Struct(fuse_batch_forget_in{1, 1}).Struct(fuse_forget_one{5, 1}).Bytes());
  DecodeOptions ext = Session();
  ext.setxattr_ext = true;
  Refusal(RequestBuilder(FUSE_SETXATTR, 2, 1).Struct(fuse_setxattr_in{1, 0, 0, 1}).Name("user.k").Raw("v").Bytes(), ext);
  RequestBuilder header_pad(FUSE_LOOKUP, 2, 1);
  header_pad.header().padding = 1;
  Refusal(header_pad.Name("a").Bytes());
}

TEST(RequestDecoder, HostileNames) {
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Raw("abc").Bytes()).find("no terminating NUL"),
            std::string::npos);
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("").Bytes()).find("empty"), std::string::npos);
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a/b").Bytes()).find("'/'"), std::string::npos);
  EXPECT_NE(Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name("a").Raw("b").Bytes()).find("trailing"),
            std::string::npos);
  DecodeAs<NameArgs>(RequestBuilder(FUSE_LOOKUP, 2, 1).Name(std::string(kMaxNameBytes, 'n')).Bytes());
  Refusal(RequestBuilder(FUSE_LOOKUP, 2, 1).Name(std::string(kMaxNameBytes + 1, 'n')).Bytes());
  Refusal(RequestBuilder(FUSE_SYMLINK, 2, 1).Name("l").Bytes());  // no target
  Refusal(RequestBuilder(FUSE_SYMLINK, 2, 1).Name("l").Name(std::string(kMaxSymlinkBytes + 1, 't')).Bytes());
  fuse_getxattr_in get{0, 0};
  Refusal(RequestBuilder(FUSE_GETXATTR, 2, 1).Struct(get).Name(std::string(kMaxXattrNameBytes + 1, 'x')).Bytes());
}

// Every strict prefix of a valid request, its length field set to match, is
// refused: no field may be silently missing.
TEST(RequestDecoder, EveryTruncationIsRefused) {
  fuse_write_in w{};
  w.size = 3;
  fuse_rename2_in r2{6, 0, 0};
  fuse_create_in cr{O_RDWR, 0100600, 0, 0};
  fuse_batch_forget_in bf{1, 0};
  fuse_forget_one one{5, 1};
  fuse_setxattr_in sx{};
  sx.size = 2;
  std::vector<std::vector<uint8_t>> valid = {
      RequestBuilder(FUSE_LOOKUP, 2, 1).Name("name").Bytes(),
      RequestBuilder(FUSE_WRITE, 2, 1).Struct(w).Raw("abc").Bytes(),
      RequestBuilder(FUSE_RENAME2, 2, 1).Struct(r2).Name("a").Name("bb").Bytes(),
      RequestBuilder(FUSE_CREATE, 2, 1).Struct(cr).Name("c").Bytes(),
      RequestBuilder(FUSE_SYMLINK, 2, 1).Name("s").Name("t").Bytes(),
      RequestBuilder(FUSE_BATCH_FORGET, 2, 0).Struct(bf).Struct(one).Bytes(),
      RequestBuilder(FUSE_SETXATTR, 2, 1).Raw(std::string(reinterpret_cast<char*>(&sx), 8)).Name("u.k").Raw("vv").Bytes(),
  };
  for (const auto& bytes : valid) {
    ASSERT_TRUE(DecodeRequest(bytes, Session()).ok());
    for (size_t n = 0; n < bytes.size(); n++) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      if (n >= sizeof(fuse_in_header)) {
        uint32_t len = static_cast<uint32_t>(n);
        std::memcpy(prefix.data(), &len, sizeof(len));
      }
      EXPECT_FALSE(DecodeRequest(prefix, Session()).ok()) << OpcodeName(bytes[4]) << " cut to " << n << " bytes";
    }
  }
}

TEST(RequestDecoder, ReplyExpectations) {
  EXPECT_FALSE(OpcodeExpectsReply(FUSE_FORGET));
  EXPECT_FALSE(OpcodeExpectsReply(FUSE_BATCH_FORGET));
  EXPECT_FALSE(OpcodeExpectsReply(FUSE_INTERRUPT));
  EXPECT_TRUE(OpcodeExpectsReply(FUSE_LOOKUP));
  EXPECT_EQ(OpcodeName(FUSE_READDIRPLUS), "READDIRPLUS");
  EXPECT_EQ(OpcodeName(4242), "opcode 4242");
}

}  // namespace
}  // namespace strata::fs::kernel

namespace strata::fs::kernel {
namespace {

TEST(RequestDecoder, EverySampleDecodesAndEncodesBackToItsBytes) {
  std::set<uint32_t> opcodes;
  for (const SampleRequest& s : SampleRequests()) {
    auto r = DecodeRequest(s.bytes, s.options);
    ASSERT_TRUE(r.ok()) << s.name << ": " << r.status().ToString();
    opcodes.insert(r->header.opcode);
    auto again = EncodeRequest(*r, s.options);
    if (r->header.opcode == FUSE_INIT || std::holds_alternative<UnsupportedArgs>(r->args)) {
      EXPECT_FALSE(again.has_value()) << s.name;
      continue;
    }
    ASSERT_TRUE(again.has_value()) << s.name;
    EXPECT_EQ(*again, s.bytes) << s.name;
  }
  // Every opcode the decoder serves has a sample, so the fuzz seeds reach each one.
  for (uint32_t op = 1; op < 64; op++) {
    std::vector<uint8_t> probe = RequestBuilder(op, 2, 1).Bytes();
    auto r = DecodeRequest(probe, Session());
    bool served = !r.ok() || !std::holds_alternative<UnsupportedArgs>(r->args);
    if (served && op != FUSE_INIT) {
      EXPECT_TRUE(opcodes.count(op)) << "no sample of " << OpcodeName(op);
    }
  }
}

}  // namespace
}  // namespace strata::fs::kernel
