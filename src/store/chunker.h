// Content-defined chunking (FastCDC-style gear hash with normalized chunking).
//
// A file is cut where a rolling hash of the last 64 bytes matches a mask, so an
// edit moves only the cuts near it and later cuts re-synchronise with the old
// ones: an insertion near the start of a large file changes only the chunks
// around it. Cuts never fall before min_size or after max_size; between min and
// the average a stricter mask is used, after it a looser one, which narrows the
// spread of chunk sizes around the average.
//
// The gear table and the masks are part of the store format: changing them
// changes chunk ids and so defeats dedup against older data. See
// docs/format/chunking.md. An encrypted store will chunk with a table derived
// from its key instead (crypto/gear_table.h), so that chunk sizes do not
// fingerprint known files; every other store keeps the default table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace strata {

struct ChunkerParams {
  size_t min_size = 128 * 1024;
  size_t avg_size = 512 * 1024;  // must be a power of two
  size_t max_size = 2 * 1024 * 1024;

  bool Valid() const;
};

// The 256 values the rolling hash adds, one per input byte value.
using GearTable = std::array<uint64_t, 256>;

class Chunker {
 public:
  explicit Chunker(const ChunkerParams& params);  // with DefaultGearTable()
  Chunker(const ChunkerParams& params, const GearTable& gear);

  // The public table of every unencrypted store (part of the store format).
  static const GearTable& DefaultGearTable();

  // Returns the length of the chunk that starts at data[0]. `n` bytes are
  // available; pass at least max_size bytes unless the data ends at n
  // (at_end), because a cut depends on bytes up to max_size.
  size_t NextCut(const uint8_t* data, size_t n) const;

  const ChunkerParams& params() const { return params_; }

 private:
  ChunkerParams params_;
  GearTable gear_;
  uint64_t mask_small_;  // stricter: used before avg_size
  uint64_t mask_large_;  // looser: used after avg_size
};

}  // namespace strata
