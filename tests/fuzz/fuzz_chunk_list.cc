// A workspace's record of a base file's chunks (a row of its database):
// refused cleanly when malformed; when accepted, it encodes to a record that
// decodes to the same list.
#include <cstdint>
#include <cstdlib>

#include "workspace/file_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace wi = strata::workspace_internal;
  auto list = wi::DecodeChunkList(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!list.ok()) return 0;
  auto again = wi::DecodeChunkList(wi::EncodeChunkList(*list));
  if (!again.ok() || *again != *list) std::abort();
  return 0;
}
