// A key file of a store's key ring: any bytes are refused with a message or
// decode to a key file that encodes back to exactly those bytes (the format
// has one spelling). When its scrypt parameters are cheap, unwrapping it with
// a fixed passphrase gives the master key or "wrong passphrase", nothing else.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crypto/key_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto file = strata::crypto::DecodeKeyFile(in, "fuzz.key");
  if (!file.ok()) return 0;
  if (strata::crypto::EncodeKeyFile(*file) != in) std::abort();
  if (file->params.MemoryBytes() <= (2u << 20)) {
    auto master = strata::crypto::UnwrapMasterKey(*file, "fuzz");
    if (!master.ok() && master.status().code() != strata::Status::Code::kInvalidArgument) std::abort();
  }
  return 0;
}
