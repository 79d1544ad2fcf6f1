#include "store/tree.h"

#include <sys/stat.h>

#include <algorithm>

#include "util/coding.h"
#include "util/time_ns.h"

namespace strata {
namespace {
constexpr uint8_t kTreeVersion = 1;
constexpr size_t kMaxXattrs = 4096;

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

bool Fits32(uint64_t v) { return v <= UINT32_MAX; }
}  // namespace

const char* EntryKindName(EntryKind k) {
  switch (k) {
    case EntryKind::kFile: return "file";
    case EntryKind::kDirectory: return "dir";
    case EntryKind::kSymlink: return "symlink";
    case EntryKind::kHardlink: return "hardlink";
    case EntryKind::kFifo: return "fifo";
    case EntryKind::kSocket: return "socket";
    case EntryKind::kCharDevice: return "chardev";
    case EntryKind::kBlockDevice: return "blockdev";
  }
  return "unknown";
}

EntryKind EntryKindOfMode(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return EntryKind::kDirectory;
    case S_IFLNK: return EntryKind::kSymlink;
    case S_IFIFO: return EntryKind::kFifo;
    case S_IFSOCK: return EntryKind::kSocket;
    case S_IFCHR: return EntryKind::kCharDevice;
    case S_IFBLK: return EntryKind::kBlockDevice;
    default: return EntryKind::kFile;
  }
}

uint32_t ModeTypeOf(EntryKind kind) {
  switch (kind) {
    case EntryKind::kFile: return S_IFREG;
    case EntryKind::kDirectory: return S_IFDIR;
    case EntryKind::kSymlink: return S_IFLNK;
    case EntryKind::kFifo: return S_IFIFO;
    case EntryKind::kSocket: return S_IFSOCK;
    case EntryKind::kCharDevice: return S_IFCHR;
    case EntryKind::kBlockDevice: return S_IFBLK;
    case EntryKind::kHardlink: return 0;
  }
  return 0;
}

bool IsValidEntryName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  return name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

const TreeEntry* Tree::Find(std::string_view name) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), name,
                             [](const TreeEntry& e, std::string_view n) { return e.name < n; });
  return it != entries.end() && it->name == name ? &*it : nullptr;
}

std::string EncodeTree(const Tree& tree) {
  std::string out;
  out.push_back(static_cast<char>(kTreeVersion));
  PutVarint(&out, tree.entries.size());
  for (const TreeEntry& e : tree.entries) {
    PutLengthPrefixed(&out, e.name);
    out.push_back(static_cast<char>(e.kind));
    PutVarint(&out, e.mode);
    PutVarint(&out, e.uid);
    PutVarint(&out, e.gid);
    PutVarint(&out, ZigZag(e.mtime_sec));
    PutVarint(&out, e.mtime_nsec);
    PutVarint(&out, e.xattrs.size());
    for (const auto& [name, value] : e.xattrs) {
      PutLengthPrefixed(&out, name);
      PutLengthPrefixed(&out, value);
    }
    switch (e.kind) {
      case EntryKind::kFile:
        PutVarint(&out, e.size);
        PutVarint(&out, e.chunks.size());
        for (const ChunkRef& c : e.chunks) {
          out.append(reinterpret_cast<const char*>(c.id.bytes.data()), Hash::kSize);
          PutVarint(&out, c.length);
        }
        break;
      case EntryKind::kDirectory:
        out.append(reinterpret_cast<const char*>(e.subtree.bytes.data()), Hash::kSize);
        break;
      case EntryKind::kSymlink:
      case EntryKind::kHardlink:
        PutLengthPrefixed(&out, e.target);
        break;
      case EntryKind::kCharDevice:
      case EntryKind::kBlockDevice:
        PutVarint(&out, e.rdev);
        break;
      case EntryKind::kFifo:
      case EntryKind::kSocket:
        break;
    }
  }
  return out;
}

Result<Tree> DecodeTree(std::string_view data) {
  auto bad = [](const std::string& why) { return Status::Corruption("malformed tree: " + why); };
  Decoder d(data);
  uint8_t version;
  if (!d.GetByte(&version)) return bad("empty");
  if (version != kTreeVersion) return Status::Unsupported("tree format version " + std::to_string(version));
  uint64_t count;
  if (!d.GetVarint(&count)) return bad("truncated count");
  // Each entry takes at least 9 bytes, so a count beyond that is a lie.
  if (count > d.remaining() / 9) return bad("entry count exceeds the data");
  Tree tree;
  tree.entries.reserve(count);
  for (uint64_t i = 0; i < count; i++) {
    TreeEntry e;
    std::string_view name;
    uint8_t kind;
    uint64_t mode, uid, gid, sec, nsec, nx;
    if (!d.GetLengthPrefixed(&name) || !d.GetByte(&kind) || !d.GetVarint(&mode) || !d.GetVarint(&uid) ||
        !d.GetVarint(&gid) || !d.GetVarint(&sec) || !d.GetVarint(&nsec) || !d.GetVarint(&nx))
      return bad("truncated entry");
    if (!IsValidEntryName(name)) return bad("invalid entry name");
    if (!tree.entries.empty() && !(tree.entries.back().name < name)) return bad("entries not sorted or duplicated");
    if (kind < 1 || kind > 8) return bad("unknown entry kind " + std::to_string(kind));
    if (mode > 07777 || !Fits32(uid) || !Fits32(gid) || nsec >= kNanosPerSecond || nx > kMaxXattrs)
      return bad("field out of range");
    e.name.assign(name);
    e.kind = static_cast<EntryKind>(kind);
    e.mode = static_cast<uint32_t>(mode);
    e.uid = static_cast<uint32_t>(uid);
    e.gid = static_cast<uint32_t>(gid);
    e.mtime_sec = UnZigZag(sec);
    e.mtime_nsec = static_cast<uint32_t>(nsec);
    for (uint64_t x = 0; x < nx; x++) {
      std::string_view xn, xv;
      if (!d.GetLengthPrefixed(&xn) || !d.GetLengthPrefixed(&xv)) return bad("truncated xattr");
      if (xn.empty() || (!e.xattrs.empty() && !(e.xattrs.back().first < xn))) return bad("xattrs not sorted");
      e.xattrs.emplace_back(std::string(xn), std::string(xv));
    }
    switch (e.kind) {
      case EntryKind::kFile: {
        uint64_t nchunks;
        if (!d.GetVarint(&e.size) || !d.GetVarint(&nchunks)) return bad("truncated file entry");
        if (nchunks > d.remaining() / (Hash::kSize + 1)) return bad("chunk count exceeds the data");
        uint64_t total = 0;
        e.chunks.resize(nchunks);
        for (ChunkRef& c : e.chunks) {
          std::string_view id;
          if (!d.GetBytes(Hash::kSize, &id) || !d.GetVarint(&c.length)) return bad("truncated chunk list");
          c.id = Hash::FromBytes(id.data());
          if (c.length == 0 || c.length > (1u << 30)) return bad("chunk length out of range");
          total += c.length;
        }
        if (total != e.size) return bad("file size does not match its chunks");
        break;
      }
      case EntryKind::kDirectory: {
        std::string_view id;
        if (!d.GetBytes(Hash::kSize, &id)) return bad("truncated subtree id");
        e.subtree = Hash::FromBytes(id.data());
        break;
      }
      case EntryKind::kSymlink:
      case EntryKind::kHardlink: {
        std::string_view target;
        if (!d.GetLengthPrefixed(&target)) return bad("truncated link target");
        if (target.empty() || target.size() > 4096 || target.find('\0') != std::string_view::npos)
          return bad("invalid link target");
        e.target.assign(target);
        break;
      }
      case EntryKind::kCharDevice:
      case EntryKind::kBlockDevice:
        if (!d.GetVarint(&e.rdev)) return bad("truncated device number");
        break;
      case EntryKind::kFifo:
      case EntryKind::kSocket:
        break;
    }
    tree.entries.push_back(std::move(e));
  }
  if (!d.empty()) return bad("trailing bytes");
  return tree;
}

}  // namespace strata
