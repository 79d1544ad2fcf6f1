// The body of a READDIR or READDIRPLUS reply: records packed back to back,
// each padded with zeros to a multiple of 8 bytes, never more than the size
// the kernel asked for. Add returns false, leaving the buffer as it was,
// when the next record would not fit: the caller stops there and the kernel
// asks again from that entry's offset.
//
// READDIRPLUS records carry a full entry (as LOOKUP answers it) that counts
// as a lookup the kernel will FORGET, but only for records the kernel keeps:
// the caller takes a lookup reference only after Add returned true.
//
// Thread-safety: a value; not shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/kernel/reply.h"

namespace strata::fs::kernel {

class DirentBuffer {
 public:
  explicit DirentBuffer(size_t max_bytes) : max_bytes_(max_bytes) {}

  // offset: what the kernel sends back in READDIR to continue after this
  // entry. type: the DT_* of the entry. REQUIRES: name is a non-empty entry
  // name without '/' or NUL (else Add returns false).
  bool Add(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name);
  bool AddPlus(const EntryParams& entry, uint64_t offset, uint32_t type, std::string_view name);

  // Drops the records added after bytes().size() was `size`.
  void Truncate(size_t size) {
    if (size < bytes_.size()) bytes_.resize(size);
  }

  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }

 private:
  bool Fits(size_t record_bytes) const { return bytes_.size() + record_bytes <= max_bytes_; }
  void AppendDirent(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name);

  size_t max_bytes_;
  std::string bytes_;
};

// The padded size of a record whose fixed part is fixed_bytes.
constexpr size_t DirentRecordBytes(size_t fixed_bytes, size_t name_bytes) {
  return (fixed_bytes + name_bytes + 7) & ~size_t{7};
}

}  // namespace strata::fs::kernel
