// Tree objects: one directory, its entries sorted by name.
//
// A tree holds everything needed to recreate its directory byte for byte:
// names, kinds, permission bits, owners, nanosecond mtimes, xattrs, symlink
// targets, device numbers, and for regular files the list of chunks. Hard links
// are recorded the way tar does: the first path of a linked inode (in sorted
// walk order) is an ordinary entry (file, symlink, fifo, device...), each later
// path is a kHardlink entry naming that first path relative to the commit's root. Encoding in docs/format/objects.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/hash.h"
#include "util/status.h"

namespace strata {

enum class EntryKind : uint8_t {
  kFile = 1,
  kDirectory = 2,
  kSymlink = 3,
  kHardlink = 4,
  kFifo = 5,
  kSocket = 6,
  kCharDevice = 7,
  kBlockDevice = 8,
};

const char* EntryKindName(EntryKind k);
// The kind of an inode with this st_mode (its S_IFMT bits); unknown types are files.
EntryKind EntryKindOfMode(uint32_t mode);
// The S_IFMT bits of a kind; 0 for kHardlink, which is a name, not an inode.
uint32_t ModeTypeOf(EntryKind kind);

struct ChunkRef {
  Hash id;
  uint64_t length = 0;
  bool operator==(const ChunkRef&) const = default;
};

struct TreeEntry {
  std::string name;
  EntryKind kind = EntryKind::kFile;
  uint32_t mode = 0;  // permission bits incl. setuid/setgid/sticky (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime_sec = 0;
  uint32_t mtime_nsec = 0;
  std::vector<std::pair<std::string, std::string>> xattrs;  // sorted by name

  // Kind-specific payload.
  uint64_t size = 0;              // kFile: sum of chunk lengths
  std::vector<ChunkRef> chunks;   // kFile
  Hash subtree;                   // kDirectory
  std::string target;             // kSymlink: link text; kHardlink: path from the root
  uint64_t rdev = 0;              // devices

  bool operator==(const TreeEntry&) const = default;
};

struct Tree {
  std::vector<TreeEntry> entries;  // sorted by name, names unique

  // Finds an entry by name (binary search); nullptr when absent.
  const TreeEntry* Find(std::string_view name) const;
};

// Checks that a name can be a directory entry: not empty, not "." or "..",
// no '/' or NUL, at most 255 bytes. Trees from the store that break this are
// Corruption; names from users are InvalidArgument.
bool IsValidEntryName(std::string_view name);

std::string EncodeTree(const Tree& tree);  // REQUIRES: entries sorted, names valid
// Rejects anything malformed: unknown version or kind, bad names, unsorted or
// duplicate entries, truncated fields, trailing bytes.
Result<Tree> DecodeTree(std::string_view data);

}  // namespace strata
