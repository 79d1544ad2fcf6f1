// Commit objects: a root tree, its parents, who, when and why.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/hash.h"
#include "util/status.h"

namespace strata {

// Metadata of the top directory itself, which no tree entry describes.
struct RootMeta {
  uint32_t mode = 0755;
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime_sec = 0;
  uint32_t mtime_nsec = 0;
  std::vector<std::pair<std::string, std::string>> xattrs;  // sorted by name

  bool operator==(const RootMeta&) const = default;
};

struct Commit {
  Hash root;                  // the tree of the top directory
  RootMeta root_meta;
  std::vector<Hash> parents;  // empty for the first commit of a history
  std::string author;
  int64_t time_ns = 0;        // wall clock, nanoseconds since the epoch
  std::string message;

  bool operator==(const Commit&) const = default;
};

std::string EncodeCommit(const Commit& c);
Result<Commit> DecodeCommit(std::string_view data);

}  // namespace strata
