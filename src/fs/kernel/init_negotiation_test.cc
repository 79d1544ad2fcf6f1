#include <gtest/gtest.h>

#include <cstring>

#include "fs/kernel/init_negotiation.h"

namespace strata::fs::kernel {
namespace {

// A kernel like this machine's: 7.44, offering passthrough and io_uring.
InitArgs NewKernel() {
  InitArgs k;
  k.major = 7;
  k.minor = 44;
  k.max_readahead = 128 << 10;
  k.flags = FUSE_ASYNC_READ | FUSE_EXPORT_SUPPORT | FUSE_DO_READDIRPLUS | FUSE_WRITEBACK_CACHE |
            FUSE_NO_OPEN_SUPPORT | FUSE_NO_OPENDIR_SUPPORT | FUSE_MAX_PAGES | FUSE_POSIX_ACL | FUSE_DONT_MASK |
            FUSE_INIT_EXT | kInitPassthrough | kInitOverIoUring;
  return k;
}

InitOut ReplyOf(const InitOutcome& o) {
  InitOut out{};
  EXPECT_EQ(o.reply.size(), sizeof(fuse_out_header) + sizeof(InitOut));
  fuse_out_header h{};
  std::memcpy(&h, o.reply.data(), sizeof(h));
  EXPECT_EQ(h.len, o.reply.size());
  EXPECT_EQ(h.error, 0);
  std::memcpy(&out, o.reply.data() + sizeof(h), sizeof(out));
  return out;
}

TEST(InitNegotiation, AgreesOnWhatBothSidesHave) {
  InitWants w;
  w.flags = FUSE_ASYNC_READ | FUSE_EXPORT_SUPPORT | FUSE_DO_READDIRPLUS | FUSE_CACHE_SYMLINKS;
  w.max_write = 1 << 20;
  w.max_pages = 256;
  w.max_readahead = 1 << 20;
  auto o = NegotiateInit(2, NewKernel(), w);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_TRUE(o->settings.has_value());
  const SessionSettings& s = *o->settings;
  EXPECT_EQ(s.minor, 44u);
  // CACHE_SYMLINKS is wanted but not offered; MAX_PAGES comes with max_pages.
  EXPECT_EQ(s.flags, FUSE_ASYNC_READ | FUSE_EXPORT_SUPPORT | FUSE_DO_READDIRPLUS | FUSE_MAX_PAGES);
  EXPECT_FALSE(s.passthrough);
  EXPECT_FALSE(s.io_uring);
  EXPECT_TRUE(s.may_skip_open);
  EXPECT_TRUE(s.may_skip_opendir);
  EXPECT_EQ(s.max_readahead, 128u << 10);  // the kernel's bound wins
  EXPECT_EQ(s.max_pages, 256u);
  EXPECT_GE(s.request_buffer_bytes, (1u << 20) + sizeof(fuse_in_header) + sizeof(fuse_write_in));
  InitOut out = ReplyOf(*o);
  EXPECT_EQ(out.major, 7u);
  EXPECT_EQ(out.minor, 44u);
  EXPECT_EQ(out.flags, static_cast<uint32_t>(s.flags));
  EXPECT_EQ(out.flags2, 0u);
  EXPECT_EQ(out.max_write, 1u << 20);
  EXPECT_EQ(out.max_pages, 256u);
  EXPECT_EQ(out.max_readahead, 128u << 10);
  EXPECT_EQ(out.time_gran, 1u);
  EXPECT_EQ(out.max_stack_depth, 0u);
  DecodeOptions d = s.decode_options();
  EXPECT_EQ(d.minor, 44u);
  EXPECT_EQ(d.max_write, 1u << 20);
  EXPECT_FALSE(d.setxattr_ext);
}

TEST(InitNegotiation, PassthroughAndIoUringWhenOfferedTravelInFlags2) {
  InitWants w;
  w.flags = FUSE_ASYNC_READ;
  w.passthrough = true;
  w.max_stack_depth = 2;
  w.io_uring = true;
  auto o = NegotiateInit(2, NewKernel(), w);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  const SessionSettings& s = *o->settings;
  EXPECT_TRUE(s.passthrough);
  EXPECT_TRUE(s.io_uring);
  EXPECT_FALSE(s.may_skip_open) << "passthrough needs every OPEN";
  EXPECT_EQ(s.max_stack_depth, 2u);
  InitOut out = ReplyOf(*o);
  EXPECT_TRUE(out.flags & FUSE_INIT_EXT) << "flags2 is read only with INIT_EXT";
  EXPECT_EQ(out.flags2, static_cast<uint32_t>((kInitPassthrough | kInitOverIoUring) >> 32));
  EXPECT_EQ(out.max_stack_depth, 2u);
}

TEST(InitNegotiation, NotOfferedMeansNotUsed) {
  InitArgs k = NewKernel();
  k.flags &= ~(kInitPassthrough | kInitOverIoUring);  // enable_uring off, no CONFIG_FUSE_PASSTHROUGH
  InitWants w;
  w.passthrough = true;
  w.io_uring = true;
  auto o = NegotiateInit(2, k, w);
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->settings->passthrough);
  EXPECT_FALSE(o->settings->io_uring);
  EXPECT_EQ(ReplyOf(*o).flags2, 0u);
  EXPECT_EQ(ReplyOf(*o).max_stack_depth, 0u);
}

TEST(InitNegotiation, OlderMinorsDropWhatTheyCannotCarry) {
  // Debian 12's own kernel (6.1) speaks 7.38: flags2 but no passthrough.
  InitArgs k = NewKernel();
  k.minor = 38;
  InitWants w;
  w.passthrough = true;
  w.io_uring = true;
  auto o = NegotiateInit(2, k, w);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->settings->minor, 38u);
  EXPECT_FALSE(o->settings->passthrough) << "a 7.38 kernel's bit 37 means nothing";
  EXPECT_FALSE(o->settings->io_uring);
  EXPECT_EQ(ReplyOf(*o).minor, 38u);

  // Before 7.36 there is no flags2 at all.
  k.minor = 33;
  k.flags |= FUSE_SECURITY_CTX;
  InitWants ctx;
  ctx.flags = FUSE_SECURITY_CTX;
  auto old = NegotiateInit(2, k, ctx);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->settings->flags & ~uint64_t{FUSE_MAX_PAGES}, 0u);
  EXPECT_FALSE(ReplyOf(*old).flags & FUSE_INIT_EXT);

  // A newer kernel than this code: we speak our minor.
  k = NewKernel();
  k.minor = 99;
  auto newer = NegotiateInit(2, k, InitWants{});
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(newer->settings->minor, kProtocolMinor);
}

TEST(InitNegotiation, MaxPagesOnlyWithTheFlag) {
  InitArgs k = NewKernel();
  k.flags &= ~uint64_t{FUSE_MAX_PAGES};
  InitWants w;
  w.max_pages = 256;
  auto o = NegotiateInit(2, k, w);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->settings->max_pages, 32u);
  EXPECT_FALSE(o->settings->flags & FUSE_MAX_PAGES);
}

TEST(InitNegotiation, MajorVersions) {
  InitArgs k = NewKernel();
  k.major = 8;
  auto newer = NegotiateInit(2, k, InitWants{});
  ASSERT_TRUE(newer.ok());
  EXPECT_FALSE(newer->settings.has_value()) << "wait for the kernel's INIT at major 7";
  EXPECT_EQ(ReplyOf(*newer).major, 7u);

  k.major = 6;
  auto older = NegotiateInit(2, k, InitWants{});
  ASSERT_FALSE(older.ok());
  EXPECT_EQ(older.status().code(), Status::Code::kUnsupported);

  k = NewKernel();
  k.minor = kOldestMinor - 1;
  auto too_old = NegotiateInit(2, k, InitWants{});
  ASSERT_FALSE(too_old.ok());
  EXPECT_NE(too_old.status().message().find("7.30"), std::string::npos);
}

TEST(InitNegotiation, ImpossibleWantsAreRefused) {
  InitWants both;
  both.passthrough = true;
  both.flags = FUSE_WRITEBACK_CACHE;
  EXPECT_EQ(NegotiateInit(2, NewKernel(), both).status().code(), Status::Code::kInvalidArgument);
  InitWants deep;
  deep.passthrough = true;
  deep.max_stack_depth = 3;
  EXPECT_FALSE(NegotiateInit(2, NewKernel(), deep).ok());
  InitWants small;
  small.max_write = 100;
  EXPECT_FALSE(NegotiateInit(2, NewKernel(), small).ok());
  InitWants raw_bit;
  raw_bit.flags = kInitPassthrough;
  EXPECT_FALSE(NegotiateInit(2, NewKernel(), raw_bit).ok());
  InitWants pages;
  pages.max_pages = 0;
  EXPECT_FALSE(NegotiateInit(2, NewKernel(), pages).ok());
}

TEST(InitNegotiation, SetxattrExtReachesTheDecoder) {
  InitArgs k = NewKernel();
  k.flags |= FUSE_SETXATTR_EXT;
  InitWants w;
  w.flags = FUSE_SETXATTR_EXT;
  auto o = NegotiateInit(2, k, w);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->settings->decode_options().setxattr_ext);
}

}  // namespace
}  // namespace strata::fs::kernel
