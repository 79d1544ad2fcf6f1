#include "store/chunker.h"

#include <array>

namespace strata {
namespace {

// splitmix64: a fixed, documented generator for the gear table, so the table
// is reproducible from its seed instead of being 256 magic constants.
constexpr uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t kGearSeed = 0x5354524154413031ULL;  // "STRATA01"

constexpr GearTable MakeGearTable() {
  GearTable table{};
  uint64_t state = kGearSeed;
  for (auto& v : table) v = SplitMix64(state);
  return table;
}

constexpr GearTable kGear = MakeGearTable();

int Log2(size_t v) {
  int bits = 0;
  while (v > 1) {
    v >>= 1;
    bits++;
  }
  return bits;
}

// A mask of the top `bits` bits: the gear hash shifts left each byte, so its top
// bits depend on the most bytes (the last 64), which gives the best cut points.
uint64_t TopBits(int bits) { return bits <= 0 ? 0 : ~0ULL << (64 - bits); }

}  // namespace

bool ChunkerParams::Valid() const {
  bool pow2 = avg_size != 0 && (avg_size & (avg_size - 1)) == 0;
  return pow2 && min_size >= 64 && min_size < avg_size && avg_size < max_size &&
         max_size <= 64 * 1024 * 1024;
}

const GearTable& Chunker::DefaultGearTable() { return kGear; }

Chunker::Chunker(const ChunkerParams& params) : Chunker(params, kGear) {}

Chunker::Chunker(const ChunkerParams& params, const GearTable& gear) : params_(params), gear_(gear) {
  int bits = Log2(params.avg_size);
  // Normalization level 2: two bits stricter before the average, two looser after.
  mask_small_ = TopBits(bits + 2);
  mask_large_ = TopBits(bits - 2);
}

size_t Chunker::NextCut(const uint8_t* data, size_t n) const {
  if (n <= params_.min_size) return n;
  const size_t end = n < params_.max_size ? n : params_.max_size;
  const size_t normal = params_.avg_size < end ? params_.avg_size : end;
  uint64_t h = 0;
  size_t i = params_.min_size;
  for (; i < normal; i++) {
    h = (h << 1) + gear_[data[i]];
    if ((h & mask_small_) == 0) return i + 1;
  }
  for (; i < end; i++) {
    h = (h << 1) + gear_[data[i]];
    if ((h & mask_large_) == 0) return i + 1;
  }
  return end;
}

}  // namespace strata
