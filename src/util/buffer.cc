#include "util/buffer.h"

#include <cstdlib>
#include <new>
#include <utility>

namespace strata {

Buffer::Buffer(size_t size) : size_(size) {
  if (size == 0) return;
  // aligned_alloc wants a multiple of the alignment.
  block_ = static_cast<char*>(std::aligned_alloc(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment));
  if (block_ == nullptr) throw std::bad_alloc();
}

Buffer::~Buffer() { std::free(block_); }

Buffer::Buffer(Buffer&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)),
      offset_(std::exchange(other.offset_, 0)),
      size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    std::free(block_);
    block_ = std::exchange(other.block_, nullptr);
    offset_ = std::exchange(other.offset_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void Buffer::Narrow(size_t offset, size_t size) {
  if (offset > size_ || size > size_ - offset) std::abort();  // a caller's bug, never data
  offset_ += offset;
  size_ = size;
}

}  // namespace strata
