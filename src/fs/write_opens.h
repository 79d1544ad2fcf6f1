// The files whose pages the kernel may hold dirty: those opened with write
// access through the page cache. Only they can have data on its way to the
// daemon when a cut is taken (a write through a shared mapping needs a
// descriptor opened O_RDWR; the writeback cache needs one opened for
// writing), so only they are written back and dropped before a commit,
// a snapshot or a reset (FuseServer::FlushKernelPages). A file only ever
// opened for reading keeps its cached pages and attributes across those, and
// its next read or stat costs no round trip.
//
// A file stays noted while the kernel holds it, closed or not: a mapping
// outlives the descriptor it was made from, and may be written after the
// close.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "util/mutex.h"

namespace strata::fs {

class WriteOpens {
 public:
  // An open (or create) with write access of ino.
  void Note(uint64_t ino);
  // A mark to pass to Among: taken before the list of held files is read.
  uint64_t Mark();
  // The noted files among held (the files the kernel holds, read after
  // mark was taken). A noted file not among them has been let go by the
  // kernel, and its pages with it, and is forgotten, unless it was noted
  // after mark (it may have been looked up again since held was read).
  std::vector<uint64_t> Among(const std::vector<uint64_t>& held, uint64_t mark);

 private:
  Mutex mu_;
  uint64_t next_ GUARDED_BY(mu_) = 0;
  std::unordered_map<uint64_t, uint64_t> noted_ GUARDED_BY(mu_);  // ino -> when last noted
};

}  // namespace strata::fs
