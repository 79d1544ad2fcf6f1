#include "store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "crypto/key_ring.h"
#include "env/trust.h"
#include "store/backend.h"
#include "store/frame_format.h"
#include "store/index.h"
#include "store/pack_merge.h"
#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "store/store_cipher.h"
#include "util/hex.h"
#include "util/thread_pool.h"

namespace strata {

namespace {
constexpr const char* kConfigFile = "/config.json";
constexpr const char* kIndexFile = "/index.db";
constexpr const char* kLogicalBytesCounter = "logical_bytes";
constexpr const char* kGcGenerationCounter = "gc_generation";
// Seals reserved under the current object-seal generation, and that generation.
constexpr const char* kSealedObjectsCounter = "sealed_objects";
constexpr const char* kSealGenerationCounter = "seal_generation";
// Generations handed to other stores from the top of this one's range.
constexpr const char* kSealGenerationsGivenCounter = "seal_generations_given";
// Seals reserved by one transaction: few enough that a process ending with
// some unused wastes little of a generation.
constexpr uint64_t kSealReservation = 4096;

// "<pid>-<n>-<r>.tmp" -> pid, or 0 for names no writer of ours produces.
int TempFileOwner(const std::string& name) {
  if (!name.ends_with(".tmp")) return 0;
  int pid = 0;
  for (char c : name) {
    if (c == '-') return pid;
    if (!std::isdigit(static_cast<unsigned char>(c)) || pid > 100000000) return 0;
    pid = pid * 10 + (c - '0');
  }
  return 0;
}
std::string CanonicalPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

// The Env for the store at `root` (canonical): refused unless the directory
// is its user's own (trust.h), then confined to it so that no link inside
// the store leads outside (env.h, Beneath).
Result<std::unique_ptr<Env>> OpenTrustedRoot(Env* env, const std::string& root) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("opening the store at " + root, errno);
  Status trusted = CheckTrustedDir(fd, root, "store", root);
  ::close(fd);
  STRATA_RETURN_IF_ERROR(trusted);
  return env->Beneath(root);
}
// The config.json of the store at root, read through its confined Env.
Result<StoreConfig> ReadConfigIn(Env* inside, const std::string& root) {
  STRATA_ASSIGN_OR_RETURN(std::string text, inside->ReadFile(root + kConfigFile));
  auto config = StoreConfig::FromJson(text);
  if (!config.ok()) return config.status().WithContext("store " + root);
  return config;
}

// NotFound unless path holds a store (its config.json).
Status CheckIsStore(const std::string& path, Env* env) {
  if (env->Exists(path + kConfigFile)) return Status::Ok();
  // Another user's store is there but closed: say so rather than "no store".
  if (::access(path.c_str(), X_OK) != 0 && errno == EACCES)
    return Status::IOError("cannot open the store at " + path, EACCES);
  if (!env->Exists(path)) return Status::NotFound("no store at " + path + " (create one with 'strata init')");
  return Status::NotFound(path + " is not a strata store (no config.json; create one with 'strata init')");
}
}  // namespace

bool IsValidRefName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  if (name.front() == '-' || name.front() == '/' || name.front() == '.' || name.back() == '/' || name.back() == '.')
    return false;
  if (name.find("..") != std::string_view::npos || name.find("//") != std::string_view::npos) return false;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Status Store::Init(const std::string& path, const StoreConfig& config, Env* env) {
  if (config.encrypted()) return Status::InvalidArgument("an encrypted store is made with its passphrase");
  return InitWith(path, config, env, nullptr);
}

Status Store::InitEncrypted(const std::string& path, const StoreConfig& config, std::string_view passphrase,
                            const crypto::ScryptParams& params, Env* env) {
  if (passphrase.empty()) return Status::InvalidArgument("an encrypted store needs a non-empty passphrase");
  // The key file is written before config.json: a crash leaves no encrypted
  // store without a key.
  return InitWith(path, config.Encrypted(), env,
                  [&](Env* inside, const std::string& root, StoreConfig* encrypted) -> Status {
                    crypto::KeyRing ring(inside, KeysDir(root), params);
                    STRATA_RETURN_IF_ERROR(ring.Create(passphrase).status());
                    STRATA_ASSIGN_OR_RETURN(crypto::OpenedRing opened, ring.Open(passphrase));
                    std::array<uint8_t, 16> id;
                    STRATA_RETURN_IF_ERROR(crypto::RandomBytes(id.data(), id.size()));
                    encrypted->store_id = HexEncode(id.data(), id.size());
                    STRATA_ASSIGN_OR_RETURN(encrypted->key_check,
                                            StoreCipher::KeyCheck(opened.master, encrypted->store_id));
                    return Status::Ok();
                  });
}

namespace {
// A store made under an existing master key owns no key generation until a
// grant gives it some: the key's generations are its first store's.
Status OwnNoGenerations(const std::string& root) {
  STRATA_ASSIGN_OR_RETURN(auto index, Index::Open(root + kIndexFile, /*create=*/false));
  return index->AddCounter(kSealGenerationsGivenCounter, uint64_t{1} << 32);
}
}  // namespace

Status Store::InitWithoutKeys(const std::string& path, const StoreConfig& config, Env* env) {
  if (!config.encrypted() || !config.seal_generations())
    return Status::InvalidArgument("a store without key files is an encrypted one with key generations");
  return InitWith(path, config, env,
                  [](Env*, const std::string& root, StoreConfig*) -> Status { return OwnNoGenerations(root); });
}

Status Store::InitEncryptedWithKey(const std::string& path, const StoreConfig& config, std::string_view passphrase,
                                   const crypto::Key256& master, const crypto::ScryptParams& params, Env* env) {
  if (passphrase.empty()) return Status::InvalidArgument("an encrypted store needs a non-empty passphrase");
  return InitWith(path, config.Encrypted(), env,
                  [&](Env* inside, const std::string& root, StoreConfig* encrypted) -> Status {
                    STRATA_RETURN_IF_ERROR(OwnNoGenerations(root));
                    crypto::KeyRing ring(inside, KeysDir(root), params);
                    STRATA_RETURN_IF_ERROR(ring.CreateFor(master, passphrase).status());
                    std::array<uint8_t, 16> id;
                    STRATA_RETURN_IF_ERROR(crypto::RandomBytes(id.data(), id.size()));
                    encrypted->store_id = HexEncode(id.data(), id.size());
                    STRATA_ASSIGN_OR_RETURN(encrypted->key_check, StoreCipher::KeyCheck(master, encrypted->store_id));
                    return Status::Ok();
                  });
}

Result<SealRange> Store::GrantSealGenerations(uint64_t max_count) {
  if (!cipher_ || !config_.seal_generations())
    return Status::InvalidArgument("the store at " + path_ + " has no key generations to hand out");
  auto range = index_->GrantSeals(kSealGenerationCounter, kSealGenerationsGivenCounter, max_count);
  if (!range.ok()) return range.status().WithContext("the store at " + path_);
  return range;
}

Status Store::AdoptSealGenerations(const SealRange& range) {
  MutexLock lock(&seal_mu_);
  if (seals_left_ != 0) return Status::InvalidArgument("the store at " + path_ + " holds a reservation of seals");
  Status s = index_->AdoptSeals(kSealGenerationCounter, kSealedObjectsCounter, kSealGenerationsGivenCounter, range);
  return s.ok() ? s : s.WithContext("the store at " + path_);
}

Result<SealRange> Store::OwnedSealGenerations() {
  return index_->OwnedSeals(kSealGenerationCounter, kSealGenerationsGivenCounter);
}

Status Store::InitWith(const std::string& path, StoreConfig config, Env* env,
                       const std::function<Status(Env* inside, const std::string& root, StoreConfig* config)>&
                           before_config) {
  if (env->Exists(path + kConfigFile))
    return Status::AlreadyExists(path + " is already a strata store; it was left as it is (use it, or give "
                                 "'strata init' another directory)");
  if (env->Exists(path)) {
    auto entries = env->ListDir(path);
    if (!entries.ok()) return entries.status();
    if (!entries->empty()) return Status::AlreadyExists(path + " exists and is not empty; not creating a store there");
  }
  STRATA_RETURN_IF_ERROR(env->CreateDir(path));
  // A store is its owner's alone, also in a directory made beforehand (mkdir
  // under the usual umask makes it 0755, which left the index readable; the
  // files strata creates are private by its umask, see main.cc).
  if (::chmod(path.c_str(), 0700) != 0) return Status::IOError("cannot make " + path + " private", errno);
  const std::string root = CanonicalPath(path);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, OpenTrustedRoot(env, root));
  STRATA_RETURN_IF_ERROR(inside->CreateDir(root + "/packs"));
  STRATA_RETURN_IF_ERROR(inside->CreateDir(root + "/tmp"));
  {
    STRATA_ASSIGN_OR_RETURN(auto index, Index::Open(root + kIndexFile, /*create=*/true));
  }
  if (before_config) STRATA_RETURN_IF_ERROR(before_config(inside.get(), root, &config));
  // config.json last: a directory without it is not a store, so a crash during
  // init leaves nothing that could be mistaken for one.
  return inside->WriteFileAtomically(root + kConfigFile, config.ToJson());
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, Env* env, const crypto::Key256* master) {
  return Open(
      path, env,
      [](Env* e, const std::string& store_path, Index* index) -> Result<std::unique_ptr<Backend>> {
        return NewLocalBackend(e, store_path, index);
      },
      master);
}

Result<std::unique_ptr<Env>> Store::TrustedEnv(const std::string& path, Env* env, std::string* root) {
  STRATA_RETURN_IF_ERROR(CheckIsStore(path, env));
  *root = CanonicalPath(path);
  return OpenTrustedRoot(env, *root);
}

Result<StoreConfig> Store::ReadConfig(const std::string& path, Env* env) {
  std::string root;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, TrustedEnv(path, env, &root));
  return ReadConfigIn(inside.get(), root);
}

Result<crypto::Key256> Store::Unlock(const std::string& path, std::string_view passphrase, Env* env) {
  STRATA_ASSIGN_OR_RETURN(StoreConfig config, ReadConfig(path, env));
  std::string root;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, TrustedEnv(path, env, &root));
  if (!config.encrypted()) return Status::InvalidArgument("the store at " + root + " is not encrypted");
  crypto::KeyRing ring(inside.get(), KeysDir(root));
  auto opened = ring.Open(passphrase);
  if (!opened.ok()) return opened.status().WithContext("store " + root);
  return opened->master;
}

Status Store::CheckKeyOf(const StoreConfig& config, const crypto::Key256& master, const std::string& root) {
  if (!config.encrypted()) return Status::InvalidArgument("the store at " + root + " is not encrypted");
  STRATA_ASSIGN_OR_RETURN(std::string check, StoreCipher::KeyCheck(master, config.store_id));
  if (check != config.key_check)
    return Status::InvalidArgument("the key given does not belong to the store at " + root +
                                   " (its key check differs from the one in config.json: it is another "
                                   "store's key); nothing was read or written");
  return Status::Ok();
}

Status Store::CheckKey(const std::string& path, const crypto::Key256& master, Env* env) {
  std::string root;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, TrustedEnv(path, env, &root));
  STRATA_ASSIGN_OR_RETURN(StoreConfig config, ReadConfigIn(inside.get(), root));
  return CheckKeyOf(config, master, root);
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, Env* env, const BackendFactory& backend,
                                           const crypto::Key256* master) {
  // From here on the store is reached by its canonical path (SQLite's
  // SQLITE_OPEN_NOFOLLOW refuses a link anywhere in the path) and through an
  // Env that follows no link inside it.
  std::string root;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, TrustedEnv(path, env, &root));
  auto config = ReadConfigIn(inside.get(), root);
  if (!config.ok()) return config.status();
  // The key first: nothing is recovered, upgraded or indexed in a store whose
  // key is not at hand.
  std::unique_ptr<StoreCipher> cipher;
  if (config->encrypted()) {
    if (master == nullptr)
      return Status::InvalidArgument("the store at " + root + " is encrypted: it opens only with its passphrase");
    STRATA_RETURN_IF_ERROR(CheckKeyOf(*config, *master, root));
    STRATA_ASSIGN_OR_RETURN(cipher, StoreCipher::FromMasterKey(*master, config->seal_generations()));
  } else if (master != nullptr) {
    return Status::InvalidArgument("the store at " + root + " is not encrypted, yet a key was given for it");
  }
  if (config->version < StoreConfig::kFormatVersion) {
    // This strata writes version 2 packs, which an older one cannot read: the
    // store says so first, so that an older strata refuses the whole store
    // with a message naming the version instead of failing on packs.
    config->version = StoreConfig::kFormatVersion;
    STRATA_RETURN_IF_ERROR(inside->WriteFileAtomically(root + kConfigFile, config->ToJson()));
  }
  // The index holds the refs, the one thing packs cannot restore.
  if (!inside->Exists(root + kIndexFile))
    return Status::Corruption("store " + root + " is damaged: its index (index.db) is missing");
  // SQLite cannot open its WAL there and says only "unable to open database file".
  if (::access(root.c_str(), W_OK) != 0 && errno == EROFS)
    return Status::IOError("cannot open the store at " + root + " for writing", EROFS);
  STRATA_ASSIGN_OR_RETURN(auto index, Index::Open(root + kIndexFile, /*create=*/false));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Backend> packs_and_refs, backend(inside.get(), root, index.get()));
  std::unique_ptr<Store> store(new Store(root, std::move(inside), *config, std::move(index),
                                        std::move(packs_and_refs), std::move(cipher)));
  STRATA_RETURN_IF_ERROR(store->Recover());
  return store;
}

Store::Store(std::string path, std::unique_ptr<Env> env, StoreConfig config, std::unique_ptr<Index> index,
             std::unique_ptr<Backend> backend, std::unique_ptr<StoreCipher> cipher)
    : path_(std::move(path)),
      owned_env_(std::move(env)),
      env_(owned_env_.get()),
      config_(std::move(config)),
      index_(std::move(index)),
      backend_(std::move(backend)),
      cipher_(std::move(cipher)),
      // Packs on this machine's disk were written by this store: their frame
      // checksums suffice. A remote's bytes crossed a trust boundary.
      packs_(std::make_unique<PackCache>(backend_.get(), 0,
                                         backend_->LocalDisk() ? ReadCheck::kFast : ReadCheck::kFull,
                                         cipher_.get())) {}

Hash Store::ObjectId(ObjectType type, std::string_view data) const {
  return cipher_ ? cipher_->ObjectId(type, data) : ComputeObjectId(type, data);
}

Chunker Store::NewChunker() const {
  return cipher_ ? Chunker(config_.chunker, cipher_->gear()) : Chunker(config_.chunker);
}

Store::~Store() = default;  // an unflushed open pack is abandoned (its temp file removed)

Result<Store::WriteSession> Store::BeginWrite() { return BeginSession(/*announce=*/true); }

Result<Store::WriteSession> Store::BeginSession(bool announce) {
  MutexLock lock(&session_mu_);
  if (sessions_ == 0) {
    STRATA_ASSIGN_OR_RETURN(session_lock_, env_->LockFile(GcLockPath(), LockMode::kShared, /*wait=*/true));
    ForgetKnownIds();
  }
  if (announce && !announced_) {
    if (Status s = backend_->AnnounceWriter(); !s.ok()) {
      if (sessions_ == 0) session_lock_.reset();
      return s.WithContext("announcing a writer");
    }
    announced_ = true;
    // What was remembered as stored before may be among what a gc condemned.
    ForgetKnownIds();
  }
  sessions_++;
  return WriteSession(this);
}

void Store::EndWrite() {
  {
    MutexLock lock(&session_mu_);
    if (--sessions_ > 0) return;
    session_lock_.reset();
    if (announced_) backend_->RetireWriter();
    announced_ = false;
    ForgetKnownIds();
  }
  // What was written is reachable now: a good moment to fold small packs
  // together (pack_merge.h). Best effort: a merge that cannot run now (gc or
  // another writer holds the locks) or fails leaves the store as it was, and
  // a failure that matters (a damaged pack) is what verify and gc report.
  // The merged packs are gone: their handles here are closed at once (other
  // processes notice the gc generation within a second).
  // Never on a shared backend (a remote): its lock is local, and a pack
  // removed there vanishes under other machines' indexes. Reclaiming packs of
  // a shared store needs the remote's own protocol, not this one.
  if (merge_small_packs_.load() && !backend_->Shared()) {
    auto merged = MergeSmallPacks(*this);
    if (merged.ok() && *merged > 0) packs_->Clear();
  }
}

void Store::ForgetKnownIds() {
  // Ids remembered as stored may be deleted by a gc once no session is open;
  // only those in packs this Store is writing are certain.
  MutexLock lock(&write_mu_);
  known_ = open_ids_;
  known_.insert(sealing_ids_.begin(), sealing_ids_.end());
}

Store::WriteSession::~WriteSession() {
  if (store_) store_->EndWrite();
}

void Store::DropRemovedPackHandles() {
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  int64_t last = pack_check_ms_.load();
  if (now - last < 1000 || !pack_check_ms_.compare_exchange_strong(last, now)) return;
  auto generation = index_->GetCounter(kGcGenerationCounter);
  if (!generation.ok()) return;  // the next read looks again
  if (gc_generation_.exchange(*generation) != *generation) packs_->Clear();
}

Status Store::Recover() {
  // Indexing packs must not race with gc removing one (it would index a pack
  // that is about to go), so recovery holds a session.
  STRATA_ASSIGN_OR_RETURN(WriteSession session, BeginSession(/*announce=*/false));
  // Temp packs of writers that died: their objects were never indexed, so
  // nothing refers to them.
  STRATA_ASSIGN_OR_RETURN(auto temps, env_->ListDir(path_ + "/tmp"));
  for (const std::string& name : temps) {
    int pid = TempFileOwner(name);
    if (pid > 0 && !env_->ProcessAlive(pid)) STRATA_RETURN_IF_ERROR(env_->RemoveFile(path_ + "/tmp/" + name));
  }
  // Sealed packs whose index rows a crash prevented (or, on a shared backend,
  // that other machines published): index them from their footers.
  return IndexNewPacks();
}

Status Store::IndexNewPacks() {
  STRATA_ASSIGN_OR_RETURN(auto packs, backend_->ListPacks());
  STRATA_ASSIGN_OR_RETURN(uint64_t indexed, index_->PackCount());
  if (packs.size() == indexed) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(auto known, index_->ListPacks());
  std::vector<std::string> fresh;
  for (std::string& name : packs)
    if (!known.count(name)) fresh.push_back(std::move(name));
  // Footers are read in parallel: on a remote backend each one costs a few
  // round trips, and a machine new to a remote reads every pack's.
  struct Footer {
    Status status;
    uint64_t size = 0;
    std::vector<PackEntry> entries;
  };
  std::vector<Footer> footers(fresh.size());
  // A shared backend lists what its server says: one naming many packs that
  // are not (a hostile or broken server) must not cost two GETs each for
  // ever. Past this many damaged ones the indexing stops with an error.
  constexpr size_t kMaxDamagedShared = 64;
  std::atomic<size_t> damaged{0};
  auto too_damaged = [&] { return backend_->Shared() && damaged.load() > kMaxDamagedShared; };
  {
    ThreadPool pool(std::min<size_t>(8, fresh.size()));
    for (size_t i = 0; i < fresh.size(); i++) {
      pool.Submit([&, i] {
        if (too_damaged()) return;
        auto file = backend_->OpenPackUncached(fresh[i]);
        auto entries = file.ok() ? ReadPackIndex(**file, cipher_.get()) : Result<std::vector<PackEntry>>(file.status());
        if (!entries.ok()) {
          footers[i].status = entries.status();
          if (entries.status().IsCorruption() || entries.status().code() == Status::Code::kUnsupported) damaged++;
          return;
        }
        footers[i].size = (*file)->Size();
        footers[i].entries = std::move(entries).value();
      });
    }
  }
  if (too_damaged())
    return Status::Corruption("more than " + std::to_string(kMaxDamagedShared) + " of the " +
                              std::to_string(fresh.size()) + " new packs listed at " + backend_->PackLocation("") +
                              " are damaged; indexing stopped");
  for (size_t i = 0; i < fresh.size(); i++) {
    const Status& s = footers[i].status;
    if (!s.ok()) {
      // A damaged pack is left for 'strata verify' to report; a pack that
      // could not be read (a remote that stopped answering) stops here.
      if (s.IsCorruption() || s.code() == Status::Code::kUnsupported) continue;
      return s;
    }
    STRATA_RETURN_IF_ERROR(index_->AddPack(fresh[i], footers[i].size, footers[i].entries));
  }
  return Status::Ok();
}

Result<PutResult> Store::Put(ObjectType type, std::string_view data) {
  if (data.size() > kMaxObjectSize) return Status::InvalidArgument("object larger than the format allows");
  const Hash id = ObjectId(type, data);
  STRATA_ASSIGN_OR_RETURN(bool stored_already, IsStored(id));
  if (stored_already) return PutResult{id};
  // Compress (and seal) outside the lock: this is where the CPU time goes. The
  // buffer is per thread so its memory is reused from one object to the next.
  thread_local std::string stored;
  EncodeFramed(id, data, config_.zstd_level, config_.frame_shift, &stored);
  if (!cipher_) return Append(id, type, Codec::kFramed, stored, data.size());
  // Every seal draws a nonce, even one that another thread's dedup then drops.
  STRATA_ASSIGN_OR_RETURN(uint32_t generation, TakeSeal());
  STRATA_ASSIGN_OR_RETURN(std::string sealed, cipher_->SealObject(id, type, data.size(), stored, generation));
  return Append(id, type, Codec::kSealed, sealed, data.size());
}

Result<PutResult> Store::PutStored(const Hash& id, const StoredObject& object) {
  // Sealed bytes belong in an encrypted store, plain ones in a plain store:
  // a store never keeps what it could not read back.
  if ((object.codec == Codec::kSealed) != (cipher_ != nullptr))
    return Status::InvalidArgument(std::string("object ") + id.ToHex() +
                                   (cipher_ ? " is not sealed, and this store is encrypted"
                                            : " is sealed, and this store is not encrypted"));
  STRATA_ASSIGN_OR_RETURN(bool stored_already, IsStored(id));
  if (stored_already) return PutResult{id};
  return Append(id, object.type, object.codec, object.bytes, object.raw_len);
}

Status Store::IndexOwnPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries,
                           IndexPublish* publish, Status* moved) {
  // An object stored again because a remote gc condemned its old copy must be
  // found here from now on: the old pack may go, this one is in the bucket.
  const bool restored = std::any_of(entries.begin(), entries.end(),
                                    [&](const PackEntry& e) { return backend_->Condemned(e.id); });
  if (restored) {
    STRATA_RETURN_IF_ERROR(index_->ReplacePacks(NewPack{name, size, entries}, {}));
  } else if (publish == nullptr) {
    return index_->AddPack(name, size, entries);
  } else {
    publish->pack = NewPack{name, size, entries};
  }
  return publish != nullptr ? index_->Publish(*publish, moved) : Status::Ok();
}

Result<bool> Store::IsStored(const Hash& id) {
  if (backend_->Condemned(id)) return false;
  {
    MutexLock lock(&write_mu_);
    if (known_.count(id)) return true;
  }
  STRATA_ASSIGN_OR_RETURN(auto existing, index_->Lookup(id));
  if (!existing) return false;
  MutexLock lock(&write_mu_);
  known_.insert(id);
  return true;
}

Result<PutResult> Store::Append(const Hash& id, ObjectType type, Codec codec, std::string_view stored,
                                uint64_t raw_len) {
  PutResult result{id};
  MutexLock lock(&write_mu_);
  STRATA_RETURN_IF_ERROR(seal_error_);
  if (!known_.insert(id).second) return result;  // another thread stored it meanwhile
  if (!open_pack_) {
    auto writer = PackWriter::Create(env_, path_ + "/tmp", kPackVersion, cipher_.get());
    if (!writer.ok()) {
      known_.erase(id);
      return writer.status();
    }
    open_pack_ = std::move(writer).value();
  }
  if (Status s = open_pack_->Add(id, type, codec, stored, raw_len); !s.ok()) {
    known_.erase(id);
    return s;
  }
  open_ids_.insert(id);
  result.stored = true;
  result.stored_bytes = stored.size();
  if (open_pack_->size() >= config_.pack_size) STRATA_RETURN_IF_ERROR(SealOpenPack());
  return result;
}

Status Store::SealOpenPack(IndexPublish* publish, Status* moved) {
  if (!open_pack_) return Status::Ok();
  // Take the full pack out and seal it without the lock: its fsync must not
  // stall the other writers, who start a new pack meanwhile.
  std::unique_ptr<PackWriter> writer = std::move(open_pack_);
  std::unordered_set<Hash> ids = std::move(open_ids_);
  open_ids_.clear();
  sealing_ids_.insert(ids.begin(), ids.end());
  sealing_++;
  write_mu_.Unlock();

  Status s;
  auto sealed = writer->Finish();
  if (!sealed.ok()) s = sealed.status();
  if (!s.ok() && writer->intact()) {
    // Nothing is lost (a full disk refused the footer): the pack stays open
    // with its objects, to be sealed by a later Flush, once there is room.
    write_mu_.Lock();
    for (const Hash& id : ids) sealing_ids_.erase(id);
    if (!open_pack_) {
      open_pack_ = std::move(writer);
      open_ids_ = std::move(ids);
    } else {
      // Another writer started a pack meanwhile; this one cannot be kept.
      for (const Hash& id : ids) known_.erase(id);
      if (seal_error_.ok()) seal_error_ = s;
    }
    if (--sealing_ == 0) sealed_.NotifyAll();
    return s;
  }
  if (s.ok()) {
    s = backend_->PublishPack(sealed->local_path, sealed->name);
    // Best effort: the error returned is the publish's; Open removes leftovers in tmp/.
    if (!s.ok()) env_->RemoveFile(sealed->local_path).IgnoreError();
  }
  if (s.ok()) s = IndexOwnPack(sealed->name, sealed->size, sealed->entries, publish, moved);
  writer.reset();

  write_mu_.Lock();
  for (const Hash& id : ids) sealing_ids_.erase(id);
  if (!s.ok()) {
    // These objects are not stored; any later write must not count on them,
    // so the failure sticks until the store is reopened.
    for (const Hash& id : ids) known_.erase(id);
    if (seal_error_.ok()) seal_error_ = s;
  }
  if (--sealing_ == 0) sealed_.NotifyAll();
  return s;
}

Status Store::Flush() {
  {
    MutexLock lock(&write_mu_);
    STRATA_RETURN_IF_ERROR(SealOpenPack());
    while (sealing_ != 0) sealed_.Wait(&write_mu_);  // packs other threads are sealing
    STRATA_RETURN_IF_ERROR(seal_error_);
  }
  uint64_t logical = logical_bytes_pending_.exchange(0);
  if (logical > 0) STRATA_RETURN_IF_ERROR(index_->AddCounter(kLogicalBytesCounter, logical));
  return Status::Ok();
}

void Store::SetSealGenerationSource(SealGenerationSource source) {
  MutexLock lock(&seal_mu_);
  seal_source_ = std::move(source);
}

Status Store::ReserveSeals() {
  // A format 3 store has generation 0 alone, and its bound as before.
  const uint32_t max_generation = config_.seal_generations() ? UINT32_MAX : 0;
  const uint64_t want = std::max<uint64_t>(1, std::min(kSealReservation, config_.seal_limit / 64));
  auto reserve = [&] {
    return index_->ReserveSeals(kSealGenerationCounter, kSealedObjectsCounter, kSealGenerationsGivenCounter, want,
                                config_.seal_limit, max_generation);
  };
  auto r = reserve();
  // InvalidArgument: it owns no generation; Unsupported: it sealed all it may under its last.
  const bool used_up = !r.ok() && (r.status().IsInvalidArgument() || r.status().code() == Status::Code::kUnsupported);
  if (used_up && seal_source_ && config_.seal_generations()) {
    auto more = seal_source_();
    if (!more.ok())
      return Status::Unavailable("the store at " + path_ + " " + r.status().message() +
                                 ", and claiming more key generations failed (" + more.status().message() +
                                 "); nothing more is sealed until a claim succeeds");
    STRATA_RETURN_IF_ERROR(index_->ExtendSeals(kSealGenerationCounter, kSealedObjectsCounter,
                                               kSealGenerationsGivenCounter, *more, config_.seal_limit,
                                               max_generation)
                               .status());
    r = reserve();
  }
  if (!r.ok()) {
    if (r.status().IsInvalidArgument()) return Status::InvalidArgument("the store at " + path_ + " " + r.status().message());
    if (r.status().code() != Status::Code::kUnsupported) return r.status();
    return Status::Unsupported("the store at " + path_ + " " + r.status().message() +
                               ", the most one key may seal safely (docs/format/encryption.md, \"Nonces\"); "
                               "nothing more is written to it: export its branches and import them into a new "
                               "encrypted store");
  }
  seal_generation_ = r->generation;
  seals_left_ = r->count;
  return Status::Ok();
}

Result<uint32_t> Store::TakeSeal() {
  MutexLock lock(&seal_mu_);
  if (seals_left_ == 0) STRATA_RETURN_IF_ERROR(ReserveSeals());
  seals_left_--;
  return seal_generation_;
}

Status Store::FlushIfUnsealed(const Hash& id) {
  bool unsealed;
  {
    MutexLock lock(&write_mu_);
    unsealed = open_ids_.count(id) > 0 || sealing_ids_.count(id) > 0;
  }
  // Objects are read through the index only; one still in the open pack is
  // made readable by sealing that pack early.
  return unsealed ? Flush() : Status::Ok();
}

Result<std::string> Store::Get(const Hash& id, ObjectType expected) {
  return ReadObject<std::string>(id, expected, [this](const std::string& pack, const PackEntry& entry) {
    return packs_->ReadObject(pack, entry);
  });
}

Result<Buffer> Store::GetBuffer(const Hash& id, ObjectType expected) {
  return ReadObject<Buffer>(id, expected, [this](const std::string& pack, const PackEntry& entry) {
    return packs_->ReadObjectBuffer(pack, entry);
  });
}

Result<ObjectPart> Store::GetRange(const Hash& id, ObjectType expected, uint64_t offset, uint64_t length) {
  return ReadObject<ObjectPart>(id, expected, [&](const std::string& pack, const PackEntry& entry) {
    return packs_->ReadRange(pack, entry, offset, length);
  });
}

template <typename T, typename ReadFn>
Result<T> Store::ReadObject(const Hash& id, std::optional<ObjectType> expected, ReadFn read) {
  STRATA_RETURN_IF_ERROR(FlushIfUnsealed(id));
  // Counted to show that reads run in parallel (the index lookup is the one
  // step that is serialised, on its connection's mutex).
  struct InFlight {
    Store* store;
    explicit InFlight(Store* s) : store(s) {
      uint64_t now = ++store->gets_in_flight_, max = store->max_gets_in_flight_.load();
      while (now > max && !store->max_gets_in_flight_.compare_exchange_weak(max, now)) {
      }
    }
    ~InFlight() { --store->gets_in_flight_; }
  } in_flight(this);
  const auto lookup_start = std::chrono::steady_clock::now();
  auto found = index_->Lookup(id);
  lookup_us_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::steady_clock::now() - lookup_start)
                                          .count());
  STRATA_ASSIGN_OR_RETURN(auto loc, std::move(found));
  if (!loc && backend_->Shared()) {
    STRATA_RETURN_IF_ERROR(RefreshAfterMiss());
    STRATA_ASSIGN_OR_RETURN(loc, index_->Lookup(id));
  }
  if (!loc)
    return Status::NotFound(std::string(expected ? ObjectTypeName(*expected) : "object") + " " + id.ToHex() +
                            " is not in the store");
  if (expected && loc->entry.type != *expected)
    return Status::Corruption("object " + id.ToHex() + " is a " + ObjectTypeName(loc->entry.type) + ", expected a " +
                              ObjectTypeName(*expected));
  DropRemovedPackHandles();
  Result<T> data = read(loc->pack, loc->entry);
  if (data.ok()) return data;
  // gc may have moved the object to a new pack between the lookup and the
  // read: if the index now places it elsewhere, read it there.
  auto moved = index_->Lookup(id);
  if (moved.ok() && *moved && (*moved)->pack == loc->pack && data.status().IsNotFound() && backend_->Shared()) {
    // A remote's gc may have repacked it: the packs listed now say where.
    STRATA_RETURN_IF_ERROR(RefreshAfterVanishedPack());
    moved = index_->Lookup(id);
  }
  if (!moved.ok() || !*moved || (*moved)->pack == loc->pack) return data;
  return read((*moved)->pack, (*moved)->entry);
}

Status Store::RefreshAfterVanishedPack() {
  MutexLock lock(&refresh_mu_);
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  // At most one listing a second, as for a miss: reads of a pack that is
  // really lost cost a lookup each, not a listing of the bucket each.
  if (now - refresh_ms_ >= 1000) {
    refresh_ms_ = now;
    STRATA_ASSIGN_OR_RETURN(WriteSession session, BeginSession(/*announce=*/false));
    STRATA_RETURN_IF_ERROR(IndexNewPacks());
  }
  return backend_->ForgetPacksGoneSinceListing();
}

Status Store::RefreshAfterMiss() {
  MutexLock lock(&refresh_mu_);
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  // Threads that waited here while another refreshed look again without a
  // new listing; so does a run of misses within a second (a missing object
  // costs a lookup, not a listing of the bucket each time).
  if (now - refresh_ms_ < 1000) return Status::Ok();
  refresh_ms_ = now;
  STRATA_ASSIGN_OR_RETURN(WriteSession session, BeginSession(/*announce=*/false));
  return IndexNewPacks();
}

Result<StoredObject> Store::GetStored(const Hash& id) {
  return ReadObject<StoredObject>(id, std::nullopt, [this](const std::string& pack, const PackEntry& entry) {
    auto bytes = packs_->ReadStored(pack, entry);
    if (!bytes.ok()) return Result<StoredObject>(bytes.status());
    return Result<StoredObject>(StoredObject{entry.type, entry.codec, entry.raw_len, std::move(bytes).value()});
  });
}

void Store::SetReadCheck(ReadCheck check) {
  // A remote's bytes are always checked in full.
  packs_->SetReadCheck(backend_->LocalDisk() ? check : ReadCheck::kFull);
}

ReadCheck Store::read_check() const { return packs_->read_check(); }

StoreReadCounters Store::ReadCounters() const {
  PackCache::Counters p = packs_->counters();
  StoreReadCounters c;
  c.objects = p.objects;
  c.bytes_stored = p.bytes_stored;
  c.bytes_verified = p.bytes_verified;
  c.pread_us = p.pread_us;
  c.decode_us = p.decode_us;
  c.frames_decoded = p.frames_decoded;
  c.range_reads = p.range_reads;
  c.fast_checked_bytes = p.fast_checked_bytes;
  c.sha256_checked_bytes = p.sha256_checked_bytes;
  c.lookup_us = lookup_us_.load();
  c.max_in_flight = max_gets_in_flight_.load();
  c.backend = backend_->Counters();
  return c;
}

Result<bool> Store::Contains(const Hash& id) {
  if (backend_->Condemned(id)) return false;
  {
    MutexLock lock(&write_mu_);
    if (known_.count(id)) return true;
  }
  STRATA_ASSIGN_OR_RETURN(auto loc, index_->Lookup(id));
  return loc.has_value();
}

Result<Tree> Store::GetTree(const Hash& id) {
  STRATA_ASSIGN_OR_RETURN(std::string data, Get(id, ObjectType::kTree));
  auto tree = DecodeTree(data);
  if (!tree.ok()) return tree.status().WithContext("tree " + id.ToHex());
  return tree;
}

Result<Commit> Store::GetCommit(const Hash& id) {
  STRATA_ASSIGN_OR_RETURN(std::string data, Get(id, ObjectType::kCommit));
  auto commit = DecodeCommit(data);
  if (!commit.ok()) return commit.status().WithContext("commit " + id.ToHex());
  return commit;
}

Result<std::vector<Hash>> Store::FindCommitsByPrefix(std::string_view hex_prefix, size_t limit) {
  return index_->FindByPrefix(ObjectType::kCommit, std::string(hex_prefix), limit);
}

Result<std::string> Store::BackendRefName(const std::string& name) const {
  if (!IsValidRefName(name)) return Status::InvalidArgument("'" + name + "' is not a valid branch name");
  if (!cipher_) return name;
  return cipher_->SealRefName(name);
}

Result<std::optional<Hash>> Store::GetRef(const std::string& name) {
  STRATA_ASSIGN_OR_RETURN(std::string kept, BackendRefName(name));
  return backend_->GetRef(kept);
}

Result<std::map<std::string, Hash>> Store::ListRefs() {
  STRATA_ASSIGN_OR_RETURN(auto kept, backend_->ListRefs());
  if (!cipher_) return kept;
  std::map<std::string, Hash> refs;
  for (const auto& [sealed, target] : kept) {
    auto name = cipher_->OpenRefName(sealed);
    if (!name.ok()) return name.status().WithContext("store " + path_);
    refs.emplace(std::move(name).value(), target);
  }
  return refs;
}

Status Store::CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target) {
  STRATA_ASSIGN_OR_RETURN(std::string kept, BackendRefName(name));
  // A ref may only point at a commit that is durably stored; the session keeps
  // gc from deleting it between this check and the swap.
  STRATA_ASSIGN_OR_RETURN(WriteSession session, BeginWrite());
  STRATA_ASSIGN_OR_RETURN(auto loc, index_->Lookup(target));
  if (!loc || loc->entry.type != ObjectType::kCommit)
    return Status::InvalidArgument("cannot point branch '" + name + "' at " + target.ToHex() +
                                   ": no such commit in the store");
  return backend_->CompareAndSwapRef(kept, expected, target);
}

Status Store::FlushAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target) {
  if (!backend_->RefsInIndex()) {  // a bucket's refs: the move is a request of its own
    STRATA_RETURN_IF_ERROR(Flush());
    return CompareAndSwapRef(name, expected, target);
  }
  STRATA_ASSIGN_OR_RETURN(std::string kept, BackendRefName(name));
  // As in CompareAndSwapRef: gc deletes nothing between the check and the move.
  STRATA_ASSIGN_OR_RETURN(WriteSession session, BeginWrite());
  IndexPublish publish;
  publish.ref = kept;
  publish.expected = expected;
  publish.target = target;
  const uint64_t logical = logical_bytes_pending_.exchange(0);
  publish.counters.emplace_back(kLogicalBytesCounter, logical);
  Status moved = Status::Ok();
  Status s = [&]() -> Status {
    {
      MutexLock lock(&write_mu_);
      while (sealing_ != 0) sealed_.Wait(&write_mu_);  // packs other threads are sealing
      STRATA_RETURN_IF_ERROR(seal_error_);
      if (open_pack_) return SealOpenPack(&publish, &moved);
    }
    return index_->Publish(publish, &moved);
  }();
  if (!s.ok()) {
    logical_bytes_pending_ += logical;  // not counted: the transaction did not land
    return s;
  }
  return moved;
}

Status Store::DeleteRef(const std::string& name, const Hash& expected) {
  STRATA_ASSIGN_OR_RETURN(std::string kept, BackendRefName(name));
  return backend_->DeleteRef(kept, expected);
}

Result<StoreStats> Store::Stats() {
  StoreStats s;
  STRATA_ASSIGN_OR_RETURN(auto totals, index_->TotalsByType());
  for (const auto& [type, t] : totals) {
    if (type >= 1 && type <= 3) s.objects[type] = t.count;
    s.raw_bytes += t.raw_bytes;
    if (type == static_cast<int>(ObjectType::kChunk)) s.chunk_raw_bytes = t.raw_bytes;
    s.payload_bytes += t.stored_bytes;
  }
  STRATA_ASSIGN_OR_RETURN(auto packs, index_->ListPacks());
  s.packs = packs.size();
  for (const auto& [name, size] : packs) s.pack_bytes += size;
  STRATA_ASSIGN_OR_RETURN(s.logical_bytes, index_->GetCounter(kLogicalBytesCounter));
  STRATA_ASSIGN_OR_RETURN(auto refs, backend_->ListRefs());
  s.refs = refs.size();
  return s;
}

}  // namespace strata
