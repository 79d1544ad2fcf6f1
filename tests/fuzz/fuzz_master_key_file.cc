// A master key file (--key-file): any bytes are refused with a message or
// decode to a key that encodes back to exactly those bytes (the format has
// one spelling).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crypto/master_key_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto key = strata::crypto::DecodeMasterKeyFile(in, "fuzz.key");
  if (!key.ok()) {
    if (key.status().code() != strata::Status::Code::kInvalidArgument) std::abort();
    return 0;
  }
  if (strata::crypto::EncodeMasterKeyFile(*key) != in) std::abort();
  return 0;
}
