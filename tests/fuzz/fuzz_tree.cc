// Tree objects come from packs, i.e. from disk or (later) the network.
// DecodeTree must reject anything malformed without crashing, and whatever it
// accepts must encode back to exactly the bytes it came from: a tree has one
// encoding, which is what makes its id meaningful.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "store/tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto tree = strata::DecodeTree(in);
  if (!tree.ok()) return 0;
  if (strata::EncodeTree(*tree) != in) {
    std::fprintf(stderr, "a decoded tree encodes to other bytes\n");
    std::abort();
  }
  for (const strata::TreeEntry& e : tree->entries)
    if (!strata::IsValidEntryName(e.name)) std::abort();  // Decode must have refused it
  return 0;
}
