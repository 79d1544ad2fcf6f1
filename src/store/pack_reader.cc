#include "store/pack_reader.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "store/frame_format.h"
#include "store/store_cipher.h"
#include "util/coding.h"

namespace strata {
namespace {
uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

// The cryptographic check of an object's bytes: they hash to its id.
Status CheckId(const PackEntry& entry, std::string_view raw) {
  if (ComputeObjectId(entry.type, raw) != entry.id)
    return Status::Corruption("content does not match its id (SHA-256 mismatch)");
  return Status::Ok();
}

// Decodes stored into `make(entry.raw_len)` (a std::string or a Buffer) and
// checks it: a framed object by its frames' XXH3 checksums, and by its id
// (SHA-256) too when `check` is kFull; an object of pack format 1 (no frame
// checksums) always by its id. The lengths are checked before anything is
// allocated. *cost counts the bytes each check covered.
// In an encrypted store (cipher set) every object is sealed: it is opened
// first, which checks it against its id, type and length (the associated
// data), and its frames are then decoded by their checksums alone: an id
// check would add nothing to the tag's. An object that is not sealed there
// is damage (someone else's bytes), and so is a sealed one without a key.
template <typename Bytes, typename Make>
Result<Bytes> DecodeChecked(const PackEntry& entry, std::string_view stored, ReadCheck check, CheckCost* cost,
                            Make make, const StoreCipher* cipher) {
  if (entry.raw_len > kMaxObjectSize) return Status::Corruption("object claims an impossible size");
  if (cipher != nullptr || entry.codec == Codec::kSealed) {
    if (cipher == nullptr) return Status::Corruption("object is sealed, and this store has no key");
    if (entry.codec != Codec::kSealed) return Status::Corruption("object of an encrypted store is not sealed");
    STRATA_ASSIGN_OR_RETURN(std::string framed, cipher->OpenObject(entry, stored));
    PackEntry inner = entry;
    inner.codec = Codec::kFramed;
    return DecodeChecked<Bytes>(inner, framed, ReadCheck::kFast, cost, make, nullptr);
  }
  if (entry.codec == Codec::kFramed) {
    // The table and every frame's headers are checked before the output is allocated.
    uint64_t table_len = 0;
    STRATA_ASSIGN_OR_RETURN(FrameTable table,
                            DecodeFrameTable(entry.id, stored, entry.raw_len, stored.size(), &table_len));
    STRATA_RETURN_IF_ERROR(CheckFramesDecodable(table, stored));
    Bytes raw = make(entry.raw_len);
    for (size_t i = 0; i < table.frames.size(); i++) {
      const FrameInfo& f = table.frames[i];
      STRATA_RETURN_IF_ERROR(
          DecodeFrame(table, i, stored.substr(f.stored_offset, f.stored_len), raw.data() + table.PlainOffset(i)));
    }
    cost->frames += table.frames.size();
    cost->fast_bytes += stored.size();
    if (check == ReadCheck::kFull) {
      STRATA_RETURN_IF_ERROR(CheckId(entry, std::string_view(raw.data(), raw.size())));
      cost->sha256_bytes += raw.size();
    }
    return raw;
  }
  STRATA_RETURN_IF_ERROR(CheckDecodable(entry.codec, stored, entry.raw_len));
  Bytes raw = make(entry.raw_len);
  STRATA_RETURN_IF_ERROR(DecompressInto(entry.codec, stored, entry.raw_len, raw.data()));
  STRATA_RETURN_IF_ERROR(CheckId(entry, std::string_view(raw.data(), raw.size())));
  cost->sha256_bytes += raw.size();
  return raw;
}
}  // namespace

Result<std::string> DecodeObject(const PackEntry& entry, std::string_view stored, const StoreCipher* cipher) {
  CheckCost unused;
  return DecodeChecked<std::string>(
      entry, stored, ReadCheck::kFull, &unused, [](size_t n) { return std::string(n, '\0'); }, cipher);
}

PackCache::PackCache(Backend* backend, size_t capacity, ReadCheck check, const StoreCipher* cipher)
    : backend_(backend), cipher_(cipher), capacity_(capacity > 0 ? capacity : DefaultCapacity()), check_(check) {}

size_t PackCache::DefaultCapacity() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1024;
  return std::clamp<size_t>(static_cast<size_t>(limit.rlim_cur / 4), 8, 1024);
}

size_t PackCache::open_count() {
  MutexLock lock(&mu_);
  return lru_.size();
}

Result<std::shared_ptr<RandomAccessFile>> PackCache::OpenPack(const std::string& pack_name) {
  {
    MutexLock lock(&mu_);
    auto it = open_.find(pack_name);
    if (it != open_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  // Opened without the lock: on a remote backend an open may be a round trip.
  auto file = backend_->OpenPack(pack_name);
  if (!file.ok()) {
    if (file.status().IsNotFound())
      return Status::Corruption("pack " + pack_name + " is in the index but missing from the store (" +
                                backend_->PackLocation(pack_name) + ")");
    return file.status();
  }
  std::shared_ptr<RandomAccessFile> evicted;  // closed after the lock is dropped
  MutexLock lock(&mu_);
  if (auto it = open_.find(pack_name); it != open_.end()) return it->second->second;  // another thread was first
  lru_.emplace_front(pack_name, *file);
  open_.emplace(pack_name, lru_.begin());
  if (lru_.size() > capacity_) {
    // Reads in flight on the evicted pack keep their reference until they end.
    evicted = std::move(lru_.back().second);
    open_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return *file;
}

void PackCache::Clear() {
  MutexLock lock(&mu_);
  open_.clear();
  lru_.clear();
}

Status PackCache::Damaged(const std::string& pack_name, const PackEntry& entry, const Status& why) {
  return Status::Corruption("object " + entry.id.ToHex() + " in pack " + pack_name + " is damaged: " + why.message());
}

Result<std::shared_ptr<RandomAccessFile>> PackCache::FileHolding(const std::string& pack_name,
                                                                 const PackEntry& entry) {
  if (entry.stored_len > kMaxObjectSize)
    return Damaged(pack_name, entry, Status::Corruption("index claims an impossible size"));
  STRATA_ASSIGN_OR_RETURN(auto file, OpenPack(pack_name));
  if (entry.offset + entry.stored_len > file->Size())
    return Damaged(pack_name, entry, Status::Corruption("pack is shorter than the index says"));
  return file;
}

Result<std::string> PackCache::ReadBytes(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(auto file, FileHolding(pack_name, entry));
  std::string stored;
  auto start = std::chrono::steady_clock::now();
  Status s = file->Read(entry.offset, entry.stored_len, &stored);
  pread_us_ += MicrosSince(start);
  if (!s.ok()) return s.IsCorruption() ? Damaged(pack_name, entry, s) : s;
  objects_++;
  bytes_stored_ += stored.size();
  return stored;
}

void PackCache::Count(const CheckCost& cost, uint64_t decode_us) {
  decode_us_ += decode_us;
  frames_decoded_ += cost.frames;
  fast_checked_ += cost.fast_bytes;
  sha256_checked_ += cost.sha256_bytes;
}

Result<Buffer> PackCache::ReadObjectBuffer(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(auto file, FileHolding(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  auto stored = file->ReadBuffer(entry.offset, entry.stored_len);
  pread_us_ += MicrosSince(start);
  if (!stored.ok()) return stored.status().IsCorruption() ? Damaged(pack_name, entry, stored.status()) : stored.status();
  objects_++;
  bytes_stored_ += stored->size();

  start = std::chrono::steady_clock::now();
  CheckCost cost;
  auto decode = [&]() -> Result<Buffer> {
    if (cipher_ == nullptr && entry.codec == Codec::kRaw && entry.raw_len == stored->size()) {
      // Stored raw (incompressible, format 1): the bytes read are the object, handed over once checked.
      STRATA_RETURN_IF_ERROR(CheckId(entry, stored->view()));
      cost.sha256_bytes += stored->size();
      return std::move(stored).value();
    }
    return DecodeChecked<Buffer>(
        entry, stored->view(), check_.load(), &cost, [](size_t n) { return Buffer(n); }, cipher_);
  };
  Result<Buffer> raw = decode();
  Count(cost, MicrosSince(start));
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return raw;
}

Result<std::string> PackCache::ReadObject(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(std::string stored, ReadBytes(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  CheckCost cost;
  if (cipher_ == nullptr && entry.codec == Codec::kRaw && entry.raw_len == stored.size()) {
    // Stored raw (incompressible, format 1): the bytes read are the object.
    // Check them and hand them over; decoding would copy them first.
    Status intact = CheckId(entry, stored);
    cost.sha256_bytes += stored.size();
    Count(cost, MicrosSince(start));
    if (!intact.ok()) return Damaged(pack_name, entry, intact);
    bytes_verified_ += stored.size();
    return stored;
  }
  auto raw = DecodeChecked<std::string>(
      entry, stored, check_.load(), &cost, [](size_t n) { return std::string(n, '\0'); }, cipher_);
  Count(cost, MicrosSince(start));
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return std::move(raw).value();
}

Result<ObjectPart> PackCache::ReadRange(const std::string& pack_name, const PackEntry& entry, uint64_t offset,
                                        uint64_t length) {
  // A sealed object opens only whole (its tag covers every byte).
  if (cipher_ != nullptr || entry.codec != Codec::kFramed || check_.load() == ReadCheck::kFull || length == 0 ||
      offset + length > entry.raw_len) {
    STRATA_ASSIGN_OR_RETURN(Buffer whole, ReadObjectBuffer(pack_name, entry));
    return ObjectPart{0, std::move(whole)};
  }
  STRATA_ASSIGN_OR_RETURN(auto file, FileHolding(pack_name, entry));
  auto damaged = [&](const Status& s) { return s.IsCorruption() ? Damaged(pack_name, entry, s) : s; };
  // The table first: one small read covers it for any chunk (a 2 MiB chunk in
  // 64 KiB frames has a table of about 400 bytes); a longer one is read again.
  constexpr uint64_t kTableGuess = 1024;
  auto start = std::chrono::steady_clock::now();
  std::string prefix;
  uint64_t table_len = 0;
  if (Status s = file->Read(entry.offset, std::min(entry.stored_len, kTableGuess), &prefix); !s.ok()) return damaged(s);
  auto table = DecodeFrameTable(entry.id, prefix, entry.raw_len, entry.stored_len, &table_len);
  if (table.status().IsNotFound()) {
    if (Status s = file->Read(entry.offset, table_len, &prefix); !s.ok()) return damaged(s);
    table = DecodeFrameTable(entry.id, prefix, entry.raw_len, entry.stored_len, &table_len);
  }
  if (!table.ok()) return Damaged(pack_name, entry, table.status());
  const size_t first = table->FirstFrame(offset), last = table->LastFrame(offset, length);
  const FrameInfo& from = table->frames[first];
  const FrameInfo& to = table->frames[last];
  const uint64_t stored_len = to.stored_offset + to.stored_len - from.stored_offset;
  auto stored = file->ReadBuffer(entry.offset + from.stored_offset, stored_len);
  pread_us_ += MicrosSince(start);
  if (!stored.ok()) return damaged(stored.status());
  objects_++;
  bytes_stored_ += prefix.size() + stored->size();

  start = std::chrono::steady_clock::now();
  for (size_t i = first; i <= last; i++) {  // before allocating what the frames claim
    const FrameInfo& f = table->frames[i];
    Status s = CheckDecodable(f.codec, stored->view().substr(f.stored_offset - from.stored_offset, f.stored_len),
                              table->PlainLength(i));
    if (!s.ok()) return Damaged(pack_name, entry, s);
  }
  const uint64_t plain_start = table->PlainOffset(first);
  const uint64_t plain_end = table->PlainOffset(last) + table->PlainLength(last);
  ObjectPart part{plain_start, Buffer(plain_end - plain_start)};
  CheckCost cost;
  cost.fast_bytes = table_len;
  Status decoded;
  for (size_t i = first; i <= last && decoded.ok(); i++) {
    const FrameInfo& f = table->frames[i];
    decoded = DecodeFrame(*table, i, stored->view().substr(f.stored_offset - from.stored_offset, f.stored_len),
                          part.bytes.data() + (table->PlainOffset(i) - plain_start));
    cost.frames++;
    cost.fast_bytes += f.stored_len;
  }
  Count(cost, MicrosSince(start));
  if (!decoded.ok()) return Damaged(pack_name, entry, decoded);
  range_reads_++;
  bytes_verified_ += part.bytes.size();
  return part;
}

Result<std::string> PackCache::ReadStored(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(std::string stored, ReadBytes(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  CheckCost cost;
  // Always the id: these bytes are about to leave for another store.
  auto raw = DecodeChecked<std::string>(
      entry, stored, ReadCheck::kFull, &cost, [](size_t n) { return std::string(n, '\0'); }, cipher_);
  Count(cost, MicrosSince(start));
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return stored;
}

PackCache::Counters PackCache::counters() const {
  Counters c;
  c.objects = objects_.load();
  c.bytes_stored = bytes_stored_.load();
  c.bytes_verified = bytes_verified_.load();
  c.pread_us = pread_us_.load();
  c.decode_us = decode_us_.load();
  c.frames_decoded = frames_decoded_.load();
  c.range_reads = range_reads_.load();
  c.fast_checked_bytes = fast_checked_.load();
  c.sha256_checked_bytes = sha256_checked_.load();
  return c;
}

Result<std::vector<PackEntry>> ReadPackIndex(const RandomAccessFile& file, const StoreCipher* cipher) {
  const uint64_t size = file.Size();
  if (size < kPackHeaderSize + kPackTrailerSize) return Status::Corruption("pack is too short");
  std::string header, trailer_bytes, footer;
  STRATA_RETURN_IF_ERROR(file.Read(0, kPackHeaderSize, &header));
  if (header.compare(0, sizeof(kPackMagic), kPackMagic, sizeof(kPackMagic)) != 0)
    return Status::Corruption("pack header has no magic");
  if (uint32_t v = DecodeFixed32(header.data() + sizeof(kPackMagic)); v < kOldestPackVersion || v > kPackVersion)
    return Status::Unsupported("pack format version " + std::to_string(v) + " (this strata reads versions " +
                               std::to_string(kOldestPackVersion) + " to " + std::to_string(kPackVersion) + ")");
  STRATA_RETURN_IF_ERROR(file.Read(size - kPackTrailerSize, kPackTrailerSize, &trailer_bytes));
  STRATA_ASSIGN_OR_RETURN(PackTrailer trailer, DecodePackTrailer(trailer_bytes, size));
  STRATA_RETURN_IF_ERROR(file.Read(trailer.footer_offset, trailer.footer_len, &footer));
  if (cipher == nullptr) return DecodePackFooter(footer, trailer.footer_offset);
  STRATA_ASSIGN_OR_RETURN(std::string opened, cipher->OpenFooter(footer));
  return DecodePackFooter(opened, trailer.footer_offset);
}

}  // namespace strata
