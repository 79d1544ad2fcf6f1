#include "store/codec.h"

#include <cstring>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_frameHeaderSize, ZSTD_BLOCKSIZE_MAX
#include <zstd.h>

#include <memory>

namespace strata {
namespace {
// One context per thread: creating one per call costs more than compressing a
// small file. The holders free them when their thread exits.
struct CompressContext {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ~CompressContext() { ZSTD_freeCCtx(ctx); }
};
struct DecompressContext {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~DecompressContext() { ZSTD_freeDCtx(ctx); }
};

// The most bytes a zstd frame's blocks can decode to, read from their headers
// (a raw or RLE block says exactly, a compressed one holds at most
// ZSTD_BLOCKSIZE_MAX); 0 when the blocks are malformed or run past the end.
// The frame header's content size is a claim like any other: this bounds it
// by the bytes actually there, before anything is allocated.
uint64_t FrameOutputBound(std::string_view frame) {
  size_t pos = ZSTD_frameHeaderSize(frame.data(), frame.size());
  if (ZSTD_isError(pos) || pos > frame.size()) return 0;
  uint64_t bound = 0;
  for (;;) {
    if (frame.size() - pos < 3) return 0;
    const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(frame[pos + i])); };
    const uint32_t header = byte(0) | byte(1) << 8 | byte(2) << 16;
    pos += 3;
    const uint32_t size = header >> 3;
    size_t input;  // bytes of the block after its header
    switch ((header >> 1) & 3) {
      case 0: bound += size, input = size; break;               // raw
      case 1: bound += size, input = 1; break;                  // RLE: one byte repeated
      case 2: bound += ZSTD_BLOCKSIZE_MAX, input = size; break;  // compressed
      default: return 0;                                        // reserved
    }
    if (frame.size() - pos < input) return 0;
    pos += input;
    if (header & 1) return bound;  // last block
  }
}
}  // namespace

bool IsValidCodec(uint8_t c) { return c <= 3; }

Codec Compress(std::string_view data, int level, std::string* out) {
  // Tiny objects never shrink enough to pay for a frame header.
  if (data.size() >= 64 && level > 0) {
    thread_local CompressContext cctx;
    // Compress into a per-thread scratch buffer: sizing *out to the bound
    // first would zero-fill it on every call.
    thread_local std::unique_ptr<char[]> scratch;
    thread_local size_t scratch_size = 0;
    size_t bound = ZSTD_compressBound(data.size());
    if (scratch_size < bound) {
      scratch.reset(new char[bound]);
      scratch_size = bound;
    }
    size_t n = ZSTD_compressCCtx(cctx.ctx, scratch.get(), bound, data.data(), data.size(), level);
    if (!ZSTD_isError(n) && n < data.size()) {
      out->assign(scratch.get(), n);
      return Codec::kZstd;
    }
  }
  out->assign(data);
  return Codec::kRaw;
}

Status CheckDecodable(Codec codec, std::string_view stored, uint64_t raw_len) {
  switch (codec) {
    case Codec::kRaw:
      if (stored.size() != raw_len) return Status::Corruption("raw object has the wrong length");
      return Status::Ok();
    case Codec::kZstd: {
      // Bound the allocation by what the frame itself claims as well as raw_len,
      // so a lying index cannot make us allocate without limit.
      unsigned long long frame = ZSTD_getFrameContentSize(stored.data(), stored.size());
      if (frame == ZSTD_CONTENTSIZE_ERROR || frame == ZSTD_CONTENTSIZE_UNKNOWN || frame != raw_len)
        return Status::Corruption("zstd frame does not match the recorded length");
      // Both claims agree, and may both lie: a few bytes claiming 256 MiB.
      if (FrameOutputBound(stored) < raw_len)
        return Status::Corruption("zstd frame's blocks cannot hold the recorded length");
      return Status::Ok();
    }
    case Codec::kFramed:
      return Status::Corruption("a framed object is not one frame (frame_format.h decodes it)");
    case Codec::kSealed:
      return Status::Corruption("a sealed object is not one frame (it is opened with the store's key)");
  }
  return Status::Corruption("unknown codec " + std::to_string(static_cast<int>(codec)));
}

Status DecompressInto(Codec codec, std::string_view stored, uint64_t raw_len, char* out) {
  if (codec == Codec::kRaw) {
    std::memcpy(out, stored.data(), raw_len);
    return Status::Ok();
  }
  thread_local DecompressContext dctx;
  size_t n = ZSTD_decompressDCtx(dctx.ctx, out, raw_len, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_len)
    return Status::Corruption(std::string("zstd cannot decode the object: ") +
                              (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output"));
  return Status::Ok();
}

Status Decompress(Codec codec, std::string_view stored, uint64_t raw_len, std::string* out) {
  STRATA_RETURN_IF_ERROR(CheckDecodable(codec, stored, raw_len));
  out->resize(raw_len);
  return DecompressInto(codec, stored, raw_len, out->data());
}

}  // namespace strata
