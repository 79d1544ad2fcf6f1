// A POSIX ACL xattr value (system.posix_acl_access / _default), as the kernel
// hands it to setxattr and as a tree in the store holds it: refused cleanly
// when malformed; when accepted, it re-encodes to a value that decodes to the
// same entries, and what chmod and a create derive from it stays a valid ACL
// that grants nothing the mode does not.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "workspace/posix_acl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto acl = strata::PosixAcl::Decode(value);
  if (!acl.ok()) return 0;
  auto again = strata::PosixAcl::Decode(acl->Encode());
  if (!again.ok() || again->entries != acl->entries) std::abort();
  if (acl->empty()) return 0;
  if (acl->ModeBits() & ~0777u) std::abort();
  // The mode to apply comes from the input too, so that every bit pattern is tried.
  uint32_t mode = size > 0 ? (data[0] | (uint32_t{data[size - 1]} << 8)) & 07777 : 0644;
  strata::PosixAcl chmodded = *acl;
  chmodded.Chmod(mode);
  if (!strata::PosixAcl::Decode(chmodded.Encode()).ok() || chmodded.ModeBits() != (mode & 0777)) std::abort();
  strata::PosixAcl created = *acl;
  uint32_t new_mode = created.RestrictForCreate(mode);
  if (!strata::PosixAcl::Decode(created.Encode()).ok()) std::abort();
  if ((new_mode & ~07777u) || (new_mode & 0777 & ~mode)) std::abort();
  if (created.ModeBits() != (new_mode & 0777)) std::abort();
  return 0;
}
