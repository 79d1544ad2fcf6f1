// A whole pack file as found on disk: header, trailer, footer, then every
// object it lists decoded (decompressed and checked against its id). Nothing
// may crash, read out of bounds or allocate what the pack merely claims.
#include <cstdint>
#include <string>

#include "store/pack_reader.h"

namespace {

class MemoryFile : public strata::RandomAccessFile {
 public:
  explicit MemoryFile(std::string_view bytes) : bytes_(bytes) {}
  strata::Status Read(uint64_t offset, size_t n, std::string* out) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) return strata::Status::Corruption("short read");
    out->assign(bytes_.substr(offset, n));
    return strata::Status::Ok();
  }
  uint64_t Size() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  MemoryFile file(in);
  auto entries = strata::ReadPackIndex(file);
  if (!entries.ok()) return 0;
  for (const strata::PackEntry& e : *entries) {
    if (e.offset > in.size() || e.stored_len > in.size() - e.offset) continue;  // as the readers check
    (void)strata::DecodeObject(e, in.substr(e.offset, e.stored_len));
  }
  return 0;
}
