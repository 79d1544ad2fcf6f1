// A request as read from /dev/fuse. The first byte picks what the session
// has agreed: bit 0 a session past INIT (protocol 7.44; else none yet), bit 1
// FUSE_SETXATTR_EXT, bit 2 a max_write of one page. The rest is the request.
// Any bytes are refused with InvalidArgument or decode to a request whose
// names and payloads lie inside the input, whose names are non-empty and
// bounded, free of '/' (entry names) and NUL, and that encodes back to
// exactly the input (the one encoding of a request), INIT and unserved
// opcodes aside, which keep no bytes to re-encode.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "fs/kernel/request.h"
#include "fs/kernel/request_encoder.h"

namespace {

namespace k = strata::fs::kernel;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

struct Bounds {
  const uint8_t* begin;
  const uint8_t* end;

  void Inside(const void* p, size_t n) const {
    auto* b = static_cast<const uint8_t*>(p);
    if (n > 0 && (b < begin || b + n > end)) Fail("a view points outside the request");
  }
  void Name(std::string_view s, size_t max, bool entry) const {
    if (s.empty() || s.size() > max) Fail("a name is empty or too long");
    if (s.find('\0') != std::string_view::npos) Fail("a name holds a NUL");
    if (entry && s.find('/') != std::string_view::npos) Fail("an entry name holds '/'");
    Inside(s.data(), s.size());
  }
};

void CheckViews(const k::RequestArgs& args, const Bounds& in) {
  if (auto* a = std::get_if<k::NameArgs>(&args)) in.Name(a->name, k::kMaxNameBytes, true);
  if (auto* a = std::get_if<k::MknodArgs>(&args)) in.Name(a->name, k::kMaxNameBytes, true);
  if (auto* a = std::get_if<k::MkdirArgs>(&args)) in.Name(a->name, k::kMaxNameBytes, true);
  if (auto* a = std::get_if<k::CreateArgs>(&args)) in.Name(a->name, k::kMaxNameBytes, true);
  if (auto* a = std::get_if<k::SymlinkArgs>(&args)) {
    in.Name(a->name, k::kMaxNameBytes, true);
    in.Name(a->target, k::kMaxSymlinkBytes, false);
  }
  if (auto* a = std::get_if<k::RenameArgs>(&args)) {
    in.Name(a->old_name, k::kMaxNameBytes, true);
    in.Name(a->new_name, k::kMaxNameBytes, true);
  }
  if (auto* a = std::get_if<k::LinkArgs>(&args)) in.Name(a->new_name, k::kMaxNameBytes, true);
  if (auto* a = std::get_if<k::WriteArgs>(&args)) {
    if (a->data.size() != a->in.size) Fail("a write's payload is not its size");
    in.Inside(a->data.data(), a->data.size());
  }
  if (auto* a = std::get_if<k::SetxattrArgs>(&args)) {
    in.Name(a->name, k::kMaxXattrNameBytes, false);
    if (a->value.size() > k::kMaxXattrValueBytes) Fail("an xattr value over the bound");
    in.Inside(a->value.data(), a->value.size());
  }
  if (auto* a = std::get_if<k::RemovexattrArgs>(&args)) in.Name(a->name, k::kMaxXattrNameBytes, false);
  if (auto* a = std::get_if<k::GetxattrArgs>(&args); a && !a->name.empty())
    in.Name(a->name, k::kMaxXattrNameBytes, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  k::DecodeOptions options;
  if (data[0] & 1) options.minor = k::kProtocolMinor;
  options.setxattr_ext = (data[0] & 2) != 0;
  if (data[0] & 4) options.max_write = 4096;
  std::span<const uint8_t> request(data + 1, size - 1);

  auto decoded = k::DecodeRequest(request, options);
  if (!decoded.ok()) {
    if (decoded.status().code() != strata::Status::Code::kInvalidArgument) Fail("a refusal that is not InvalidArgument");
    return 0;
  }
  if (!k::DecodeHeader(request).ok()) Fail("a request decodes but its header does not");
  CheckViews(decoded->args, Bounds{request.data(), request.data() + request.size()});
  auto again = k::EncodeRequest(*decoded, options);
  bool keeps_no_bytes =
      decoded->header.opcode == FUSE_INIT || std::holds_alternative<k::UnsupportedArgs>(decoded->args);
  if (keeps_no_bytes != !again.has_value()) Fail("EncodeRequest skips the wrong requests");
  if (again && !std::equal(again->begin(), again->end(), request.begin(), request.end()))
    Fail("an accepted request has a second encoding");
  return 0;
}
