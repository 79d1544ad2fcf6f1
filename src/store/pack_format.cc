#include "store/pack_format.h"

#include <cstring>

#include "util/coding.h"

namespace strata {

std::string EncodePackHeader(uint32_t version) {
  std::string out(kPackMagic, sizeof(kPackMagic));
  PutFixed32(&out, version);
  PutFixed32(&out, 0);
  return out;
}

std::string EncodePackFooter(const std::vector<PackEntry>& entries) {
  std::string out;
  PutVarint(&out, entries.size());
  for (const PackEntry& e : entries) {
    out.push_back(static_cast<char>(e.type));
    out.push_back(static_cast<char>(e.codec));
    out.append(reinterpret_cast<const char*>(e.id.bytes.data()), Hash::kSize);
    PutVarint(&out, e.offset);
    PutVarint(&out, e.stored_len);
    PutVarint(&out, e.raw_len);
  }
  return out;
}

Result<std::vector<PackEntry>> DecodePackFooter(std::string_view footer, uint64_t footer_offset) {
  auto bad = [](const std::string& why) { return Status::Corruption("malformed pack footer: " + why); };
  Decoder d(footer);
  uint64_t count;
  if (!d.GetVarint(&count)) return bad("truncated count");
  constexpr size_t kMinEntry = 2 + Hash::kSize + 3;
  if (count > d.remaining() / kMinEntry) return bad("entry count exceeds the footer");
  std::vector<PackEntry> entries(count);
  for (PackEntry& e : entries) {
    uint8_t type, codec;
    std::string_view id;
    if (!d.GetByte(&type) || !d.GetByte(&codec) || !d.GetBytes(Hash::kSize, &id) || !d.GetVarint(&e.offset) ||
        !d.GetVarint(&e.stored_len) || !d.GetVarint(&e.raw_len))
      return bad("truncated entry");
    if (!IsValidObjectType(type) || !IsValidCodec(codec)) return bad("unknown object type or codec");
    if (e.offset < kPackHeaderSize || e.stored_len > footer_offset || e.offset > footer_offset - e.stored_len)
      return bad("entry outside the payload");
    if (e.raw_len > kMaxObjectSize) return bad("object larger than the format allows");
    e.type = static_cast<ObjectType>(type);
    e.codec = static_cast<Codec>(codec);
    e.id = Hash::FromBytes(id.data());
  }
  if (!d.empty()) return bad("trailing bytes");
  return entries;
}

Result<PackTrailer> DecodePackTrailer(std::string_view trailer, uint64_t file_size) {
  if (trailer.size() != kPackTrailerSize || file_size < kPackHeaderSize + kPackTrailerSize)
    return Status::Corruption("pack is too short to hold a trailer");
  PackTrailer t;
  t.footer_offset = DecodeFixed64(trailer.data());
  t.footer_len = DecodeFixed64(trailer.data() + 8);
  if (std::memcmp(trailer.data() + 16, kPackMagic, sizeof(kPackMagic)) != 0)
    return Status::Corruption("pack trailer has no magic (truncated or not a pack)");
  t.checksum = Hash::FromBytes(trailer.data() + 24);
  const uint64_t trailer_start = file_size - kPackTrailerSize;
  if (t.footer_offset < kPackHeaderSize || t.footer_offset > trailer_start ||
      t.footer_len != trailer_start - t.footer_offset)
    return Status::Corruption("pack trailer points outside the file");
  return t;
}

std::optional<Hash> PackNameToHash(std::string_view file_name) {
  const std::string_view suffix = kPackSuffix;
  if (file_name.size() != Hash::kSize * 2 + suffix.size() || !file_name.ends_with(suffix)) return std::nullopt;
  return Hash::FromHex(file_name.substr(0, Hash::kSize * 2));
}

}  // namespace strata
