#include "store/pack_reader.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include "util/coding.h"

namespace strata {
namespace {
uint64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

// The one check of an object's bytes: they hash to its id.
Status CheckId(const PackEntry& entry, std::string_view raw) {
  if (ComputeObjectId(entry.type, raw) != entry.id)
    return Status::Corruption("content does not match its id (checksum mismatch)");
  return Status::Ok();
}

// Decodes stored into `make(entry.raw_len)` (a std::string or a Buffer) and
// checks the id; the lengths are checked before anything is allocated.
template <typename Bytes, typename Make>
Result<Bytes> DecodeChecked(const PackEntry& entry, std::string_view stored, Make make) {
  if (entry.raw_len > kMaxObjectSize) return Status::Corruption("object claims an impossible size");
  STRATA_RETURN_IF_ERROR(CheckDecodable(entry.codec, stored, entry.raw_len));
  Bytes raw = make(entry.raw_len);
  STRATA_RETURN_IF_ERROR(DecompressInto(entry.codec, stored, entry.raw_len, raw.data()));
  STRATA_RETURN_IF_ERROR(CheckId(entry, std::string_view(raw.data(), raw.size())));
  return raw;
}
}  // namespace

Result<std::string> DecodeObject(const PackEntry& entry, std::string_view stored) {
  return DecodeChecked<std::string>(entry, stored, [](size_t n) { return std::string(n, '\0'); });
}

PackCache::PackCache(Backend* backend, size_t capacity)
    : backend_(backend), capacity_(capacity > 0 ? capacity : DefaultCapacity()) {}

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

Result<Buffer> PackCache::ReadObjectBuffer(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(auto file, FileHolding(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  auto stored = file->ReadBuffer(entry.offset, entry.stored_len);
  pread_us_ += MicrosSince(start);
  if (!stored.ok()) return stored.status().IsCorruption() ? Damaged(pack_name, entry, stored.status()) : stored.status();
  objects_++;
  bytes_stored_ += stored->size();

  start = std::chrono::steady_clock::now();
  auto decode = [&]() -> Result<Buffer> {
    if (entry.codec == Codec::kRaw && entry.raw_len == stored->size()) {
      // Stored raw (incompressible): the bytes read are the object, handed over once checked.
      STRATA_RETURN_IF_ERROR(CheckId(entry, stored->view()));
      return std::move(stored).value();
    }
    return DecodeChecked<Buffer>(entry, stored->view(), [](size_t n) { return Buffer(n); });
  };
  Result<Buffer> raw = decode();
  decode_us_ += MicrosSince(start);
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return raw;
}

Result<std::string> PackCache::ReadObject(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(std::string stored, ReadBytes(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  if (entry.codec == Codec::kRaw && entry.raw_len == stored.size()) {
    // Stored raw (incompressible): the bytes read are the object. Check them
    // and hand them over; DecodeObject would copy them first.
    Status intact = CheckId(entry, stored);
    decode_us_ += MicrosSince(start);
    if (!intact.ok()) return Damaged(pack_name, entry, intact);
    bytes_verified_ += stored.size();
    return stored;
  }
  auto raw = DecodeObject(entry, stored);
  decode_us_ += MicrosSince(start);
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return std::move(raw).value();
}

Result<std::string> PackCache::ReadStored(const std::string& pack_name, const PackEntry& entry) {
  STRATA_ASSIGN_OR_RETURN(std::string stored, ReadBytes(pack_name, entry));
  auto start = std::chrono::steady_clock::now();
  auto raw = DecodeObject(entry, stored);  // checks the id
  decode_us_ += MicrosSince(start);
  if (!raw.ok()) return Damaged(pack_name, entry, raw.status());
  bytes_verified_ += raw->size();
  return stored;
}

PackCache::Counters PackCache::counters() const {
  return Counters{objects_.load(), bytes_stored_.load(), bytes_verified_.load(), pread_us_.load(), decode_us_.load()};
}

Result<std::vector<PackEntry>> ReadPackIndex(const RandomAccessFile& file) {
  const uint64_t size = file.Size();
  if (size < kPackHeaderSize + kPackTrailerSize) return Status::Corruption("pack is too short");
  std::string header, trailer_bytes, footer;
  STRATA_RETURN_IF_ERROR(file.Read(0, kPackHeaderSize, &header));
  if (header.compare(0, sizeof(kPackMagic), kPackMagic, sizeof(kPackMagic)) != 0)
    return Status::Corruption("pack header has no magic");
  if (uint32_t v = DecodeFixed32(header.data() + sizeof(kPackMagic)); v != kPackVersion)
    return Status::Unsupported("pack format version " + std::to_string(v));
  STRATA_RETURN_IF_ERROR(file.Read(size - kPackTrailerSize, kPackTrailerSize, &trailer_bytes));
  STRATA_ASSIGN_OR_RETURN(PackTrailer trailer, DecodePackTrailer(trailer_bytes, size));
  STRATA_RETURN_IF_ERROR(file.Read(trailer.footer_offset, trailer.footer_len, &footer));
  return DecodePackFooter(footer, trailer.footer_offset);
}

}  // namespace strata
