// The sealed values of an encrypted store (store/store_cipher.h), under a
// fixed master key. The first byte picks what the rest is:
//   0  a branch name as the backend lists it (hex of a sealed name)
//   1  a sealed pack footer
//   2  a sealed chunk's stored bytes (its raw length the next 8 bytes)
// Almost no input passes the tag, so the same kinds are also sealed first
// and then opened, which lets mutations reach the decoders behind the tag:
//   3  a branch name: sealed, listed back, must give the same name
//   4  a footer's plaintext: sealed, opened and decoded
//   5  a chunk's framed bytes (raw length first): sealed, opened and decoded
// Every refusal must be a status, never a crash or a wrong value.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_input.h"
#include "store/pack_format.h"
#include "store/pack_reader.h"
#include "store/store_cipher.h"

namespace {

const strata::StoreCipher& Cipher() {
  static const strata::StoreCipher* cipher = [] {
    strata::crypto::Key256 master;
    master.bytes.fill(0x42);
    auto made = strata::StoreCipher::FromMasterKey(master);
    if (!made.ok()) std::abort();
    return made->release();
  }();
  return *cipher;
}

void DecodeObjectOf(const strata::StoreCipher& cipher, uint64_t raw_len, const std::string& sealed) {
  strata::PackEntry entry;
  entry.id = strata::Sha256::Of("fuzz", 4);
  entry.type = strata::ObjectType::kChunk;
  entry.codec = strata::Codec::kSealed;
  entry.raw_len = raw_len % (1u << 20);
  entry.stored_len = sealed.size();
  (void)strata::DecodeObject(entry, sealed, &cipher);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::FuzzInputReader in(data, size);
  const strata::StoreCipher& cipher = Cipher();
  switch (in.Byte() % 6) {
    case 0:
      (void)cipher.OpenRefName(in.Rest());
      break;
    case 1: {
      auto footer = cipher.OpenFooter(in.Rest());
      if (footer.ok()) (void)strata::DecodePackFooter(*footer, 1u << 20);
      break;
    }
    case 2: {
      const uint64_t raw_len = static_cast<uint64_t>(in.Int());
      DecodeObjectOf(cipher, raw_len, in.Rest());
      break;
    }
    case 3: {
      const std::string name = in.Rest();
      auto sealed = cipher.SealRefName(name);
      if (!sealed.ok()) std::abort();
      auto opened = cipher.OpenRefName(*sealed);
      if (!opened.ok() || *opened != name) std::abort();
      break;
    }
    case 4: {
      auto sealed = cipher.SealFooter(in.Rest());
      if (!sealed.ok()) std::abort();
      auto footer = cipher.OpenFooter(*sealed);
      if (!footer.ok()) std::abort();
      (void)strata::DecodePackFooter(*footer, 1u << 20);
      break;
    }
    case 5: {
      const uint64_t raw_len = static_cast<uint64_t>(in.Int()) % (1u << 20);
      strata::PackEntry entry;
      entry.id = strata::Sha256::Of("fuzz", 4);
      entry.type = strata::ObjectType::kChunk;
      entry.raw_len = raw_len;
      auto sealed = cipher.SealObject(entry.id, entry.type, raw_len, in.Rest());
      if (!sealed.ok()) std::abort();
      DecodeObjectOf(cipher, raw_len, *sealed);
      break;
    }
  }
  return 0;
}
