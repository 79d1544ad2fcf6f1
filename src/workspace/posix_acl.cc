#include "workspace/posix_acl.h"

#include <cerrno>

#include "util/coding.h"

namespace strata {

namespace {
constexpr uint32_t kXattrVersion = 2;
constexpr size_t kHeaderSize = 4;
constexpr size_t kEntrySize = 8;
constexpr uint16_t kPermBits = 07;

uint16_t DecodeFixed16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}
void PutFixed16(std::string* dst, uint16_t v) {
  dst->push_back(static_cast<char>(v & 0xFF));
  dst->push_back(static_cast<char>(v >> 8));
}

Status Invalid(const std::string& why) { return Status::IOError("invalid POSIX ACL: " + why, EINVAL); }

// The order a valid ACL walks through (the kernel's posix_acl_valid): each
// entry either stays in the current state (named entries) or moves on.
enum class Expect { kUserObj, kUsers, kGroups, kOther, kDone };

Status Validate(const std::vector<AclEntry>& entries) {
  Expect state = Expect::kUserObj;
  bool needs_mask = false;
  for (const AclEntry& e : entries) {
    switch (e.tag) {
      case kAclUserObj:
        if (state != Expect::kUserObj) return Invalid("user_obj out of place");
        state = Expect::kUsers;
        break;
      case kAclUser:
        if (state != Expect::kUsers) return Invalid("named user out of place");
        needs_mask = true;
        break;
      case kAclGroupObj:
        if (state != Expect::kUsers) return Invalid("group_obj out of place");
        state = Expect::kGroups;
        break;
      case kAclGroup:
        if (state != Expect::kGroups) return Invalid("named group out of place");
        needs_mask = true;
        break;
      case kAclMask:
        if (state != Expect::kGroups) return Invalid("mask out of place");
        state = Expect::kOther;
        break;
      case kAclOther:
        if (state != Expect::kOther && !(state == Expect::kGroups && !needs_mask))
          return Invalid(needs_mask ? "named entries without a mask" : "other out of place");
        state = Expect::kDone;
        break;
      default:
        return Invalid("unknown tag " + std::to_string(e.tag));
    }
  }
  if (state != Expect::kDone) return Invalid("user_obj, group_obj or other missing");
  return Status::Ok();
}

// The entry with tag (the first: unnamed tags occur once in a valid ACL), or null.
AclEntry* Find(std::vector<AclEntry>& entries, uint16_t tag) {
  for (AclEntry& e : entries)
    if (e.tag == tag) return &e;
  return nullptr;
}
const AclEntry* Find(const std::vector<AclEntry>& entries, uint16_t tag) {
  for (const AclEntry& e : entries)
    if (e.tag == tag) return &e;
  return nullptr;
}
}  // namespace

Result<PosixAcl> PosixAcl::Decode(std::string_view value) {
  PosixAcl acl;
  if (value.empty()) return acl;
  if (value.size() < kHeaderSize) return Invalid("shorter than its header");
  if (DecodeFixed32(value.data()) != kXattrVersion)
    return Status::IOError("POSIX ACL of xattr version " + std::to_string(DecodeFixed32(value.data())),
                           EOPNOTSUPP);
  if ((value.size() - kHeaderSize) % kEntrySize != 0) return Invalid("size is not a whole number of entries");
  if (value.size() == kHeaderSize) return acl;  // no entries: no ACL
  for (size_t off = kHeaderSize; off < value.size(); off += kEntrySize) {
    AclEntry e;
    e.tag = DecodeFixed16(value.data() + off);
    e.perm = DecodeFixed16(value.data() + off + 2);
    e.id = DecodeFixed32(value.data() + off + 4);
    if (e.perm & ~kPermBits) return Invalid("permission bits beyond rwx");
    if (e.tag == kAclUser || e.tag == kAclGroup) {
      if (e.id == kAclUndefinedId) return Invalid("named entry without an id");
    } else {
      e.id = kAclUndefinedId;  // meaningless for the others; the kernel drops it too
    }
    acl.entries.push_back(e);
  }
  STRATA_RETURN_IF_ERROR(Validate(acl.entries));
  return acl;
}

std::string PosixAcl::Encode() const {
  std::string out;
  out.reserve(kHeaderSize + kEntrySize * entries.size());
  PutFixed32(&out, kXattrVersion);
  for (const AclEntry& e : entries) {
    PutFixed16(&out, e.tag);
    PutFixed16(&out, e.perm);
    PutFixed32(&out, e.tag == kAclUser || e.tag == kAclGroup ? e.id : kAclUndefinedId);
  }
  return out;
}

bool PosixAcl::EquivalentToMode() const {
  for (const AclEntry& e : entries)
    if (e.tag != kAclUserObj && e.tag != kAclGroupObj && e.tag != kAclOther) return false;
  return true;
}

uint32_t PosixAcl::ModeBits() const {
  uint32_t bits = 0;
  const AclEntry* group = Find(entries, kAclMask);
  if (group == nullptr) group = Find(entries, kAclGroupObj);
  if (const AclEntry* user = Find(entries, kAclUserObj)) bits |= (user->perm & kPermBits) << 6;
  if (group != nullptr) bits |= (group->perm & kPermBits) << 3;
  if (const AclEntry* other = Find(entries, kAclOther)) bits |= other->perm & kPermBits;
  return bits;
}

void PosixAcl::Chmod(uint32_t mode) {
  AclEntry* group = Find(entries, kAclMask);
  if (group == nullptr) group = Find(entries, kAclGroupObj);
  if (AclEntry* user = Find(entries, kAclUserObj)) user->perm = (mode >> 6) & kPermBits;
  if (group != nullptr) group->perm = (mode >> 3) & kPermBits;
  if (AclEntry* other = Find(entries, kAclOther)) other->perm = mode & kPermBits;
}

uint32_t PosixAcl::RestrictForCreate(uint32_t mode) {
  AclEntry* group = Find(entries, kAclMask);
  if (group == nullptr) group = Find(entries, kAclGroupObj);
  // Each class keeps what both the ACL and the mode allow; the mode's class
  // bits become exactly that.
  uint32_t bits = mode & 0777;
  auto restrict = [&](AclEntry* e, int shift) {
    if (e == nullptr) return;
    e->perm &= (bits >> shift) & kPermBits;
    bits = (bits & ~(kPermBits << shift)) | (static_cast<uint32_t>(e->perm) << shift);
  };
  restrict(Find(entries, kAclUserObj), 6);
  restrict(group, 3);
  restrict(Find(entries, kAclOther), 0);
  return (mode & ~0777u) | bits;
}

}  // namespace strata
