// Commit objects: rejected cleanly when malformed; when accepted, their one
// encoding is the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "store/commit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto commit = strata::DecodeCommit(in);
  if (!commit.ok()) return 0;
  if (strata::EncodeCommit(*commit) != in) {
    std::fprintf(stderr, "a decoded commit encodes to other bytes\n");
    std::abort();
  }
  return 0;
}
