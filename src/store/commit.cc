#include "store/commit.h"

#include "util/coding.h"
#include "util/time_ns.h"

namespace strata {
namespace {
constexpr uint8_t kCommitVersion = 1;
constexpr uint64_t kMaxParents = 64;
}  // namespace

std::string EncodeCommit(const Commit& c) {
  std::string out;
  out.push_back(static_cast<char>(kCommitVersion));
  out.append(reinterpret_cast<const char*>(c.root.bytes.data()), Hash::kSize);
  PutVarint(&out, c.root_meta.mode);
  PutVarint(&out, c.root_meta.uid);
  PutVarint(&out, c.root_meta.gid);
  PutFixed64(&out, static_cast<uint64_t>(c.root_meta.mtime_sec));
  PutVarint(&out, c.root_meta.mtime_nsec);
  PutVarint(&out, c.root_meta.xattrs.size());
  for (const auto& [name, value] : c.root_meta.xattrs) {
    PutLengthPrefixed(&out, name);
    PutLengthPrefixed(&out, value);
  }
  PutVarint(&out, c.parents.size());
  for (const Hash& p : c.parents) out.append(reinterpret_cast<const char*>(p.bytes.data()), Hash::kSize);
  PutLengthPrefixed(&out, c.author);
  PutFixed64(&out, static_cast<uint64_t>(c.time_ns));
  PutLengthPrefixed(&out, c.message);
  return out;
}

Result<Commit> DecodeCommit(std::string_view data) {
  auto bad = [](const char* why) { return Status::Corruption(std::string("malformed commit: ") + why); };
  Decoder d(data);
  uint8_t version;
  if (!d.GetByte(&version)) return bad("empty");
  if (version != kCommitVersion) return Status::Unsupported("commit format version " + std::to_string(version));
  Commit c;
  std::string_view bytes;
  uint64_t nparents;
  if (!d.GetBytes(Hash::kSize, &bytes)) return bad("truncated");
  c.root = Hash::FromBytes(bytes.data());
  uint64_t mode, uid, gid, sec, nsec, nx;
  if (!d.GetVarint(&mode) || !d.GetVarint(&uid) || !d.GetVarint(&gid) || !d.GetFixed64(&sec) ||
      !d.GetVarint(&nsec) || !d.GetVarint(&nx))
    return bad("truncated root metadata");
  if (mode > 07777 || uid > UINT32_MAX || gid > UINT32_MAX || nsec >= kNanosPerSecond || nx > 4096)
    return bad("root metadata out of range");
  c.root_meta.mode = static_cast<uint32_t>(mode);
  c.root_meta.uid = static_cast<uint32_t>(uid);
  c.root_meta.gid = static_cast<uint32_t>(gid);
  c.root_meta.mtime_sec = static_cast<int64_t>(sec);
  c.root_meta.mtime_nsec = static_cast<uint32_t>(nsec);
  for (uint64_t i = 0; i < nx; i++) {
    std::string_view name, value;
    if (!d.GetLengthPrefixed(&name) || !d.GetLengthPrefixed(&value)) return bad("truncated root xattr");
    if (name.empty() || (!c.root_meta.xattrs.empty() && !(c.root_meta.xattrs.back().first < name)))
      return bad("root xattrs not sorted");
    c.root_meta.xattrs.emplace_back(std::string(name), std::string(value));
  }
  if (!d.GetVarint(&nparents)) return bad("truncated");
  if (nparents > kMaxParents) return bad("too many parents");
  for (uint64_t i = 0; i < nparents; i++) {
    if (!d.GetBytes(Hash::kSize, &bytes)) return bad("truncated parents");
    c.parents.push_back(Hash::FromBytes(bytes.data()));
  }
  std::string_view author, message;
  uint64_t time;
  if (!d.GetLengthPrefixed(&author) || !d.GetFixed64(&time) || !d.GetLengthPrefixed(&message))
    return bad("truncated");
  if (!d.empty()) return bad("trailing bytes");
  c.author.assign(author);
  c.time_ns = static_cast<int64_t>(time);
  c.message.assign(message);
  return c;
}

}  // namespace strata
