// frame_sizes: what the frame size of framed objects (docs/format/frames.md)
// costs and saves, on the CPU alone (no disk, no FUSE), to choose it.
//
// Usage: frame_sizes FILE...   (their bytes are concatenated, then cut into
// chunks by the store's chunker at its default sizes)
//
// For each frame size, and for one frame per chunk (what pack format 1 did,
// as far as decoding goes): the stored bytes over the plain bytes; the time to
// serve a random 4 KiB read from a chunk (parse the table, check and decode
// the frames that hold it); and the throughput of decoding whole chunks
// (what a sequential reader pays, best of 5 passes), with the XXH3 checks
// included. Chunks are at most 2 MiB (the chunker's max_size).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "store/chunker.h"
#include "store/frame_format.h"
#include "store/object.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Chunk {
  strata::Hash id;
  std::string plain, stored;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: frame_sizes FILE...\n");
    return 2;
  }
  std::string data;
  for (int i = 1; i < argc; i++) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "frame_sizes: cannot read %s\n", argv[i]);
      return 1;
    }
    data.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  strata::Chunker chunker{strata::ChunkerParams{}};
  std::vector<Chunk> chunks;
  for (size_t pos = 0; pos < data.size();) {
    const size_t cut = chunker.NextCut(reinterpret_cast<const uint8_t*>(data.data()) + pos, data.size() - pos);
    Chunk c;
    c.plain = data.substr(pos, cut);
    c.id = strata::ComputeObjectId(strata::ObjectType::kChunk, c.plain);
    chunks.push_back(std::move(c));
    pos += cut;
  }
  std::printf("%zu bytes in %zu chunks\n", data.size(), chunks.size());
  std::printf("| frame size | stored / plain | random 4 KiB read, us (median) | whole-chunk decode, MB/s |\n");
  std::printf("|---|---|---|---|\n");
  for (unsigned shift : {14u, 15u, 16u, 17u, 18u, 19u, 24u}) {
    uint64_t stored = 0;
    for (Chunk& c : chunks) {
      strata::EncodeFramed(c.id, c.plain, 3, shift, &c.stored);
      stored += c.stored.size();
    }
    // Random 4 KiB reads: one chunk and one offset each, decoded from its stored bytes.
    std::mt19937_64 rng(1);
    std::vector<double> us;
    std::string out;
    for (int i = 0; i < 2000; i++) {
      const Chunk& c = chunks[rng() % chunks.size()];
      if (c.plain.size() < 4096) continue;
      const uint64_t off = rng() % (c.plain.size() - 4096 + 1);
      const auto start = Clock::now();
      uint64_t table_len = 0;
      auto table = strata::DecodeFrameTable(c.id, c.stored, c.plain.size(), c.stored.size(), &table_len);
      if (!table.ok()) return 1;
      const size_t first = table->FirstFrame(off), last = table->LastFrame(off, 4096);
      out.resize(table->PlainOffset(last) + table->PlainLength(last) - table->PlainOffset(first));
      for (size_t f = first; f <= last; f++) {
        const strata::FrameInfo& fi = table->frames[f];
        if (!strata::DecodeFrame(*table, f, std::string_view(c.stored).substr(fi.stored_offset, fi.stored_len),
                                 out.data() + (table->PlainOffset(f) - table->PlainOffset(first)))
                 .ok())
          return 1;
      }
      us.push_back(Seconds(start) * 1e6);
    }
    std::sort(us.begin(), us.end());
    // Whole chunks, as a sequential reader decodes them: the best of 5 passes
    // (on a shared machine the others measure the neighbours).
    double mbps = 0;
    out.resize(2 << 20);
    for (int pass = 0; pass < 5; pass++) {
      const auto start = Clock::now();
      for (const Chunk& c : chunks) {
        if (!strata::DecodeFramedInto(c.id, c.stored, c.plain.size(), out.data()).ok()) return 1;
      }
      mbps = std::max(mbps, data.size() / Seconds(start) / 1e6);
    }
    const std::string label = shift == 24 ? "one per chunk" : std::to_string((1u << shift) >> 10) + " KiB";
    std::printf("| %s | %.4f | %.1f | %.0f |\n", label.c_str(), static_cast<double>(stored) / data.size(),
                us.empty() ? 0.0 : us[us.size() / 2], mbps);
  }
  return 0;
}
