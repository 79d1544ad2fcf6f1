// Codecs: how an object's bytes are stored inside a pack.
//
// Each stored object records its codec, so stores can mix them and change the
// default later. Compress() keeps the raw bytes whenever zstd does not make them
// smaller, so reading incompressible data costs a copy, not a decode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace strata {

// kRaw and kZstd store an object as one piece (pack format version 1, and
// the frames of a framed object); kFramed is a table of checksummed frames,
// each raw or zstd (frame_format.h), which this store writes since version 2.
// kSealed is a framed object sealed with AES-256-GCM, the one codec of an
// encrypted store (store_cipher.h). The functions below handle kRaw and kZstd;
// kFramed is frame_format's, kSealed the cipher's.
enum class Codec : uint8_t { kRaw = 0, kZstd = 1, kFramed = 2, kSealed = 3 };

bool IsValidCodec(uint8_t c);  // any of the four

// Chooses the codec for data: zstd at `level` if that is smaller, else raw.
// Returns the codec used; *out holds the stored bytes.
Codec Compress(std::string_view data, int level, std::string* out);

// Restores the raw bytes. raw_len is the expected size from the index or pack
// footer; a different decoded size, or undecodable bytes, is Corruption.
Status Decompress(Codec codec, std::string_view stored, uint64_t raw_len, std::string* out);

// The two halves of Decompress, for callers that bring their own memory:
// CheckDecodable says, before anything is allocated, whether stored can
// decode to raw_len bytes as far as its headers tell; DecompressInto then
// decodes into out[0, raw_len) and finds whatever the headers did not show.
// REQUIRES (DecompressInto): CheckDecodable(codec, stored, raw_len) is ok.
Status CheckDecodable(Codec codec, std::string_view stored, uint64_t raw_len);
Status DecompressInto(Codec codec, std::string_view stored, uint64_t raw_len, char* out);

}  // namespace strata
