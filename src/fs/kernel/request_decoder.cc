// The strict decoder of one /dev/fuse request (request.h). Each opcode reads
// its fixed struct, its trailing names or payload, and then requires the
// buffer to end there: the kernel sends exact lengths, so anything else is a
// request strata does not understand and refuses rather than guesses at.
#include <string>

#include "fs/kernel/request.h"
#include "fs/kernel/wire_reader.h"

namespace strata::fs::kernel {

namespace {

// Whether a request for this opcode names an inode (nodeid != 0). INIT,
// DESTROY, INTERRUPT and BATCH_FORGET are about the session, not one inode.
bool NeedsNode(uint32_t opcode) {
  return opcode != FUSE_INIT && opcode != FUSE_DESTROY && opcode != FUSE_INTERRUPT && opcode != FUSE_BATCH_FORGET;
}

// The kernel zeroes the padding of the structs whose fields the decoder takes
// apart (the others are kept whole); anything else there is refused, so that
// each request has one encoding.
Status ZeroPadding(const WireReader& r, uint32_t padding) {
  return padding == 0 ? Status::Ok() : r.Invalid("padding is not zero");
}

template <typename Args, typename In>
Result<RequestArgs> FixedOnly(WireReader& r, const char* what) {
  STRATA_ASSIGN_OR_RETURN(In in, r.Struct<In>(what));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(Args{in});
}

template <typename Args>
Result<RequestArgs> OneName(WireReader& r) {
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("name", kMaxNameBytes, true));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(Args{name});
}

Result<RequestArgs> DecodeInit(WireReader& r) {
  // Kernels before 7.36 send the 16-byte struct (no flags2, no spare words).
  constexpr size_t kShortInit = 16;
  size_t size = r.remaining() >= sizeof(fuse_init_in) ? sizeof(fuse_init_in) : kShortInit;
  STRATA_ASSIGN_OR_RETURN(fuse_init_in in, r.PrefixOf<fuse_init_in>(size, "fuse_init_in"));
  STRATA_RETURN_IF_ERROR(r.End());
  InitArgs args{in.major, in.minor, in.max_readahead, in.flags};
  if (size == sizeof(fuse_init_in) && (in.flags & FUSE_INIT_EXT)) args.flags |= uint64_t{in.flags2} << 32;
  return RequestArgs(args);
}

Result<RequestArgs> DecodeBatchForget(WireReader& r) {
  STRATA_ASSIGN_OR_RETURN(fuse_batch_forget_in in, r.Struct<fuse_batch_forget_in>("fuse_batch_forget_in"));
  STRATA_RETURN_IF_ERROR(ZeroPadding(r, in.dummy));
  // The count is checked against the bytes present before anything is
  // reserved, so a hostile count cannot make us allocate.
  if (in.count != r.remaining() / sizeof(fuse_forget_one) || r.remaining() % sizeof(fuse_forget_one) != 0)
    return r.Invalid("count " + std::to_string(in.count) + " does not match " + std::to_string(r.remaining()) +
                     " bytes of entries");
  BatchForgetArgs args;
  args.items.reserve(in.count);
  for (uint32_t i = 0; i < in.count; i++) {
    STRATA_ASSIGN_OR_RETURN(fuse_forget_one one, r.Struct<fuse_forget_one>("fuse_forget_one"));
    if (one.nodeid == 0) return r.Invalid("forget of node 0");
    args.items.push_back(one);
  }
  return RequestArgs(std::move(args));
}

Result<RequestArgs> DecodeSymlink(WireReader& r) {
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("name", kMaxNameBytes, true));
  STRATA_ASSIGN_OR_RETURN(std::string_view target, r.CString("target", kMaxSymlinkBytes, false));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(SymlinkArgs{name, target});
}

Result<RequestArgs> DecodeRename(WireReader& r, bool rename2) {
  RenameArgs args;
  if (rename2) {
    STRATA_ASSIGN_OR_RETURN(fuse_rename2_in in, r.Struct<fuse_rename2_in>("fuse_rename2_in"));
    STRATA_RETURN_IF_ERROR(ZeroPadding(r, in.padding));
    args.newdir = in.newdir;
    args.flags = in.flags;
  } else {
    STRATA_ASSIGN_OR_RETURN(fuse_rename_in in, r.Struct<fuse_rename_in>("fuse_rename_in"));
    args.newdir = in.newdir;
  }
  if (args.newdir == 0) return r.Invalid("rename into node 0");
  STRATA_ASSIGN_OR_RETURN(args.old_name, r.CString("old name", kMaxNameBytes, true));
  STRATA_ASSIGN_OR_RETURN(args.new_name, r.CString("new name", kMaxNameBytes, true));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(args);
}

Result<RequestArgs> DecodeLink(WireReader& r) {
  STRATA_ASSIGN_OR_RETURN(fuse_link_in in, r.Struct<fuse_link_in>("fuse_link_in"));
  if (in.oldnodeid == 0) return r.Invalid("link of node 0");
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("new name", kMaxNameBytes, true));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(LinkArgs{in.oldnodeid, name});
}

template <typename Args, typename In>
Result<RequestArgs> StructAndName(WireReader& r, const char* what) {
  STRATA_ASSIGN_OR_RETURN(In in, r.Struct<In>(what));
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("name", kMaxNameBytes, true));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(Args{in, name});
}

Result<RequestArgs> DecodeWrite(WireReader& r, const DecodeOptions& options) {
  STRATA_ASSIGN_OR_RETURN(fuse_write_in in, r.Struct<fuse_write_in>("fuse_write_in"));
  if (in.size > options.max_write)
    return r.Invalid("write of " + std::to_string(in.size) + " bytes, more than max_write " +
                     std::to_string(options.max_write));
  if (r.remaining() != in.size)
    return r.Invalid("write says " + std::to_string(in.size) + " bytes but carries " + std::to_string(r.remaining()));
  STRATA_ASSIGN_OR_RETURN(auto data, r.Bytes(in.size, "write payload"));
  return RequestArgs(WriteArgs{in, data});
}

Result<RequestArgs> DecodeSetxattr(WireReader& r, const DecodeOptions& options) {
  size_t size = options.setxattr_ext ? sizeof(fuse_setxattr_in) : kSetxattrInCompatSize;
  STRATA_ASSIGN_OR_RETURN(fuse_setxattr_in in, r.PrefixOf<fuse_setxattr_in>(size, "fuse_setxattr_in"));
  STRATA_RETURN_IF_ERROR(ZeroPadding(r, in.padding));
  if (in.size > kMaxXattrValueBytes) return r.Invalid("xattr value of " + std::to_string(in.size) + " bytes");
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("xattr name", kMaxXattrNameBytes, false));
  if (r.remaining() != in.size)
    return r.Invalid("xattr value says " + std::to_string(in.size) + " bytes but carries " +
                     std::to_string(r.remaining()));
  STRATA_ASSIGN_OR_RETURN(auto value, r.Bytes(in.size, "xattr value"));
  return RequestArgs(SetxattrArgs{in.flags, in.setxattr_flags, name, value});
}

Result<RequestArgs> DecodeGetxattr(WireReader& r, bool with_name) {
  STRATA_ASSIGN_OR_RETURN(fuse_getxattr_in in, r.Struct<fuse_getxattr_in>("fuse_getxattr_in"));
  STRATA_RETURN_IF_ERROR(ZeroPadding(r, in.padding));
  GetxattrArgs args{in.size, {}};
  if (with_name) {
    STRATA_ASSIGN_OR_RETURN(args.name, r.CString("xattr name", kMaxXattrNameBytes, false));
  }
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(args);
}

Result<RequestArgs> DecodeRemovexattr(WireReader& r) {
  STRATA_ASSIGN_OR_RETURN(std::string_view name, r.CString("xattr name", kMaxXattrNameBytes, false));
  STRATA_RETURN_IF_ERROR(r.End());
  return RequestArgs(RemovexattrArgs{name});
}

Result<RequestArgs> DecodeInterrupt(WireReader& r, const RequestHeader& h) {
  STRATA_ASSIGN_OR_RETURN(fuse_interrupt_in in, r.Struct<fuse_interrupt_in>("fuse_interrupt_in"));
  STRATA_RETURN_IF_ERROR(r.End());
  // The kernel names the request by its id and marks its own with the low bit.
  if ((h.unique & kInterruptIdBit) == 0 || in.unique != (h.unique & ~kInterruptIdBit))
    return r.Invalid("interrupt id " + std::to_string(h.unique) + " does not match its target " +
                     std::to_string(in.unique));
  return RequestArgs(InterruptArgs{in.unique});
}

Result<RequestArgs> DecodeBody(WireReader& r, const RequestHeader& h, const DecodeOptions& o) {
  switch (h.opcode) {
    case FUSE_INIT: return DecodeInit(r);
    case FUSE_DESTROY:
    case FUSE_STATFS:
    case FUSE_READLINK:
      STRATA_RETURN_IF_ERROR(r.End());
      return RequestArgs(EmptyArgs{});
    case FUSE_LOOKUP:
    case FUSE_UNLINK:
    case FUSE_RMDIR: return OneName<NameArgs>(r);
    case FUSE_FORGET: {
      STRATA_ASSIGN_OR_RETURN(fuse_forget_in in, r.Struct<fuse_forget_in>("fuse_forget_in"));
      STRATA_RETURN_IF_ERROR(r.End());
      return RequestArgs(ForgetArgs{in.nlookup});
    }
    case FUSE_BATCH_FORGET: return DecodeBatchForget(r);
    case FUSE_GETATTR: return FixedOnly<GetattrArgs, fuse_getattr_in>(r, "fuse_getattr_in");
    case FUSE_SETATTR: return FixedOnly<SetattrArgs, fuse_setattr_in>(r, "fuse_setattr_in");
    case FUSE_MKNOD: return StructAndName<MknodArgs, fuse_mknod_in>(r, "fuse_mknod_in");
    case FUSE_MKDIR: return StructAndName<MkdirArgs, fuse_mkdir_in>(r, "fuse_mkdir_in");
    case FUSE_CREATE: return StructAndName<CreateArgs, fuse_create_in>(r, "fuse_create_in");
    case FUSE_SYMLINK: return DecodeSymlink(r);
    case FUSE_RENAME: return DecodeRename(r, false);
    case FUSE_RENAME2: return DecodeRename(r, true);
    case FUSE_LINK: return DecodeLink(r);
    case FUSE_OPEN:
    case FUSE_OPENDIR: return FixedOnly<OpenArgs, fuse_open_in>(r, "fuse_open_in");
    case FUSE_READ:
    case FUSE_READDIR:
    case FUSE_READDIRPLUS: return FixedOnly<ReadArgs, fuse_read_in>(r, "fuse_read_in");
    case FUSE_WRITE: return DecodeWrite(r, o);
    case FUSE_RELEASE:
    case FUSE_RELEASEDIR: return FixedOnly<ReleaseArgs, fuse_release_in>(r, "fuse_release_in");
    case FUSE_FSYNC:
    case FUSE_FSYNCDIR: return FixedOnly<FsyncArgs, fuse_fsync_in>(r, "fuse_fsync_in");
    case FUSE_FLUSH: return FixedOnly<FlushArgs, fuse_flush_in>(r, "fuse_flush_in");
    case FUSE_SETXATTR: return DecodeSetxattr(r, o);
    case FUSE_GETXATTR: return DecodeGetxattr(r, true);
    case FUSE_LISTXATTR: return DecodeGetxattr(r, false);
    case FUSE_REMOVEXATTR: return DecodeRemovexattr(r);
    case FUSE_INTERRUPT: return DecodeInterrupt(r, h);
    case FUSE_FALLOCATE: return FixedOnly<FallocateArgs, fuse_fallocate_in>(r, "fuse_fallocate_in");
    case FUSE_COPY_FILE_RANGE:
      return FixedOnly<CopyFileRangeArgs, fuse_copy_file_range_in>(r, "fuse_copy_file_range_in");
    case FUSE_LSEEK: return FixedOnly<LseekArgs, fuse_lseek_in>(r, "fuse_lseek_in");
    default: return RequestArgs(UnsupportedArgs{});
  }
}

}  // namespace

Result<RequestHeader> DecodeHeader(std::span<const uint8_t> buffer) {
  WireReader r(buffer, "FUSE request");
  STRATA_ASSIGN_OR_RETURN(fuse_in_header in, r.Struct<fuse_in_header>("fuse_in_header"));
  if (in.len != buffer.size())
    return r.Invalid("header says " + std::to_string(in.len) + " bytes, read " + std::to_string(buffer.size()));
  // Extensions (security context, supplementary group) come only when the
  // INIT reply asks for them, and strata never does.
  if (in.total_extlen != 0) return r.Invalid("carries extensions strata did not ask for");
  if (in.padding != 0) return r.Invalid("header padding is not zero");
  if (in.unique == 0) return r.Invalid("unique id 0 (reserved for notifications)");
  if (in.opcode != FUSE_INTERRUPT && (in.unique & kInterruptIdBit) != 0)
    return r.Invalid("unique id " + std::to_string(in.unique) + " has the interrupt bit");
  if (NeedsNode(in.opcode) && in.nodeid == 0) return r.Invalid(OpcodeName(in.opcode) + " of node 0");
  return RequestHeader{in.opcode, in.unique, in.nodeid, in.uid, in.gid, in.pid};
}

Result<Request> DecodeRequest(std::span<const uint8_t> buffer, const DecodeOptions& options) {
  STRATA_ASSIGN_OR_RETURN(RequestHeader header, DecodeHeader(buffer));
  WireReader r(buffer.subspan(sizeof(fuse_in_header)), OpcodeName(header.opcode) + " request");
  if (options.minor == 0 && header.opcode != FUSE_INIT) return r.Invalid("arrived before INIT");
  if (options.minor != 0 && header.opcode == FUSE_INIT) return r.Invalid("a second INIT");
  STRATA_ASSIGN_OR_RETURN(RequestArgs args, DecodeBody(r, header, options));
  return Request{header, std::move(args)};
}

bool OpcodeExpectsReply(uint32_t opcode) {
  return opcode != FUSE_FORGET && opcode != FUSE_BATCH_FORGET && opcode != FUSE_INTERRUPT;
}

}  // namespace strata::fs::kernel
