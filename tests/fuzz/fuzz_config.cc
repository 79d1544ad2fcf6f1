// config.json of a store: any text is refused with a message or accepted as a
// config whose values are in range, and whose JSON reads back the same.
#include <cstdint>
#include <cstdlib>

#include "store/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto config = strata::StoreConfig::FromJson(in);
  if (!config.ok()) return 0;
  auto again = strata::StoreConfig::FromJson(config->ToJson());
  if (!again.ok() || again->ToJson() != config->ToJson()) std::abort();
  return 0;
}
