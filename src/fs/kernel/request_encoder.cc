// Request bytes from a decoded request (request_encoder.h).
#include "fs/kernel/request_encoder.h"

#include <type_traits>

#include "fs/kernel/request_builder.h"

namespace strata::fs::kernel {

namespace {

std::string_view AsChars(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Appends the body of one kind of arguments; false for those that keep no bytes.
struct BodyEncoder {
  RequestBuilder& b;
  const RequestHeader& h;
  const DecodeOptions& options;

  bool operator()(const UnsupportedArgs&) { return false; }
  bool operator()(const InitArgs&) { return false; }
  bool operator()(const EmptyArgs&) { return true; }
  bool operator()(const ForgetArgs& a) {
    b.Struct(fuse_forget_in{a.nlookup});
    return true;
  }
  bool operator()(const BatchForgetArgs& a) {
    b.Struct(fuse_batch_forget_in{static_cast<uint32_t>(a.items.size()), 0});
    for (const auto& one : a.items) b.Struct(one);
    return true;
  }
  bool operator()(const GetattrArgs& a) { return Fixed(a.in); }
  bool operator()(const SetattrArgs& a) { return Fixed(a.in); }
  bool operator()(const NameArgs& a) {
    b.Name(a.name);
    return true;
  }
  bool operator()(const MknodArgs& a) { return StructAndName(a.in, a.name); }
  bool operator()(const MkdirArgs& a) { return StructAndName(a.in, a.name); }
  bool operator()(const SymlinkArgs& a) {
    b.Name(a.name).Name(a.target);
    return true;
  }
  bool operator()(const RenameArgs& a) {
    if (h.opcode == FUSE_RENAME2)
      b.Struct(fuse_rename2_in{a.newdir, a.flags, 0});
    else
      b.Struct(fuse_rename_in{a.newdir});
    b.Name(a.old_name).Name(a.new_name);
    return true;
  }
  bool operator()(const LinkArgs& a) {
    b.Struct(fuse_link_in{a.oldnodeid}).Name(a.new_name);
    return true;
  }
  bool operator()(const OpenArgs& a) { return Fixed(a.in); }
  bool operator()(const ReadArgs& a) { return Fixed(a.in); }
  bool operator()(const WriteArgs& a) {
    b.Struct(a.in).Raw(AsChars(a.data));
    return true;
  }
  bool operator()(const ReleaseArgs& a) { return Fixed(a.in); }
  bool operator()(const FsyncArgs& a) { return Fixed(a.in); }
  bool operator()(const FlushArgs& a) { return Fixed(a.in); }
  bool operator()(const SetxattrArgs& a) {
    fuse_setxattr_in in{static_cast<uint32_t>(a.value.size()), a.flags, a.setxattr_flags, 0};
    size_t size = options.setxattr_ext ? sizeof(in) : kSetxattrInCompatSize;
    b.Raw(std::string_view(reinterpret_cast<const char*>(&in), size)).Name(a.name).Raw(AsChars(a.value));
    return true;
  }
  bool operator()(const GetxattrArgs& a) {
    b.Struct(fuse_getxattr_in{a.size, 0});
    if (h.opcode == FUSE_GETXATTR) b.Name(a.name);
    return true;
  }
  bool operator()(const RemovexattrArgs& a) {
    b.Name(a.name);
    return true;
  }
  bool operator()(const CreateArgs& a) { return StructAndName(a.in, a.name); }
  bool operator()(const InterruptArgs& a) {
    b.Struct(fuse_interrupt_in{a.unique});
    return true;
  }
  bool operator()(const FallocateArgs& a) { return Fixed(a.in); }
  bool operator()(const CopyFileRangeArgs& a) { return Fixed(a.in); }
  bool operator()(const LseekArgs& a) { return Fixed(a.in); }

  template <typename T>
  bool StructAndName(const T& in, std::string_view name) {
    b.Struct(in).Name(name);
    return true;
  }
  template <typename T>
  bool Fixed(const T& in) {
    b.Struct(in);
    return true;
  }
};

}  // namespace

std::optional<std::vector<uint8_t>> EncodeRequest(const Request& request, const DecodeOptions& options) {
  const RequestHeader& h = request.header;
  RequestBuilder b(h.opcode, h.unique, h.nodeid);
  b.header().uid = h.uid;
  b.header().gid = h.gid;
  b.header().pid = h.pid;
  if (!std::visit(BodyEncoder{b, h, options}, request.args)) return std::nullopt;
  return b.Bytes();
}

}  // namespace strata::fs::kernel
