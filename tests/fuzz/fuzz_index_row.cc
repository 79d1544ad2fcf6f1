// Rows of the store's index (index.db), as SQLite hands them over: an object's
// location, a pack's name and size, a ref. The first byte picks the decoder.
// Whatever is accepted must re-encode to the same row (objects) and keep the
// bounds the readers rely on; nothing may crash or wrap.

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_input.h"
#include "store/index.h"
#include "store/pack_format.h"
#include "store/store.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::FuzzInputReader in(data, size);
  switch (in.Byte() % 3) {
    case 0: {
      strata::IndexObjectRow row;
      row.oid = in.String();
      row.offset = in.Int();
      row.stored_len = in.Int();
      row.raw_len = in.Int();
      row.type = in.Int();
      row.codec = in.Int();
      auto e = strata::DecodeIndexObjectRow(row);
      if (!e.ok()) return 0;
      if (strata::EncodeIndexObjectRow(*e) != row) Fail("a decoded object row encodes to another row");
      if (e->offset < strata::kPackHeaderSize || e->raw_len > strata::kMaxObjectSize ||
          e->offset + e->stored_len < e->offset)
        Fail("an accepted object row breaks the bounds readers rely on");
      break;
    }
    case 1: {
      const int64_t pack_size = in.Int();
      const std::string name = in.Rest();
      auto pack = strata::DecodeIndexPackRow(name, pack_size);
      if (!pack.ok()) return 0;
      auto id = strata::PackNameToHash(pack->name);
      if (!id || id->ToHex() + strata::kPackSuffix != pack->name) Fail("an accepted pack name is not <hex>.pack");
      if (pack->name.find('/') != std::string::npos) Fail("an accepted pack name has a slash");
      break;
    }
    default: {
      const std::string oid = in.String();
      const std::string name = in.Rest();
      auto h = strata::DecodeIndexRefRow(name, oid);
      if (!h.ok()) return 0;
      if (!strata::IsValidRefName(name)) Fail("an invalid ref name was accepted");
      if (std::string(reinterpret_cast<const char*>(h->bytes.data()), strata::Hash::kSize) != oid)
        Fail("a ref's id decodes to other bytes");
      break;
    }
  }
  return 0;
}
