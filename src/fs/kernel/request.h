// One request read from /dev/fuse, decoded strictly.
//
// The kernel writes each request as a fuse_in_header, the opcode's fixed
// struct, then (for some opcodes) NUL-terminated names or a write's payload.
// DecodeRequest checks every length against the buffer before it reads, so
// any bytes at all either decode or give an InvalidArgument naming what is
// wrong; it never reads outside the buffer. Names and payloads are views into
// the buffer: REQUIRES the buffer to outlive the Request.
//
// Opcodes strata does not serve decode to UnsupportedArgs (the caller answers
// ENOSYS), as long as the header itself is sound.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fs/kernel/fuse_abi.h"
#include "util/status.h"

namespace strata::fs::kernel {

struct RequestHeader {
  uint32_t opcode = 0;
  uint64_t unique = 0;
  uint64_t nodeid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
};

// What the session has agreed so far; it changes how some bodies decode.
struct DecodeOptions {
  uint32_t minor = 0;          // 0 until INIT is answered: only INIT may come
  bool setxattr_ext = false;   // FUSE_SETXATTR_EXT agreed: SETXATTR's struct is 16 bytes
  uint32_t max_write = 1u << 20;  // the largest WRITE payload accepted
};

// Bounds on the trailing strings, as the kernel's own limits.
inline constexpr size_t kMaxNameBytes = 1024;      // an entry name (the kernel's FUSE_NAME_MAX)
inline constexpr size_t kMaxSymlinkBytes = 4095;   // a symlink target (PATH_MAX less the NUL)
inline constexpr size_t kMaxXattrNameBytes = 255;  // XATTR_NAME_MAX
inline constexpr size_t kMaxXattrValueBytes = 65536;  // XATTR_SIZE_MAX

struct InitArgs {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t max_readahead = 0;
  uint64_t flags = 0;  // flags | flags2 << 32 (flags2 only when FUSE_INIT_EXT is set)
};
struct EmptyArgs {};  // DESTROY, STATFS, READLINK
struct ForgetArgs {
  uint64_t nlookup = 0;
};
struct BatchForgetArgs {
  std::vector<fuse_forget_one> items;
};
struct GetattrArgs {
  fuse_getattr_in in{};
};
struct SetattrArgs {
  fuse_setattr_in in{};
};
struct NameArgs {  // LOOKUP, UNLINK, RMDIR: an entry name
  std::string_view name;
};
struct RemovexattrArgs {  // an xattr name ('/' is allowed there)
  std::string_view name;
};
struct MknodArgs {
  fuse_mknod_in in{};
  std::string_view name;
};
struct MkdirArgs {
  fuse_mkdir_in in{};
  std::string_view name;
};
struct SymlinkArgs {
  std::string_view name;
  std::string_view target;
};
struct RenameArgs {  // RENAME (flags 0) and RENAME2
  uint64_t newdir = 0;
  uint32_t flags = 0;
  std::string_view old_name;
  std::string_view new_name;
};
struct LinkArgs {
  uint64_t oldnodeid = 0;
  std::string_view new_name;
};
struct OpenArgs {  // OPEN, OPENDIR
  fuse_open_in in{};
};
struct ReadArgs {  // READ, READDIR, READDIRPLUS
  fuse_read_in in{};
};
struct WriteArgs {
  fuse_write_in in{};
  std::span<const uint8_t> data;  // exactly in.size bytes
};
struct ReleaseArgs {  // RELEASE, RELEASEDIR
  fuse_release_in in{};
};
struct FsyncArgs {  // FSYNC, FSYNCDIR
  fuse_fsync_in in{};
};
struct FlushArgs {
  fuse_flush_in in{};
};
struct SetxattrArgs {
  uint32_t flags = 0;
  uint32_t setxattr_flags = 0;  // 0 unless FUSE_SETXATTR_EXT is agreed
  std::string_view name;
  std::span<const uint8_t> value;
};
struct GetxattrArgs {  // GETXATTR (with a name) and LISTXATTR (name empty)
  uint32_t size = 0;
  std::string_view name;
};
struct CreateArgs {
  fuse_create_in in{};
  std::string_view name;
};
struct InterruptArgs {
  uint64_t unique = 0;  // the request to interrupt
};
struct FallocateArgs {
  fuse_fallocate_in in{};
};
struct CopyFileRangeArgs {
  fuse_copy_file_range_in in{};
};
struct LseekArgs {
  fuse_lseek_in in{};
};
struct UnsupportedArgs {};  // an opcode strata does not serve: answer ENOSYS

using RequestArgs =
    std::variant<UnsupportedArgs, InitArgs, EmptyArgs, ForgetArgs, BatchForgetArgs, GetattrArgs, SetattrArgs, NameArgs,
                 MknodArgs, MkdirArgs, SymlinkArgs, RenameArgs, LinkArgs, OpenArgs, ReadArgs, WriteArgs, ReleaseArgs,
                 FsyncArgs, FlushArgs, SetxattrArgs, GetxattrArgs, RemovexattrArgs, CreateArgs, InterruptArgs, FallocateArgs,
                 CopyFileRangeArgs, LseekArgs>;

struct Request {
  RequestHeader header;
  RequestArgs args;
};

// The header alone, so that a request whose body is refused can still be
// answered (with EINVAL) under its unique id. Checks the header's own length
// field against the buffer: a read from /dev/fuse returns exactly one request.
Result<RequestHeader> DecodeHeader(std::span<const uint8_t> buffer);

// The whole request. REQUIRES: buffer outlives the result.
Result<Request> DecodeRequest(std::span<const uint8_t> buffer, const DecodeOptions& options);

// Whether the kernel waits for an answer to this opcode (FORGET and
// BATCH_FORGET get none; an INTERRUPT gets one only in special cases).
bool OpcodeExpectsReply(uint32_t opcode);

// A name for logs and errors ("LOOKUP", "opcode 4242").
std::string OpcodeName(uint32_t opcode);

}  // namespace strata::fs::kernel
