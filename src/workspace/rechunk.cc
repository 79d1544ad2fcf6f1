#include "workspace/rechunk.h"

#include <algorithm>
#include <string>

namespace strata::workspace_internal {
namespace {

// Whether [start, end) overlaps any written range (sorted by start).
bool Touched(const std::vector<Extent>& written, uint64_t start, uint64_t end) {
  auto it = std::upper_bound(written.begin(), written.end(), start,
                             [](uint64_t v, const Extent& e) { return v < e.end; });
  return it != written.end() && it->start < end;
}

}  // namespace

Result<std::vector<ChunkRef>> Rechunk(const Chunker& chunker, const RechunkInput& in, const ReadContent& read,
                                      const PutChunk& put, uint64_t* bytes_hashed) {
  *bytes_hashed = 0;
  // Old chunk i covers [starts[i], starts[i+1]).
  std::vector<uint64_t> starts{0};
  for (const ChunkRef& c : in.old_chunks) starts.push_back(starts.back() + c.length);
  const uint64_t old_size = starts.back();
  // An old chunk can be taken as it is when its bytes are all still there and
  // unchanged, and its end is a cut the content made (the old file's last
  // chunk ends where that file ended, which is no cut if the file grew).
  auto reusable = [&](size_t i) {
    const uint64_t s = starts[i], e = starts[i + 1];
    if (e > in.base_len || e > in.size || Touched(in.written, s, e)) return false;
    return e != old_size || in.size == old_size;
  };

  std::vector<ChunkRef> out;
  std::string window;
  const size_t max = chunker.params().max_size;
  uint64_t pos = 0;
  size_t next_old = 0;  // the first old chunk starting at or after pos
  while (pos < in.size) {
    while (next_old < in.old_chunks.size() && starts[next_old] < pos) next_old++;
    if (next_old < in.old_chunks.size() && starts[next_old] == pos && reusable(next_old)) {
      out.push_back(in.old_chunks[next_old]);
      pos = starts[next_old + 1];
      continue;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(max, in.size - pos));
    window.resize(n);
    STRATA_RETURN_IF_ERROR(read(pos, n, window.data()));
    const size_t cut = chunker.NextCut(reinterpret_cast<const uint8_t*>(window.data()), n);
    STRATA_ASSIGN_OR_RETURN(Hash id, put(std::string_view(window.data(), cut)));
    out.push_back(ChunkRef{id, cut});
    *bytes_hashed += cut;
    pos += cut;
  }
  return out;
}

}  // namespace strata::workspace_internal
