// The pack file format (docs/format/pack.md).
//
//   header   "STRATAPK" | version fixed32 | reserved fixed32 (0)          16 bytes
//   payload  the stored bytes of each object, back to back
//   footer   count varint, then per object:
//              type u8 | codec u8 | id 32 bytes | offset varint | stored_len varint | raw_len varint
//   trailer  footer_offset fixed64 | footer_len fixed64 | "STRATAPK" | sha256 32 bytes   56 bytes
//
// The sha256 covers every byte before it; its hex form is the pack's file name,
// so a pack is an immutable, self-verifying blob that any object store can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/codec.h"
#include "store/object.h"
#include "util/hash.h"
#include "util/status.h"

namespace strata {

constexpr char kPackMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'P', 'K'};
// Version 2 adds framed objects (codec kFramed, frame_format.h); this store
// writes version 2 and still reads version 1 packs, whose objects are checked
// by their SHA-256 id on every read.
constexpr uint32_t kPackVersion = 2;
constexpr uint32_t kOldestPackVersion = 1;
constexpr size_t kPackHeaderSize = 16;
constexpr size_t kPackTrailerSize = 56;
constexpr const char* kPackSuffix = ".pack";
// Objects larger than this are refused on read: a lying length cannot make us
// allocate without bound. Chunks are at most a few MiB; trees stay well below.
constexpr uint64_t kMaxObjectSize = 256ull << 20;

struct PackEntry {
  Hash id;
  ObjectType type = ObjectType::kChunk;
  Codec codec = Codec::kRaw;
  uint64_t offset = 0;
  uint64_t stored_len = 0;
  uint64_t raw_len = 0;
};

std::string EncodePackHeader(uint32_t version = kPackVersion);
std::string EncodePackFooter(const std::vector<PackEntry>& entries);
// Decodes a footer; checks that every entry lies inside [kPackHeaderSize, footer_offset).
Result<std::vector<PackEntry>> DecodePackFooter(std::string_view footer, uint64_t footer_offset);

struct PackTrailer {
  uint64_t footer_offset = 0;
  uint64_t footer_len = 0;
  Hash checksum;
};
// REQUIRES: trailer.size() == kPackTrailerSize. Checks the magic and bounds.
Result<PackTrailer> DecodePackTrailer(std::string_view trailer, uint64_t file_size);

// "<hex>.pack" -> hash; nullopt for any other name.
std::optional<Hash> PackNameToHash(std::string_view file_name);

}  // namespace strata
