#include "workspace/rechunk.h"

#include <algorithm>
#include <string>

#include "workspace/chunk_layout.h"

namespace strata::workspace_internal {
namespace {

// Whether [start, end) overlaps any written range (sorted by start).
bool Touched(const std::vector<Extent>& written, uint64_t start, uint64_t end) {
  auto it = std::upper_bound(written.begin(), written.end(), start,
                             [](uint64_t v, const Extent& e) { return v < e.end; });
  return it != written.end() && it->start < end;
}

// Sorted, disjoint ranges of the new content known to be zeros without reading
// them: bytes at or past base_len never written, holes in written ranges, and
// untouched old chunks that are a zero chunk (content-defined or fixed).
std::vector<Extent> KnownZeros(const RechunkInput& in, const std::vector<uint64_t>& starts, ZeroChunk& zero) {
  std::vector<Extent> z = in.holes;
  uint64_t pos = std::min(in.base_len, in.size);
  for (const Extent& w : in.written) {
    if (pos >= in.size) break;
    if (w.end <= pos) continue;
    if (w.start > pos) z.push_back(Extent{pos, std::min(w.start, in.size)});
    pos = w.end;
  }
  if (pos < in.size) z.push_back(Extent{pos, in.size});
  for (size_t i = 0; i < in.old_chunks.size(); i++) {
    const uint64_t s = starts[i], e = starts[i + 1];
    if (e > in.base_len || e > in.size) break;
    const ChunkRef& c = in.old_chunks[i];
    const bool zeros = c.length == kFixedChunkSize ? c == zero.fixed() : c.length == zero.length() && c.id == zero.id();
    if (zeros && !Touched(in.written, s, e)) z.push_back(Extent{s, e});
  }
  std::sort(z.begin(), z.end(), [](const Extent& a, const Extent& b) { return a.start < b.start; });
  std::vector<Extent> merged;
  for (const Extent& e : z) {
    if (e.start >= e.end) continue;
    if (!merged.empty() && e.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, e.end);
    } else {
      merged.push_back(e);
    }
  }
  return merged;
}

// Where the known zeros that contain pos end (pos itself if none do).
uint64_t ZerosUntil(const std::vector<Extent>& zeros, uint64_t pos) {
  auto it = std::upper_bound(zeros.begin(), zeros.end(), pos, [](uint64_t v, const Extent& e) { return v < e.start; });
  if (it == zeros.begin()) return pos;
  --it;
  return it->end > pos ? it->end : pos;
}

// The new content cut at fixed offsets: an old chunk at the same offset and
// of the same length that no write touched is taken as it is; a chunk of
// known zeros is the fixed zero chunk; every other one is read and hashed.
Result<std::vector<ChunkRef>> RechunkFixed(ZeroChunk& zero, const RechunkInput& in, const std::vector<uint64_t>& starts,
                                           const std::vector<Extent>& zeros, const ReadContent& read,
                                           const PutChunk& put, uint64_t* bytes_hashed) {
  const bool old_fixed = HasFixedShape(in.old_chunks);
  std::vector<ChunkRef> out;
  out.reserve((in.size + kFixedChunkSize - 1) / kFixedChunkSize);
  std::string buf(kFixedChunkSize, '\0');
  for (uint64_t pos = 0; pos < in.size; pos += kFixedChunkSize) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kFixedChunkSize, in.size - pos));
    const size_t j = pos / kFixedChunkSize;
    if (old_fixed && j < in.old_chunks.size() && in.old_chunks[j].length == n && starts[j + 1] <= in.base_len &&
        !Touched(in.written, pos, pos + n)) {
      out.push_back(in.old_chunks[j]);
      continue;
    }
    if (n == kFixedChunkSize && ZerosUntil(zeros, pos) >= pos + n) {
      if (!zero.fixed_stored) {
        STRATA_ASSIGN_OR_RETURN(Hash id, put(std::string(kFixedChunkSize, '\0')));
        if (id != zero.fixed().id) return Status::Corruption("the fixed zero chunk was stored under another id");
        *bytes_hashed += kFixedChunkSize;
        zero.fixed_stored = true;
      }
      out.push_back(zero.fixed());
      continue;
    }
    STRATA_RETURN_IF_ERROR(read(pos, n, buf.data()));
    STRATA_ASSIGN_OR_RETURN(Hash id, put(std::string_view(buf.data(), n)));
    out.push_back(ChunkRef{id, n});
    *bytes_hashed += n;
  }
  return out;
}

}  // namespace

std::vector<Extent> Uncovered(const std::vector<Extent>& ranges, const std::vector<Extent>& cover) {
  std::vector<Extent> out;
  size_t c = 0;
  for (const Extent& r : ranges) {
    uint64_t pos = r.start;
    while (c < cover.size() && cover[c].end <= pos) c++;
    for (size_t i = c; i < cover.size() && cover[i].start < r.end; i++) {
      if (cover[i].start > pos) out.push_back(Extent{pos, cover[i].start});
      pos = std::max(pos, cover[i].end);
    }
    if (pos < r.end) out.push_back(Extent{pos, r.end});
  }
  return out;
}

const ChunkRef& ZeroChunk::Get() {
  if (!chunk_) {
    const std::string zeros(chunker_.params().max_size, '\0');
    const size_t cut = chunker_.NextCut(reinterpret_cast<const uint8_t*>(zeros.data()), zeros.size());
    chunk_ = ChunkRef{id_of_(std::string_view(zeros.data(), cut)), cut};
  }
  return *chunk_;
}

const ChunkRef& ZeroChunk::fixed() {
  if (!fixed_) fixed_ = ChunkRef{id_of_(std::string(kFixedChunkSize, '\0')), kFixedChunkSize};
  return *fixed_;
}

Result<std::vector<ChunkRef>> Rechunk(const Chunker& chunker, ZeroChunk& zero, const RechunkInput& in,
                                      const ReadContent& read, const PutChunk& put, uint64_t* bytes_hashed) {
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

  const size_t max = chunker.params().max_size;
  // A file shorter than max_size holds no window of zeros to skip.
  const std::vector<Extent> zeros = in.size >= max ? KnownZeros(in, starts, zero) : std::vector<Extent>();
  if (ChooseLayout(chunker.params(), in, EstimateCosts(chunker.params(), in, starts, zeros)) == ChunkLayout::kFixed)
    return RechunkFixed(zero, in, starts, zeros, read, put, bytes_hashed);

  std::vector<ChunkRef> out;
  // The content [window_pos, window_pos + window.size()): a cut falls a
  // quarter of the way into a max_size window on average, so the bytes after
  // it are kept for the next chunk rather than read again.
  std::string window;
  uint64_t window_pos = 0;
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
    if (ZerosUntil(zeros, pos) >= pos + n) {
      if (n == max) {
        if (!zero.stored) {
          STRATA_ASSIGN_OR_RETURN(Hash id, put(std::string(zero.length(), '\0')));
          if (id != zero.id()) return Status::Corruption("the zero chunk was stored under another id");
          *bytes_hashed += zero.length();
          zero.stored = true;
        }
        out.push_back(ChunkRef{zero.id(), zero.length()});
        pos += zero.length();
        continue;
      }
      window.assign(n, '\0');  // the file ends in zeros: nothing to read
    } else {
      if (pos >= window_pos && pos < window_pos + window.size()) {
        window.erase(0, pos - window_pos);
      } else {
        window.clear();
      }
      const size_t have = std::min(window.size(), n);
      window.resize(n);
      if (have < n) STRATA_RETURN_IF_ERROR(read(pos + have, n - have, window.data() + have));
    }
    window_pos = pos;
    const size_t cut = chunker.NextCut(reinterpret_cast<const uint8_t*>(window.data()), n);
    STRATA_ASSIGN_OR_RETURN(Hash id, put(std::string_view(window.data(), cut)));
    out.push_back(ChunkRef{id, cut});
    *bytes_hashed += cut;
    pos += cut;
  }
  return out;
}

}  // namespace strata::workspace_internal
