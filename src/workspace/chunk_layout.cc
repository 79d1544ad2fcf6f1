#include "workspace/chunk_layout.h"

#include <algorithm>

namespace strata::workspace_internal {
namespace {

uint64_t Overlap(const std::vector<Extent>& ranges, uint64_t start, uint64_t end) {
  uint64_t n = 0;
  for (const Extent& r : ranges) {
    if (r.start >= end) break;
    if (r.end > start) n += std::min(r.end, end) - std::max(r.start, start);
  }
  return n;
}

uint64_t Total(const std::vector<Extent>& ranges) {
  uint64_t n = 0;
  for (const Extent& r : ranges) n += r.end - r.start;
  return n;
}

}  // namespace

bool FixedLayoutPossible(const ChunkerParams& params) { return params.min_size > kFixedChunkSize; }

bool HasFixedShape(const std::vector<ChunkRef>& chunks) {
  if (chunks.size() < 2 || chunks.back().length == 0 || chunks.back().length > kFixedChunkSize) return false;
  return std::all_of(chunks.begin(), chunks.end() - 1, [](const ChunkRef& c) { return c.length == kFixedChunkSize; });
}

LayoutCosts EstimateCosts(const ChunkerParams& params, const RechunkInput& in, const std::vector<uint64_t>& starts,
                          const std::vector<Extent>& zeros) {
  LayoutCosts costs;
  costs.written = Total(in.written) - Total(in.holes);
  costs.fixed = in.size - std::min(in.size, Total(zeros));
  // Old chunks below base_len that written data touches are chunked again
  // whole; past them, content-defined chunking cuts about every avg_size
  // bytes. Known zeros cost nothing either way (rechunk.h).
  const uint64_t old_end = std::min({starts.back(), in.base_len, in.size});
  size_t i = 0;        // the first old chunk not yet counted
  uint64_t block = 0;  // the first avg_size block past old_end not yet counted
  for (const Extent& w : Uncovered(in.written, zeros)) {
    for (; i + 1 < starts.size() && starts[i] < std::min(w.end, old_end); i++) {
      if (starts[i + 1] > w.start) costs.content_defined += starts[i + 1] - starts[i];
    }
    if (w.end <= old_end) continue;
    const uint64_t from = std::max({w.start, old_end, block * params.avg_size});
    if (from >= w.end) continue;
    const uint64_t first = from / params.avg_size, last = (w.end - 1) / params.avg_size;
    costs.content_defined += (last - first + 1) * params.avg_size;
    block = last + 1;
  }
  return costs;
}

ChunkLayout ChooseLayout(const ChunkerParams& params, const RechunkInput& in, const LayoutCosts& costs) {
  if (!FixedLayoutPossible(params) || in.size == 0) return ChunkLayout::kContentDefined;
  const uint64_t kept = std::min(in.base_len, in.size);
  if (kept > 0 && HasFixedShape(in.old_chunks) && Overlap(in.written, 0, kept) < kept) return ChunkLayout::kFixed;
  if (in.size < kFixedMinFileSize) return ChunkLayout::kContentDefined;
  if (costs.content_defined > 4 * costs.written && costs.fixed <= 2 * costs.content_defined) return ChunkLayout::kFixed;
  return ChunkLayout::kContentDefined;
}

}  // namespace strata::workspace_internal
