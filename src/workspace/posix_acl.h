// POSIX access control lists, as Linux keeps them in the xattrs
// system.posix_acl_access and system.posix_acl_default, and the rules that
// keep an inode's mode and its ACL in step. A local filesystem (ext4) gets
// these rules from the kernel; a FUSE daemon that negotiates ACL support is
// given them to apply itself, so the workspace applies them (see
// docs/format/workspace.md, "POSIX ACLs"). Values only: no I/O, no locks.
//
// Xattr format (little-endian): a 4-byte header holding version 2, then one
// 8-byte entry per line of the ACL: tag u16, perm u16 (r=4, w=2, x=1), id u32
// (a uid or gid for named entries; 0xFFFFFFFF, "undefined", for the others).
// A valid ACL lists exactly one user_obj, then named users, exactly one
// group_obj, named groups, a mask (required when there are named entries,
// optional otherwise) and exactly one other, in that order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace strata {

inline constexpr std::string_view kAclAccessXattr = "system.posix_acl_access";
inline constexpr std::string_view kAclDefaultXattr = "system.posix_acl_default";

// Whether name is one of the two ACL xattrs, whose values the workspace
// interprets instead of storing them as given.
inline bool IsAclXattr(std::string_view name) { return name == kAclAccessXattr || name == kAclDefaultXattr; }

enum AclTag : uint16_t {
  kAclUserObj = 0x01,
  kAclUser = 0x02,
  kAclGroupObj = 0x04,
  kAclGroup = 0x08,
  kAclMask = 0x10,
  kAclOther = 0x20,
};

inline constexpr uint32_t kAclUndefinedId = 0xFFFFFFFF;

struct AclEntry {
  uint16_t tag = 0;
  uint16_t perm = 0;  // rwx bits, 0-7
  uint32_t id = kAclUndefinedId;
  bool operator==(const AclEntry&) const = default;
};

struct PosixAcl {
  std::vector<AclEntry> entries;

  // Parses and validates an xattr value, as the kernel does before it hands
  // one to a filesystem: EOPNOTSUPP for a version other than 2, EINVAL for a
  // size that is not a header plus whole entries, unknown tags or perm bits,
  // a named entry without an id, entries out of order, a missing user_obj,
  // group_obj or other, or named entries without a mask. The value of a
  // header without entries (or an empty value) is an empty ACL, which means
  // "no ACL" to a setter. Named entries keep the order they were given in
  // (the kernel neither sorts them nor refuses repeated ids).
  static Result<PosixAcl> Decode(std::string_view value);
  // The xattr value; ids of unnamed entries read 0xFFFFFFFF, as the kernel writes them.
  std::string Encode() const;

  bool empty() const { return entries.empty(); }
  // Whether the ACL says nothing the permission bits of a mode cannot: only
  // user_obj, group_obj and other (no named entry, no mask). Such an access
  // ACL is not stored; the mode holds it.
  bool EquivalentToMode() const;
  // The permission bits (0777) the ACL gives a mode: user_obj, then the mask
  // (or group_obj without one), then other.
  uint32_t ModeBits() const;
  // chmod of an inode with this access ACL: user_obj, other and the mask (or
  // group_obj without one) take the new mode's permission bits.
  void Chmod(uint32_t mode);
  // A new inode's access ACL, from its directory's default ACL (this) and the
  // mode asked for: each of user_obj, other and the mask (group_obj without
  // one) keeps only the permissions the mode allows, and the mode keeps only
  // the permissions they give. Returns the new mode (the bits outside 0777
  // unchanged); the ACL is the new inode's access ACL unless
  // EquivalentToMode().
  uint32_t RestrictForCreate(uint32_t mode);
};

}  // namespace strata
