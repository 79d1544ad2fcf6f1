// gc_store_gen: fills a new store with many small objects for the gc benchmark.
//
//   gc_store_gen STORE OBJECTS BRANCHES
//
// Creates STORE and B branches b000, b001, ... each holding one commit of
// about OBJECTS/B objects: directories of 100 one-chunk files (64-byte
// pseudo-random chunks, so objects, not bytes, dominate). A tenth of each
// branch's files are the same in every branch, as real histories share data.
// Prints the number of objects stored.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "store/store.h"

namespace {

std::string Chunk(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(64, '\0');
  for (size_t i = 0; i < out.size(); i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8; j++) out[i + j] = static_cast<char>(v >> (8 * j));
  }
  return out;
}

void Check(const strata::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "gc_store_gen: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

strata::Hash PutOrDie(strata::Store& store, strata::ObjectType type, const std::string& data, uint64_t* count) {
  auto put = store.Put(type, data);
  Check(put.status(), "put");
  if (put->stored) (*count)++;
  return put->id;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gc_store_gen STORE OBJECTS BRANCHES\n");
    return 2;
  }
  const std::string path = argv[1];
  const uint64_t objects = std::strtoull(argv[2], nullptr, 10), branches = std::strtoull(argv[3], nullptr, 10);
  if (objects == 0 || branches == 0 || branches > 999) {
    std::fprintf(stderr, "gc_store_gen: OBJECTS must be > 0 and BRANCHES in 1..999\n");
    return 2;
  }
  Check(strata::Store::Init(path, strata::StoreConfig()), "init");
  auto opened = strata::Store::Open(path);
  Check(opened.status(), "open");
  strata::Store& store = **opened;

  constexpr uint64_t kFilesPerDir = 100;
  const uint64_t dirs = std::max<uint64_t>(1, objects / branches / (kFilesPerDir + 1));
  uint64_t stored = 0;
  for (uint64_t b = 0; b < branches; b++) {
    auto session = store.BeginWrite();
    Check(session.status(), "write session");
    strata::Tree root;
    for (uint64_t d = 0; d < dirs; d++) {
      strata::Tree dir;
      for (uint64_t f = 0; f < kFilesPerDir; f++) {
        // Every tenth directory is shared by all branches.
        uint64_t seed = d % 10 == 0 ? (d * kFilesPerDir + f) : ((b + 1) << 40) + d * kFilesPerDir + f;
        std::string data = Chunk(seed);
        strata::TreeEntry e;
        char name[32];
        std::snprintf(name, sizeof(name), "f%03llu", static_cast<unsigned long long>(f));
        e.name = name;
        e.kind = strata::EntryKind::kFile;
        e.mode = 0644;
        e.size = data.size();
        e.chunks.push_back({PutOrDie(store, strata::ObjectType::kChunk, data, &stored), data.size()});
        dir.entries.push_back(std::move(e));
      }
      strata::TreeEntry de;
      char name[32];
      std::snprintf(name, sizeof(name), "d%06llu", static_cast<unsigned long long>(d));
      de.name = name;
      de.kind = strata::EntryKind::kDirectory;
      de.mode = 0755;
      de.subtree = PutOrDie(store, strata::ObjectType::kTree, strata::EncodeTree(dir), &stored);
      root.entries.push_back(std::move(de));
    }
    strata::Commit c;
    c.root = PutOrDie(store, strata::ObjectType::kTree, strata::EncodeTree(root), &stored);
    c.message = "branch " + std::to_string(b);
    strata::Hash id = PutOrDie(store, strata::ObjectType::kCommit, strata::EncodeCommit(c), &stored);
    Check(store.Flush(), "flush");
    char branch[32];
    std::snprintf(branch, sizeof(branch), "b%03llu", static_cast<unsigned long long>(b));
    Check(store.CompareAndSwapRef(branch, std::nullopt, id), "branch");
  }
  std::printf("%llu\n", static_cast<unsigned long long>(stored));
  return 0;
}
