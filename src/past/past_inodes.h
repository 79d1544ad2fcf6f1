// Inode numbers of the past versions a mount shows under .strata/.
//
// One mount serves the workspace and, beside it, a workspace per past
// version looked up (past_versions.h), each numbering its inodes from 1 on
// its own. The kernel needs one number space, so a past version's inodes are
// renumbered into a range the workspace never reaches:
//
//   bit 62        set: an inode of .strata/ (clear: the workspace's own number, unchanged)
//   bits 40..61   the view: 0 for the directories of .strata/ itself, n for the n-th past version opened
//   bits 0..39    the inode's number in that view's workspace (or, for view 0, which directory)
//
// A workspace hands out numbers one by one from 1 up; it would need 2^62 of
// them to meet this range, and a past version 2^40 (a trillion files
// looked up) to overflow its part, which is refused (EOVERFLOW), not wrapped.
#pragma once

#include <cstdint>

#include "workspace/workspace.h"

namespace strata::past_internal {

constexpr InodeId kPastBit = InodeId{1} << 62;
constexpr int kInnerBits = 40;
constexpr InodeId kInnerMask = (InodeId{1} << kInnerBits) - 1;
constexpr uint32_t kViewLimit = (1u << (62 - kInnerBits)) - 1;

// The directories of .strata/ itself (view 0).
constexpr InodeId kTopDir = 1;       // .strata
constexpr InodeId kCommitsDir = 2;   // .strata/commits
constexpr InodeId kBranchesDir = 3;  // .strata/branches
// Directories that branch names holding '/' pass through get 4 and up.

inline bool IsPast(InodeId ino) { return (ino & kPastBit) != 0; }
inline uint32_t ViewOf(InodeId ino) { return static_cast<uint32_t>((ino & ~kPastBit) >> kInnerBits); }
inline InodeId InnerOf(InodeId ino) { return ino & kInnerMask; }
inline InodeId PastInode(uint32_t view, InodeId inner) {
  return kPastBit | (static_cast<InodeId>(view) << kInnerBits) | inner;
}

}  // namespace strata::past_internal
