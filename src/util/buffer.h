// Buffer: bytes for the data path that are never zero-filled.
//
// A cold read passes each chunk through a few buffers: the stored bytes read
// from a pack, the decoded chunk. std::string zero-fills whatever it grows
// into, only for pread or zstd to overwrite it at once; on a read bound by
// the CPU that fill was a few percent of the daemon's time. A Buffer starts
// uninitialised.
//
// The block is aligned to kAlignment (a page), so that a Buffer could take an
// O_DIRECT read; Narrow() leaves part of the block in view without a copy.
//
// Thread-safety: a Buffer is a value (move-only); distinct Buffers may be used
// from different threads.
#pragma once

#include <cstddef>
#include <string_view>

namespace strata {

class Buffer {
 public:
  static constexpr size_t kAlignment = 4096;

  Buffer() = default;
  // `size` bytes of unspecified content.
  explicit Buffer(size_t size);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* data() { return block_ + offset_; }
  const char* data() const { return block_ + offset_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data(), size_}; }

  // Keeps [offset, offset + size) of the current bytes in view.
  // REQUIRES: offset + size <= this->size().
  void Narrow(size_t offset, size_t size);

 private:
  char* block_ = nullptr;
  size_t offset_ = 0;
  size_t size_ = 0;
};

}  // namespace strata
