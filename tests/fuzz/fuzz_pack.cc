// A whole pack file as found on disk: header, trailer, footer, then every
// object it lists decoded (decompressed and checked against its id). Nothing
// may crash, read out of bounds or allocate what the pack merely claims.
//
// A framed object's table and frames sit behind XXH3 checksums that random
// mutations almost never satisfy, so each framed object is decoded a second
// time with its checksums made to match (the table's rewritten, the frames'
// set in the decoded table): that reaches the table's parser, its bounds and
// the frames' decoder with whatever bytes the fuzzer made.
#include <cstdint>
#include <cstring>
#include <string>

#include "store/frame_format.h"
#include "store/pack_reader.h"
#include "util/coding.h"

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

// Decodes a framed object past its checksums (above). Objects claiming more
// than 16 MiB are left out: the allocation is checked, not the fuzzer's memory.
void DecodeResealed(const strata::PackEntry& e, std::string stored) {
  if (e.raw_len > (16u << 20) || stored.size() < 4) return;
  const uint64_t table_len = strata::DecodeFixed32(stored.data());
  if (table_len < strata::kMinFrameTableSize || table_len > stored.size()) return;
  const uint64_t sum = strata::FastChecksum(std::string_view(stored).substr(0, table_len - 8),
                                            strata::FrameTableSeed(e.id));
  std::memcpy(stored.data() + table_len - 8, &sum, 8);  // little-endian, as the format
  uint64_t needed = 0;
  auto table = strata::DecodeFrameTable(e.id, stored, e.raw_len, stored.size(), &needed);
  if (!table.ok()) return;
  std::string out(e.raw_len, '\0');
  for (size_t i = 0; i < table->frames.size(); i++) {
    strata::FrameInfo& f = table->frames[i];
    const std::string_view frame = std::string_view(stored).substr(f.stored_offset, f.stored_len);
    f.checksum = strata::FastChecksum(frame);
    if (!strata::DecodeFrame(*table, i, frame, out.data() + table->PlainOffset(i)).ok()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  MemoryFile file(in);
  auto entries = strata::ReadPackIndex(file, nullptr);
  if (!entries.ok()) return 0;
  for (const strata::PackEntry& e : *entries) {
    if (e.offset > in.size() || e.stored_len > in.size() - e.offset) continue;  // as the readers check
    (void)strata::DecodeObject(e, in.substr(e.offset, e.stored_len), nullptr);
    if (e.codec == strata::Codec::kFramed) DecodeResealed(e, std::string(in.substr(e.offset, e.stored_len)));
  }
  return 0;
}
