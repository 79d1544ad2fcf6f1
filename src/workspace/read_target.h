// ReadTarget: where the bytes of one read go.
//
// Either a flat buffer of the caller's, into which every byte is copied, or a
// gathered reply: a list of pieces for writev (fuse_reply_iov). In the
// gathered form, bytes of the base commit are not copied at all: a piece
// points into the cached chunk, which the target keeps alive until it is
// destroyed. Bytes from anywhere else (written data, zeros) go into a buffer
// the target owns. Gathering saves the daemon one copy of every byte a
// program reads from a commit, which shows in a cold read's CPU time.
//
// The reader (FileData) fills the target front to back, with Space() for what
// it produces itself and Share() for what it finds in a chunk.
//
// Thread-safety: a ReadTarget belongs to one read.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "util/buffer.h"

namespace strata {

class ReadTarget {
 public:
  // Past this many pieces, chunk bytes are copied like any others: writev
  // takes at most IOV_MAX (1024) of them, and libfuse adds its header.
  static constexpr size_t kMaxPieces = 256;

  // Flat: the bytes go to out[0, size) of the read.
  explicit ReadTarget(char* out) : flat_(out) {}
  // Gathered: a reply of at most `capacity` bytes.
  explicit ReadTarget(size_t capacity) : capacity_(capacity) {}
  ReadTarget(const ReadTarget&) = delete;
  ReadTarget& operator=(const ReadTarget&) = delete;

  // The next n bytes of the read, for the caller to fill.
  // REQUIRES (gathered): size() + n <= capacity.
  char* Space(size_t n);
  // The next bytes of the read are `bytes`, which lie inside *chunk.
  void Share(const std::shared_ptr<const Buffer>& chunk, std::string_view bytes);

  size_t size() const { return size_; }
  bool gathered() const { return flat_ == nullptr; }
  // The pieces of a gathered read, in order; they stay valid while this
  // target lives. REQUIRES: gathered().
  const std::vector<iovec>& pieces() const { return pieces_; }

 private:
  void AddPiece(const char* data, size_t n);

  char* const flat_ = nullptr;
  const size_t capacity_ = 0;
  size_t size_ = 0;
  Buffer own_;           // gathered: bytes from Space(), allocated at the first call
  size_t own_used_ = 0;  // of own_
  std::vector<iovec> pieces_;
  std::vector<std::shared_ptr<const Buffer>> held_;  // chunks that pieces_ point into
};

}  // namespace strata
