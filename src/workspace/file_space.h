// The space of a workspace file: the largest one there may be, and the bytes
// one holds (its st_blocks).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "store/store.h"
#include "workspace/file_data.h"
#include "workspace/namespace_db.h"

namespace strata::workspace_internal {

// The largest file a workspace holds: 16 TiB - 4 KiB, ext4's largest file with
// 4 KiB blocks. Written bytes live at their own offsets in a sparse file per
// inode (data/<ino>) on the filesystem under the store, so no file may be
// larger than that filesystem allows; this limit holds on ext4, xfs and btrfs
// alike. Writes, truncations, fallocate and copies past it get EFBIG, as on
// ext4; a write or copy that starts below it is cut short at it.
constexpr uint64_t kMaxFileSize = (uint64_t{1} << 44) - 4096;

// The bytes the regular file of `row` holds, for st_blocks (data_ops.cc):
//   written bytes → the space data/<ino> takes on its filesystem (st_blocks of
//                   that sparse file: blocks written, holes free); one stat of
//                   it, and only for a file changed since the base;
//   base bytes    → every byte below base_len that no extent covers, except
//                   the chunks that are a zero chunk (the max_size chunk a
//                   commit cuts in a long run of zeros, rechunk.h, or the
//                   fixed 8 KiB one, chunk_layout.h). The chunk list is that
//                   of `base` (decoded once, data_ops.cc BaseChunksOf), of a
//                   file at least as long as the content-defined zero chunk.
// Other chunks count whole, zeros or not: telling would mean reading them. The
// count is logical, before compression and dedup in the store. Should a row
// not read, it is row.size, the dense answer. REQUIRES the workspace's lock.
//
// The base bytes of the files counted last are kept in `cache`, and a later
// call only subtracts what the writes since then newly covered
// (NamespaceDb::FollowExtents): a getattr of an image written at 25 600
// scattered offsets reads none of its extents again. An entry holds while
// the file's base list (base_chunks_generation) and base_len stay the same
// and its extents are followed; otherwise they are all read once more.
using BaseChunksGetter = std::function<Result<std::shared_ptr<const BaseChunkList>>(InodeId)>;
struct HeldBase {
  uint64_t generation = 0, base_len = 0, bytes = 0;
};
using HeldBaseCache = std::unordered_map<InodeId, HeldBase>;
uint64_t HeldBytes(NamespaceDb& db, const FileData& files, const Store& store, const InodeRow& row,
                   const BaseChunksGetter& base, HeldBaseCache& cache);

}  // namespace strata::workspace_internal
