#include "remote/s3_backend.h"

#include "remote/gc_protocol.h"
#include "remote/s3_xml.h"
#include "store/index.h"
#include "store/pack_format.h"
#include "store/pack_reader.h"
#include "store/store.h"
#include "store/store_cipher.h"

namespace strata {
namespace {

constexpr const char* kPacks = s3::kPacksFolder;
constexpr const char* kRefs = s3::kRefsFolder;

// A pack read with range GETs, through the block cache when there is one.
class RemotePack : public RandomAccessFile {
 public:
  RemotePack(std::shared_ptr<S3Client> client, BlockCache* cache, std::string name, uint64_t size)
      : client_(std::move(client)), cache_(cache), name_(std::move(name)), size_(size) {}

  Status Read(uint64_t offset, size_t n, std::string* out) const override {
    auto fetch = [this](uint64_t at, uint64_t length) { return client_->GetRange(kPacks + name_, at, length); };
    if (cache_) return cache_->Read(name_, size_, offset, n, out, fetch);
    if (offset > size_ || n > size_ - offset) return Status::Corruption("read past the end of pack " + name_);
    STRATA_ASSIGN_OR_RETURN(*out, fetch(offset, n));
    return Status::Ok();
  }
  uint64_t Size() const override { return size_; }

 private:
  const std::shared_ptr<S3Client> client_;
  BlockCache* const cache_;
  const std::string name_;
  const uint64_t size_;
};

std::string Describe(const std::optional<Hash>& h) { return h ? h->ToHex().substr(0, 12) : "nowhere"; }

}  // namespace

std::string EncodeRemoteRef(const std::optional<Hash>& target) {
  return target ? target->ToHex() + "\n" : std::string(kRemoteRefTombstone);
}

Result<std::optional<Hash>> DecodeRemoteRef(std::string_view body) {
  if (body == kRemoteRefTombstone) return std::optional<Hash>();
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  auto id = Hash::FromHex(body);
  if (!id) return Status::Corruption("does not hold a commit id");
  return std::optional<Hash>(*id);
}

Status S3Backend::PublishPack(const std::string& local_path, const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(uint64_t size, env_->FileSize(local_path));
  STRATA_RETURN_IF_ERROR(client_->PutFile(kPacks + name, local_path));
  packs_published_++;
  bytes_published_ += size;
  {
    MutexLock lock(&mu_);
    pack_sizes_[name] = size;
  }
  if (cache_) KeepIfHistory(local_path, name, size);
  return env_->RemoveFile(local_path);  // the bucket has it now
}

void S3Backend::KeepIfHistory(const std::string& local_path, const std::string& name, uint64_t size) {
  auto file = env_->NewRandomAccessFile(local_path);
  if (!file.ok()) return;
  auto entries = ReadPackIndex(**file, footer_cipher_.get());
  if (!entries.ok() || entries->empty()) return;
  for (const PackEntry& e : *entries)
    if (e.type == ObjectType::kChunk) return;
  const RandomAccessFile& local = **file;
  auto read_local = [&local](uint64_t at, uint64_t length) -> Result<std::string> {
    std::string bytes;
    STRATA_RETURN_IF_ERROR(local.Read(at, length, &bytes));
    return bytes;
  };
  std::string ignored;
  (void)cache_->Read(name, size, 0, size, &ignored, read_local);  // best effort: a miss later is a GET
}

Result<uint64_t> S3Backend::PackSize(const std::string& name) {
  {
    MutexLock lock(&mu_);
    if (auto it = pack_sizes_.find(name); it != pack_sizes_.end()) return it->second;
  }
  STRATA_ASSIGN_OR_RETURN(auto size, client_->Head(kPacks + name));
  if (!size) return Status::NotFound("pack " + name + " is not in " + PackLocation(name));
  MutexLock lock(&mu_);
  pack_sizes_[name] = *size;
  return *size;
}

Result<std::shared_ptr<RandomAccessFile>> S3Backend::OpenPack(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(uint64_t size, PackSize(name));
  return std::shared_ptr<RandomAccessFile>(std::make_shared<RemotePack>(client_, cache_.get(), name, size));
}

Result<std::shared_ptr<RandomAccessFile>> S3Backend::OpenPackUncached(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(uint64_t size, PackSize(name));
  return std::shared_ptr<RandomAccessFile>(std::make_shared<RemotePack>(client_, nullptr, name, size));
}

Status S3Backend::DeletePack(const std::string& name) {
  STRATA_RETURN_IF_ERROR(client_->Delete(kPacks + name));
  MutexLock lock(&mu_);
  pack_sizes_.erase(name);
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> S3Backend::DeletePacks(
    const std::vector<std::string>& names) {
  std::vector<std::string> keys;
  keys.reserve(names.size());
  for (const std::string& name : names) keys.push_back(kPacks + name);
  std::vector<std::pair<std::string, std::string>> failed;
  for (int attempt = 0; attempt < 2 && !keys.empty(); attempt++) {
    STRATA_ASSIGN_OR_RETURN(S3DeleteOutcome outcome, client_->DeleteMany(keys));
    {
      MutexLock lock(&mu_);
      for (const std::string& key : outcome.deleted) pack_sizes_.erase(key.substr(std::string_view(kPacks).size()));
    }
    keys.clear();
    for (auto& [key, why] : outcome.failed) keys.push_back(key);
    failed = std::move(outcome.failed);
  }
  for (auto& [key, why] : failed) key = key.substr(std::string_view(kPacks).size());
  return failed;
}

Result<std::vector<std::string>> S3Backend::ListPacks() {
  // The index first, then the bucket: a pack is published before it is
  // indexed, so one the index held before the listing began and the listing
  // lacks has really gone (never one that another process was adding).
  std::map<std::string, uint64_t> indexed;
  if (index_) {
    STRATA_ASSIGN_OR_RETURN(indexed, index_->ListPacks());
  }
  STRATA_ASSIGN_OR_RETURN(auto objects, client_->List(kPacks));
  std::vector<std::string> names;
  MutexLock lock(&mu_);
  for (const S3ObjectInfo& o : objects) {
    std::optional<std::string> name = s3::PackNameFromKey(o.key);
    if (!name) continue;  // not a pack of ours: the listing is the server's word, never a path
    // Too short to hold a header and a trailer: no GET can make it a pack.
    if (o.size < kPackHeaderSize + kPackTrailerSize) continue;
    pack_sizes_[*name] = o.size;
    indexed.erase(*name);
    names.push_back(std::move(*name));
  }
  vanished_.clear();
  for (auto& [name, size] : indexed) {
    vanished_.push_back(name);
    pack_sizes_.erase(name);
  }
  return names;
}

Result<std::vector<std::string>> S3Backend::ForgetVanishedPacks() {
  std::vector<std::string> vanished;
  {
    MutexLock lock(&mu_);
    vanished.swap(vanished_);
  }
  if (vanished.empty() || !index_) return vanished;
  STRATA_RETURN_IF_ERROR(ForgetVanished(vanished).status());
  return vanished;
}

Result<std::vector<std::string>> S3Backend::ForgetVanished(std::vector<std::string> vanished,
                                                           const std::unordered_set<Hash>* also_condemned) {
  std::vector<std::pair<std::string, std::vector<PackEntry>>> held;
  for (const std::string& name : vanished) {
    STRATA_ASSIGN_OR_RETURN(auto entries, index_->ObjectsInPack(name));
    held.emplace_back(name, std::move(entries));
  }
  STRATA_RETURN_IF_ERROR(index_->ReplacePacks(std::nullopt, vanished));
  packs_vanished_ += vanished.size();
  STRATA_RETURN_IF_ERROR(IndexObjectsHeldElsewhere());
  // Lost is what no other pack holds and no gc list named (a gc deletes
  // only what it listed, and writers that saw the list stored it again).
  std::vector<std::string> unexpected;
  for (const auto& [name, entries] : held) {
    for (const PackEntry& e : entries) {
      if (Condemned(e.id) || (also_condemned && also_condemned->count(e.id))) continue;
      STRATA_ASSIGN_OR_RETURN(auto elsewhere, index_->Lookup(e.id));
      if (elsewhere) continue;
      unexpected.push_back(name);
      break;
    }
  }
  return unexpected;
}

Status S3Backend::ForgetPacks(const std::vector<std::string>& names) {
  STRATA_RETURN_IF_ERROR(index_->ReplacePacks(std::nullopt, names));
  return IndexObjectsHeldElsewhere();
}

Status S3Backend::IndexObjectsHeldElsewhere() {
  STRATA_ASSIGN_OR_RETURN(auto packs, index_->PacksWithObjectsElsewhere());
  for (const std::string& name : packs) {
    auto file = OpenPackUncached(name);
    // An encrypted store's footers are sealed: read through its cipher.
    auto entries = file.ok() ? ReadPackIndex(**file, footer_cipher_.get()) : Result<std::vector<PackEntry>>(file.status());
    // A pack that went too is forgotten by the next listing.
    if (!entries.ok()) continue;
    STRATA_RETURN_IF_ERROR(index_->AddMissingObjects(name, *entries));
  }
  return Status::Ok();
}

Status S3Backend::IndexListed(const std::vector<std::string>& listed) {
  STRATA_ASSIGN_OR_RETURN(auto known, index_->ListPacks());
  for (const std::string& name : listed) {
    if (known.count(name)) continue;
    auto file = OpenPackUncached(name);
    // No cipher, as in IndexObjectsHeldElsewhere.
    auto entries = file.ok() ? ReadPackIndex(**file, nullptr) : Result<std::vector<PackEntry>>(file.status());
    // Gone again, or damaged: verify reports it; its objects stay unfound.
    if (!entries.ok() && (entries.status().IsNotFound() || entries.status().IsCorruption())) continue;
    if (!entries.ok()) return entries.status();
    STRATA_RETURN_IF_ERROR(index_->AddPack(name, (*file)->Size(), *entries));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> S3Backend::RelistAndForget() {
  STRATA_ASSIGN_OR_RETURN(auto listed, ListPacks());
  std::vector<std::string> vanished;
  {
    MutexLock lock(&mu_);
    vanished.swap(vanished_);
  }
  if (vanished.empty()) return vanished;
  // A repack may have moved their objects to packs this index has not seen.
  STRATA_RETURN_IF_ERROR(IndexListed(listed));
  return ForgetVanished(std::move(vanished));
}

Status S3Backend::ForgetPacksGoneSinceListing() {
  std::vector<std::string> vanished;
  {
    MutexLock lock(&mu_);
    vanished.swap(vanished_);
  }
  if (vanished.empty() || !index_) return Status::Ok();
  // A reader may hold no lease: the gc lists in the bucket now say what
  // went on purpose.
  STRATA_ASSIGN_OR_RETURN(auto condemned, ReadCondemned(*client_));
  STRATA_ASSIGN_OR_RETURN(auto lost, ForgetVanished(std::move(vanished), &condemned));
  if (!lost.empty()) lost_since_open_ = true;
  return Status::Ok();
}

Status S3Backend::AnnounceWriter() {
  Lease lease{kLeasesFolder + RandomKeyId(), std::chrono::steady_clock::now()};
  STRATA_ASSIGN_OR_RETURN(S3PutOutcome outcome,
                          client_->PutIf(lease.key, EncodeLease(kWriterLeaseSeconds), std::nullopt));
  if (outcome != S3PutOutcome::kWritten) {
    // No clear answer (or, against all odds, a name taken): only a lease
    // that is there counts.
    STRATA_ASSIGN_OR_RETURN(auto there, client_->Head(lease.key));
    if (!there || outcome == S3PutOutcome::kPreconditionFailed)
      return Status::Unavailable("could not write the lease " + client_->location().Url() + "/" + lease.key);
  }
  // Read after the lease is in the bucket: a gc that listed leases before it
  // had written its list waits for this one; one that wrote it before is read here.
  STRATA_ASSIGN_OR_RETURN(auto condemned, ReadCondemned(*client_));
  {
    MutexLock lock(&mu_);
    lease_ = lease;
    condemned_ = std::move(condemned);
  }
  if (!index_) return Status::Ok();
  // Packs that went while this store was open are forgotten before anything
  // counts on them; losses no gc list explains stop refs moving from here.
  STRATA_ASSIGN_OR_RETURN(auto lost, RelistAndForget());
  if (!lost.empty()) lost_since_open_ = true;
  return Status::Ok();
}

void S3Backend::RetireWriter() {
  std::optional<Lease> lease;
  {
    MutexLock lock(&mu_);
    lease.swap(lease_);
  }
  // Best effort: a lease left behind only makes gcs wait until it runs out.
  if (lease) client_->Delete(lease->key).IgnoreError();
}

bool S3Backend::Condemned(const Hash& id) const {
  MutexLock lock(&mu_);
  return condemned_.count(id) > 0;
}

Result<S3Backend::RefState> S3Backend::ReadRef(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(auto body, client_->Get(kRefs + name));
  RefState state;
  if (!body) return state;
  state.etag = body->etag;
  auto value = DecodeRemoteRef(body->data);
  if (!value.ok()) return value.status().WithContext("remote ref " + name);
  state.value = *value;
  return state;
}

Result<std::optional<Hash>> S3Backend::GetRef(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(RefState state, ReadRef(name));
  return state.value;
}

Result<std::map<std::string, Hash>> S3Backend::ListRefs() {
  STRATA_ASSIGN_OR_RETURN(auto objects, client_->List(kRefs));
  std::map<std::string, Hash> refs;
  for (const S3ObjectInfo& o : objects) {
    std::optional<std::string> name = s3::RefNameFromKey(o.key);
    if (!name) continue;  // no branch of ours: never used as one
    auto state = ReadRef(*name);
    // A ref whose body is not a commit id (written by something else into
    // the bucket) is left out of the list, so that it does not hide every
    // other branch; reading it by name still reports it as damaged.
    if (!state.ok() && state.status().IsCorruption()) continue;
    if (!state.ok()) return state.status();
    if (state->value) refs[*name] = *state->value;
  }
  return refs;
}

Status S3Backend::SwapRef(const std::string& name, const std::optional<Hash>& expected, const std::string& body,
                          const std::optional<Hash>& target) {
  // A few rounds only for answers that were lost while the ref stayed put.
  for (int attempt = 0; attempt < 4; attempt++) {
    STRATA_ASSIGN_OR_RETURN(RefState now, ReadRef(name));
    if (now.value != expected)
      return Status::Conflict("head moved: remote branch " + name + " is at " + Describe(now.value) +
                              ", expected " + Describe(expected));
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome outcome, client_->PutIf(kRefs + name, body, now.etag));
    if (outcome == S3PutOutcome::kWritten) return Status::Ok();
    // No write, or no answer (RGW answers some losers of a race with a 5xx
    // rather than 412): what the ref holds now tells what happened.
    STRATA_ASSIGN_OR_RETURN(RefState after, ReadRef(name));
    if (after.value == target) return Status::Ok();  // it landed (or an identical update did)
    if (after.value != expected)
      return Status::Conflict("head moved: remote branch " + name + " is at " + Describe(after.value) +
                              ", expected " + Describe(expected));
    // Still where it was: the write did not land; try again.
  }
  return Status::Unavailable("remote branch " + name + ": the object store gave no clear answer to its update; "
                             "it still holds " + Describe(expected) + ", try again");
}

Status S3Backend::CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected,
                                    const Hash& target) {
  // Everything the target reaches is indexed (a store's invariant), so it is
  // all in the bucket if every pack the index names still is.
  {
    MutexLock lock(&mu_);
    // Past its lease a gc may have deleted what this writer counted on.
    if (lease_ && std::chrono::steady_clock::now() - lease_->start >= std::chrono::seconds(kWriterLeaseSeconds))
      return Status::Unavailable("remote branch " + name + " was not moved: this writer began more than " +
                                 std::to_string(kWriterLeaseSeconds) + " s ago, longer than its lease in " +
                                 client_->location().Url() + " lets a gc wait for it; run it again");
  }
  if (index_) {
    STRATA_ASSIGN_OR_RETURN(std::vector<std::string> vanished, RelistAndForget());
    if (!vanished.empty()) {
      lost_since_open_ = true;
      return Status::Unavailable("remote branch " + name + " was not moved: " + std::to_string(vanished.size()) +
                                 " pack(s) this machine had indexed are no longer in " +
                                 client_->location().Url() + " (first: " + vanished.front() +
                                 "); they are forgotten here: push the branch from a store that holds its history "
                                 "to send their objects again");
    }
    // What was built on objects that vanished since this store was opened
    // (a mount's base trees) may refer to them without holding them: no ref
    // moves from here any more. A new command (push) walks and resends.
    if (lost_since_open_)
      return Status::Unavailable("remote branch " + name + " was not moved: packs vanished from " +
                                 client_->location().Url() + " while this store was open; push the branch from a "
                                 "store that holds its history");
  }
  return SwapRef(name, expected, EncodeRemoteRef(target), target);
}

Status S3Backend::DeleteRef(const std::string& name, const Hash& expected) {
  return SwapRef(name, expected, EncodeRemoteRef(std::nullopt), std::nullopt);
}

std::string S3Backend::PackLocation(const std::string& name) const {
  return client_->location().Url() + "/" + kPacks + name;
}

std::vector<std::pair<std::string, uint64_t>> S3Backend::Counters() const {
  S3BackendCounters c = counters();
  return {{"cache_hits", c.cache.hits},         {"cache_misses", c.cache.misses},
          {"cache_waits", c.cache.waits},       {"fetched_bytes", c.cache.fetched_bytes},
          {"cache_evictions", c.cache.evictions}, {"cached_bytes", c.cache.cached_bytes},
          {"packs_published", c.packs_published}, {"bytes_published", c.bytes_published},
          {"packs_vanished", c.packs_vanished}};
}

S3BackendCounters S3Backend::counters() const {
  S3BackendCounters c;
  c.cache = cache_->counters();
  c.packs_published = packs_published_.load();
  c.bytes_published = bytes_published_.load();
  c.packs_vanished = packs_vanished_.load();
  return c;
}

}  // namespace strata
