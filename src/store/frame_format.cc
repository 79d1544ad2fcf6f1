#include "store/frame_format.h"

#include <xxhash.h>

#include <cstring>

#include "util/coding.h"

namespace strata {
namespace {
Status Bad(const std::string& why) { return Status::Corruption("malformed frame table: " + why); }
}  // namespace

uint64_t FrameTableSeed(const Hash& id) { return DecodeFixed64(reinterpret_cast<const char*>(id.bytes.data())); }

uint64_t FastChecksum(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

uint64_t FrameTable::PlainLength(size_t i) const {
  const uint64_t start = PlainOffset(i);
  return std::min(frame_size(), raw_len - start);
}

void EncodeFramed(const Hash& id, std::string_view data, int level, unsigned frame_shift, std::string* out) {
  const uint64_t frame_size = uint64_t{1} << frame_shift;
  const size_t count = static_cast<size_t>((data.size() + frame_size - 1) / frame_size);
  std::string table;
  PutFixed32(&table, 0);  // table_len, filled in below
  table.push_back(static_cast<char>(frame_shift));
  PutVarint(&table, count);
  thread_local std::string frames, frame;
  frames.clear();
  for (size_t i = 0; i < count; i++) {
    const std::string_view plain = data.substr(i * frame_size, frame_size);
    const Codec codec = Compress(plain, level, &frame);
    table.push_back(static_cast<char>(codec));
    PutVarint(&table, frame.size());
    PutFixed64(&table, FastChecksum(frame));
    frames.append(frame);
  }
  const uint32_t table_len = static_cast<uint32_t>(table.size() + 8);
  std::memcpy(table.data(), &table_len, 4);  // little-endian, as PutFixed32
  PutFixed64(&table, FastChecksum(table, FrameTableSeed(id)));
  out->assign(table);
  out->append(frames);
}

Result<FrameTable> DecodeFrameTable(const Hash& id, std::string_view prefix, uint64_t raw_len, uint64_t stored_len,
                                    uint64_t* table_len) {
  if (stored_len < kMinFrameTableSize) return Bad("object shorter than a table");
  if (prefix.size() < 4) {
    *table_len = kMinFrameTableSize;
    return Status::NotFound("frame table needs more bytes");
  }
  const uint64_t len = DecodeFixed32(prefix.data());
  if (len < kMinFrameTableSize || len > stored_len) return Bad("table length outside the object");
  *table_len = len;
  if (prefix.size() < len) return Status::NotFound("frame table needs more bytes");
  const std::string_view bytes = prefix.substr(0, len);
  if (DecodeFixed64(bytes.data() + len - 8) != FastChecksum(bytes.substr(0, len - 8), FrameTableSeed(id)))
    return Status::Corruption("frame table does not match its checksum (XXH3)");

  FrameTable t;
  t.raw_len = raw_len;
  t.table_len = len;
  Decoder d(bytes.substr(4, len - 12));
  uint8_t shift;
  uint64_t count;
  if (!d.GetByte(&shift) || !d.GetVarint(&count)) return Bad("truncated header");
  if (shift < kMinFrameShift || shift > kMaxFrameShift) return Bad("frame size out of range");
  t.frame_shift = shift;
  if (count != (raw_len + t.frame_size() - 1) / t.frame_size()) return Bad("frame count does not match the length");
  constexpr size_t kMinFrameEntry = 1 + 1 + 8;
  if (count > d.remaining() / kMinFrameEntry) return Bad("frame count exceeds the table");
  t.frames.resize(count);
  uint64_t offset = len;
  for (size_t i = 0; i < count; i++) {
    FrameInfo& f = t.frames[i];
    uint8_t codec;
    if (!d.GetByte(&codec) || !d.GetVarint(&f.stored_len) || !d.GetFixed64(&f.checksum)) return Bad("truncated frame");
    if (codec > static_cast<uint8_t>(Codec::kZstd)) return Bad("unknown frame codec");
    f.codec = static_cast<Codec>(codec);
    if (f.stored_len > stored_len - offset) return Bad("frames run past the object");
    if (f.codec == Codec::kRaw && f.stored_len != t.PlainLength(i)) return Bad("raw frame of the wrong length");
    f.stored_offset = offset;
    offset += f.stored_len;
  }
  if (!d.empty()) return Bad("trailing bytes");
  if (offset != stored_len) return Bad("frames do not fill the object");
  return t;
}

Status CheckFramesDecodable(const FrameTable& table, std::string_view stored) {
  for (size_t i = 0; i < table.frames.size(); i++) {
    const FrameInfo& f = table.frames[i];
    STRATA_RETURN_IF_ERROR(CheckDecodable(f.codec, stored.substr(f.stored_offset, f.stored_len), table.PlainLength(i)));
  }
  return Status::Ok();
}

Status DecodeFrame(const FrameTable& table, size_t i, std::string_view stored_frame, char* out) {
  const FrameInfo& f = table.frames[i];
  if (stored_frame.size() != f.stored_len) return Status::Corruption("frame has the wrong length");
  if (FastChecksum(stored_frame) != f.checksum)
    return Status::Corruption("frame " + std::to_string(i) + " does not match its checksum (XXH3)");
  const uint64_t plain = table.PlainLength(i);
  STRATA_RETURN_IF_ERROR(CheckDecodable(f.codec, stored_frame, plain));
  return DecompressInto(f.codec, stored_frame, plain, out);
}

Status DecodeFramedInto(const Hash& id, std::string_view stored, uint64_t raw_len, char* out) {
  uint64_t table_len = 0;
  STRATA_ASSIGN_OR_RETURN(FrameTable t, DecodeFrameTable(id, stored, raw_len, stored.size(), &table_len));
  STRATA_RETURN_IF_ERROR(CheckFramesDecodable(t, stored));
  for (size_t i = 0; i < t.frames.size(); i++) {
    const FrameInfo& f = t.frames[i];
    STRATA_RETURN_IF_ERROR(DecodeFrame(t, i, stored.substr(f.stored_offset, f.stored_len), out + t.PlainOffset(i)));
  }
  return Status::Ok();
}

}  // namespace strata
