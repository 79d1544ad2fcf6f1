// The kernel's FUSE protocol as strata speaks it: Debian 12's <linux/fuse.h>
// (protocol 7.38) plus what later minors added that strata uses, each with the
// minor it came from. The additions are written from the protocol's documented
// layout; a static_assert pins every size the kernel checks.
//
// Only this header includes <linux/fuse.h>; the rest of src/fs/kernel/ names
// the protocol through it, so a newer system header (which would define the
// same things) changes nothing: every addition is ours, in our namespace.
#pragma once

#include <linux/fuse.h>
#include <sys/ioctl.h>

#include <cstdint>

namespace strata::fs::kernel {

// The protocol this code was written against, and the oldest it accepts.
// 7.31 (Linux 5.4) has everything the decoder relies on: the full-size
// request structs (umask in mknod/mkdir/create, the 7.9 getattr/read/write
// fields) and interrupt ids marked by their low bit.
inline constexpr uint32_t kProtocolMajor = 7;
inline constexpr uint32_t kProtocolMinor = 44;
inline constexpr uint32_t kOldestMinor = 31;

// INIT flags of later minors (bits 32..63 travel in flags2).
inline constexpr uint64_t kInitDirectIoAllowMmap = 1ULL << 36;  // 7.39
inline constexpr uint64_t kInitPassthrough = 1ULL << 37;         // 7.40
inline constexpr uint64_t kInitNoExportSupport = 1ULL << 38;     // 7.40
inline constexpr uint64_t kInitHasResend = 1ULL << 39;           // 7.40
inline constexpr uint64_t kInitAllowIdmap = 1ULL << 40;          // 7.40
inline constexpr uint64_t kInitOverIoUring = 1ULL << 41;         // 7.42
inline constexpr uint64_t kInitRequestTimeout = 1ULL << 42;      // 7.43

// OPEN reply flag: reads and writes of this open go to the backing file whose
// id is in OpenOut::backing_id (7.40).
inline constexpr uint32_t kOpenPassthrough = 1u << 7;

// Opcodes after 7.38 (strata answers them ENOSYS for now).
inline constexpr uint32_t kOpStatx = 52;  // 7.39

// Notification codes after 7.38.
inline constexpr int32_t kNotifyResend = 7;    // 7.40
inline constexpr int32_t kNotifyIncEpoch = 8;  // 7.44

// The low bit of an INTERRUPT's own unique id; the request it names has the
// same id with the bit clear (ordinary requests advance in steps of two).
inline constexpr uint64_t kInterruptIdBit = 1;

// fuse_init_out as of 7.43: 7.40 turned the first spare word into
// max_stack_depth (how deep passthrough backing files may stack), 7.43 the
// next half-word into request_timeout (seconds; 0 = none).
struct InitOut {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint16_t max_background;
  uint16_t congestion_threshold;
  uint32_t max_write;
  uint32_t time_gran;
  uint16_t max_pages;
  uint16_t map_alignment;
  uint32_t flags2;
  uint32_t max_stack_depth;
  uint16_t request_timeout;
  uint16_t unused[11];
};
static_assert(sizeof(InitOut) == sizeof(fuse_init_out), "INIT reply keeps its 7.23 size");

// fuse_open_out as of 7.40: the padding word became the passthrough backing id.
struct OpenOut {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
};
static_assert(sizeof(OpenOut) == sizeof(fuse_open_out));

// The argument of FUSE_DEV_IOC_BACKING_OPEN (7.40): an fd of the backing file.
struct BackingMap {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
static_assert(sizeof(BackingMap) == 16);
inline constexpr unsigned long kDevIocBackingOpen = _IOW(FUSE_DEV_IOC_MAGIC, 1, BackingMap);
inline constexpr unsigned long kDevIocBackingClose = _IOW(FUSE_DEV_IOC_MAGIC, 2, uint32_t);

// FUSE over io_uring (7.42). After INIT agreed kInitOverIoUring, the daemon
// submits IORING_OP_URING_CMD on the /dev/fuse fd, from a ring set up with
// IORING_SETUP_SQE128; sqe->cmd_op is one of these commands, and the SQE's
// command area holds a UringCmdReq.
inline constexpr uint32_t kUringCmdRegister = 1;        // give the kernel an entry (header and payload buffers)
inline constexpr uint32_t kUringCmdCommitAndFetch = 2;  // answer the entry's request and wait for the next

// The command area of a ring SQE: which queue (one per possible CPU) and,
// for COMMIT_AND_FETCH, the commit id the kernel gave with the request.
struct UringCmdReq {
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};
static_assert(sizeof(UringCmdReq) == 24);

// Kept by the kernel in the entry's header buffer beside each request: the
// id to commit the answer under, and how many payload bytes came (or, in an
// answer, go back).
struct UringEntInOut {
  uint64_t flags;
  uint64_t commit_id;
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};
static_assert(sizeof(UringEntInOut) == 32);

// The header buffer of one ring entry (the first of the two iovecs at
// sqe->addr; the second is the payload). A request comes as its
// fuse_in_header in in_out, the opcode's fixed struct in op_in and the rest
// (names, write data) in the payload; an answer goes as its fuse_out_header
// in in_out and its whole body in the payload.
inline constexpr size_t kUringInOutHeaderBytes = 128;
inline constexpr size_t kUringOpInBytes = 128;
struct UringReqHeader {
  uint8_t in_out[kUringInOutHeaderBytes];
  uint8_t op_in[kUringOpInBytes];
  UringEntInOut ring_ent_in_out;
};
static_assert(sizeof(UringReqHeader) == 288);

// Sizes the kernel and strata agree on for the structs used unchanged.
static_assert(sizeof(fuse_in_header) == 40);
static_assert(sizeof(fuse_out_header) == 16);
static_assert(sizeof(fuse_init_in) == 64);
static_assert(sizeof(fuse_entry_out) == 128);
static_assert(sizeof(fuse_attr_out) == 104);
static_assert(sizeof(fuse_setxattr_in) == 16);
// Before FUSE_SETXATTR_EXT is agreed, SETXATTR carries only size and flags.
inline constexpr size_t kSetxattrInCompatSize = 8;

}  // namespace strata::fs::kernel
