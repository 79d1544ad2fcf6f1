// Framed objects (docs/format/frames.md): how this store keeps an object's
// bytes inside a pack since pack format version 2 (codec kFramed).
//
//   table   fixed32 table_len (the whole table, this field and its checksum included)
//           u8      frame_shift (plain bytes per frame = 1 << frame_shift; the last frame may be shorter)
//           varint  frame_count (= ceil(raw_len / frame size))
//           per frame: u8 codec (raw or zstd) | varint stored_len | fixed64 XXH3-64 of the frame's stored bytes
//           fixed64 XXH3-64 of the table bytes before it, seeded with the object's id
//   frames  each frame's stored bytes, back to back
//
// Two things follow. A read of a few bytes decodes only the frames that hold
// them (a chunk is up to 2 MiB; a frame is 64 KiB by default). And every
// stored byte is covered by a fast checksum, so that a pack this store wrote
// can be read back without hashing it with SHA-256: XXH3 catches media and
// software corruption (and, by its seed, a table read for the wrong object),
// not a deliberate forgery by someone who can write the store's files.
//
// Thread-safety: free functions without shared state (zstd contexts are per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/codec.h"
#include "util/hash.h"
#include "util/status.h"

namespace strata {

constexpr unsigned kMinFrameShift = 12;  // 4 KiB: smaller frames compress badly
constexpr unsigned kMaxFrameShift = 24;  // 16 MiB: beyond any chunk, one frame per object
constexpr unsigned kDefaultFrameShift = 16;  // 64 KiB, chosen by measurement (docs/benchmark-journal.md)
// A table's fixed part: table_len, frame_shift, a one-byte frame_count, checksum.
constexpr size_t kMinFrameTableSize = 4 + 1 + 1 + 8;

// XXH3-64 of bytes: the fast checksum of stored frames.
uint64_t FastChecksum(std::string_view bytes, uint64_t seed = 0);
// The seed of an object's table checksum: the first 8 bytes of its id, so that
// a table read for another object (an index row pointing at the wrong bytes)
// fails its check.
uint64_t FrameTableSeed(const Hash& id);

struct FrameInfo {
  Codec codec = Codec::kRaw;  // kRaw or kZstd, never kFramed
  uint64_t stored_offset = 0;  // from the start of the object's stored bytes
  uint64_t stored_len = 0;
  uint64_t checksum = 0;
};

struct FrameTable {
  unsigned frame_shift = kDefaultFrameShift;
  uint64_t raw_len = 0;
  uint64_t table_len = 0;
  std::vector<FrameInfo> frames;

  uint64_t frame_size() const { return uint64_t{1} << frame_shift; }
  uint64_t PlainOffset(size_t i) const { return uint64_t{i} << frame_shift; }
  uint64_t PlainLength(size_t i) const;
  // The frames [first, last] that hold plain bytes [offset, offset + length).
  // REQUIRES: length > 0 and offset + length <= raw_len.
  size_t FirstFrame(uint64_t offset) const { return static_cast<size_t>(offset >> frame_shift); }
  size_t LastFrame(uint64_t offset, uint64_t length) const {
    return static_cast<size_t>((offset + length - 1) >> frame_shift);
  }
};

// Encodes data as a framed object into *out: each frame zstd-compressed at
// `level` when that makes it smaller, else raw. REQUIRES: frame_shift within
// [kMinFrameShift, kMaxFrameShift].
void EncodeFramed(const Hash& id, std::string_view data, int level, unsigned frame_shift, std::string* out);

// Reads the table at the start of an object's stored bytes. `prefix` may be
// only the first bytes of them: if it is shorter than the table, *table_len is
// set to what is needed and the result is NotFound (read more and call again).
// Checks the table's checksum (seeded with id), that the frames match raw_len
// and fill exactly stored_len bytes, and every length before anything is
// allocated for them.
Result<FrameTable> DecodeFrameTable(const Hash& id, std::string_view prefix, uint64_t raw_len, uint64_t stored_len,
                                    uint64_t* table_len);

// Whether every frame of an object's stored bytes can decode to its plain
// length as far as its headers tell (CheckDecodable), so that the object's
// raw_len is allocated only once each frame has backed its share of it.
Status CheckFramesDecodable(const FrameTable& table, std::string_view stored);

// Checks frame i's stored bytes against its checksum and decodes them into
// out[0, PlainLength(i)). REQUIRES: i < table.frames.size().
Status DecodeFrame(const FrameTable& table, size_t i, std::string_view stored_frame, char* out);

// The whole object: table, every frame checked and decoded into out[0, raw_len).
Status DecodeFramedInto(const Hash& id, std::string_view stored, uint64_t raw_len, char* out);

}  // namespace strata
