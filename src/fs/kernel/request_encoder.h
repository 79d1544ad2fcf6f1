// The inverse of DecodeRequest, for the unit tests and the fuzz target: the
// bytes the kernel would have sent for a decoded request. The decoder keeps
// every byte of what it accepts except for INIT (its spare words) and
// opcodes it does not serve, so for all others
// EncodeRequest(DecodeRequest(b)) == b: one encoding per request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fs/kernel/request.h"

namespace strata::fs::kernel {

// nullopt for INIT and UnsupportedArgs, which do not keep their bytes.
std::optional<std::vector<uint8_t>> EncodeRequest(const Request& request, const DecodeOptions& options);

}  // namespace strata::fs::kernel

namespace strata::fs::kernel {

struct SampleRequest {
  std::string name;
  std::vector<uint8_t> bytes;
  DecodeOptions options;  // what it decodes under (INIT: before any session)
};

// One valid request of every opcode strata serves (and one it does not), as
// a 7.44 kernel would send them: the unit tests' round trips and the fuzz
// target's seeds.
std::vector<SampleRequest> SampleRequests();

}  // namespace strata::fs::kernel
