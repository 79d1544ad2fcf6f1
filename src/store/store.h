// Store: a repository of immutable, content-addressed objects plus refs.
//
// Layout of a local store (docs/format/store.md):
//   config.json   format version, hash, chunking and compression settings
//   index.db      SQLite: which pack holds which object; refs; counters
//   packs/        sealed pack files, named by the SHA-256 of their bytes
//   tmp/          packs being written
// Packs and refs are reached through a Backend (backend.h), so the same
// store logic can later keep them in an object store.
//
// Writing: Put() hashes an object, skips it when the store already has it
// (dedup), compresses it in the calling thread and appends it to the open pack.
// A pack is sealed (footer, fsync, rename into packs/, index rows) when it
// reaches the size limit or on Flush(). Nothing written is reachable before
// Flush() returns; a ref must only be moved to a commit after Flush().
//
// Reading: Get() finds the object through the index, reads it with pread,
// checks it (the XXH3 checksums of its frames for a pack on this machine's
// disk; its SHA-256 id as well for a remote's, or when asked) and decodes
// it; a mismatch is Corruption naming the object and the pack, never wrong
// bytes.
//
// Garbage collection (gc.h) deletes objects that nothing refers to while
// other processes keep using the store. Writers protect what they are about
// to make reachable with a WriteSession (below); gc deletes only while it holds
// the store's gc lock exclusively, i.e. while no session is open anywhere.
//
// Crash safety: a crash leaves at most a temp pack (deleted by the next Open)
// or a sealed pack not yet indexed (indexed from its footer by the next Open).
//
// Thread-safety: all methods may be called concurrently from many threads.
// Several processes may use one store at once (SQLite arbitrates the index).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "crypto/aead.h"
#include "crypto/passphrase_kdf.h"
#include "env/env.h"
#include "store/chunker.h"
#include "store/commit.h"
#include "store/frame_format.h"
#include "store/pack_format.h"
#include "store/pack_reader.h"
#include "store/seal_range.h"
#include "store/object.h"
#include "store/tree.h"
#include "util/hash.h"
#include "util/mutex.h"
#include "util/status.h"

namespace strata {

class Backend;
class Index;
struct IndexPublish;
class PackWriter;
class PackCache;
class StoreCipher;

struct StoreConfig {
  // Version 2: packs of version 2 (framed objects with XXH3 frame checksums).
  // A version 1 store is read as it is and marked version 2 when opened.
  static constexpr int kFormatVersion = 2;
  static constexpr int kOldestFormatVersion = 1;
  // Version 3: an encrypted store (docs/format/encryption.md): sealed objects,
  // pack footers and branch names, keyed ids. A strata that knows only
  // version 2 refuses it by its version, before it could misread a byte.
  // Version 4: an encrypted store whose sealed objects name the generation of
  // the object-seal key they were sealed under (a 4-byte header), so that it
  // moves to a new key every seal_limit seals instead of stopping. Version 3
  // stores are read and written as before: one generation, 0, no header.
  static constexpr int kFirstEncryptedFormatVersion = 3;
  static constexpr int kEncryptedFormatVersion = 4;
  // Seals under one key generation: at most half the random-nonce bound of
  // AES-GCM (docs/format/encryption.md, "Nonces"), at least kMinSealLimit.
  static constexpr uint64_t kMaxSealLimit = uint64_t{1} << 31;
  static constexpr uint64_t kMinSealLimit = 16;
  uint64_t seal_limit = kMaxSealLimit;
  static constexpr const char* kCipher = "aes-256-gcm";
  int version = kFormatVersion;
  // "" for a plain store, else kCipher; with it, version must be
  // kEncryptedFormatVersion. Its key files are in the store's keys/.
  std::string encryption;
  // An encrypted store's random id (32 hex digits) and its key check: HMAC
  // of the id under the master key's key-check subkey (64 hex digits), so a
  // master key of another store is refused before anything is read. Neither
  // reveals the key.
  std::string store_id;
  std::string key_check;
  std::string hash = "sha256";
  ChunkerParams chunker;
  int zstd_level = 3;
  unsigned frame_shift = kDefaultFrameShift;  // frames of 1 << frame_shift plain bytes
  uint64_t pack_size = 32ull << 20;  // a pack is sealed once it reaches this

  bool encrypted() const { return !encryption.empty(); }
  // Whether sealed objects carry their key generation (version 4 on).
  bool seal_generations() const { return version >= kEncryptedFormatVersion; }
  // This configuration for an encrypted store.
  StoreConfig Encrypted() const;

  std::string ToJson() const;
  static Result<StoreConfig> FromJson(std::string_view json);
};

// An object as a pack holds it (compressed or raw), for copying it to another
// store without compressing it again (GetStored, PutStored).
struct StoredObject {
  ObjectType type = ObjectType::kChunk;
  Codec codec = Codec::kRaw;
  uint64_t raw_len = 0;
  std::string bytes;
};

// What Put() did, for counters.
struct PutResult {
  Hash id;
  bool stored = false;  // false: the store already had it (dedup)
  uint64_t stored_bytes = 0;
};

struct StoreStats {
  uint64_t objects[4] = {0, 0, 0, 0};  // indexed by ObjectType
  uint64_t packs = 0;
  uint64_t raw_bytes = 0;      // sum of unique objects, uncompressed
  uint64_t chunk_raw_bytes = 0;  // of which chunks (file data)
  uint64_t payload_bytes = 0;  // sum of unique objects as stored (compressed)
  uint64_t pack_bytes = 0;     // size of the pack files on disk
  uint64_t logical_bytes = 0;  // file bytes ever given to the store, before dedup
  uint64_t refs = 0;
};

// What reading objects has cost since the Store was opened (`strata stats`):
// enough to tell the disk, the decoder and the index apart, and to see that
// reads ran in parallel.
struct StoreReadCounters {
  uint64_t objects = 0;         // objects read from packs
  uint64_t bytes_stored = 0;    // bytes read from packs (compressed)
  uint64_t bytes_verified = 0;  // decoded bytes checked (by either check): each object once per read
  uint64_t frames_decoded = 0;        // frames of framed objects decoded
  uint64_t range_reads = 0;           // GetRange calls that decoded only some frames of an object
  uint64_t fast_checked_bytes = 0;    // stored bytes checked by their XXH3 frame checksums
  uint64_t sha256_checked_bytes = 0;  // decoded bytes checked by SHA-256 against their id
  uint64_t lookup_us = 0;       // in index lookups
  uint64_t pread_us = 0;        // in preads of packs
  uint64_t decode_us = 0;       // decompressing and hashing
  uint64_t max_in_flight = 0;   // most Get() calls running at once
  std::vector<std::pair<std::string, uint64_t>> backend;  // Backend::Counters()
};

// Makes the backend of a store opened at store_path (index: its local index).
using BackendFactory =
    std::function<Result<std::unique_ptr<Backend>>(Env* env, const std::string& store_path, Index* index)>;

class Store {
 public:
  // Creates a new store at path (which must not exist or be an empty directory).
  static Status Init(const std::string& path, const StoreConfig& config, Env* env = Env::Default());
  // Creates a new encrypted store (config.Encrypted()): a new random master
  // key, wrapped under passphrase in the store's first key file (keys/).
  static Status InitEncrypted(const std::string& path, const StoreConfig& config, std::string_view passphrase,
                              const crypto::ScryptParams& params = {}, Env* env = Env::Default());
  // The same with an existing master key (that of another store, from its
  // master key file): the new store owns no key generation, and seals
  // nothing, until AdoptSealGenerations gives it a range granted by a store
  // that owns some (docs/format/encryption.md, "Nonces across stores").
  static Status InitEncryptedWithKey(const std::string& path, const StoreConfig& config, std::string_view passphrase,
                                     const crypto::Key256& master, const crypto::ScryptParams& params = {},
                                     Env* env = Env::Default());
  // An encrypted store with the config (id and key check) of another and no
  // key files: a remote's local side, opened with the key of the store it
  // belongs to. It owns no key generation until AdoptSealGenerations.
  static Status InitWithoutKeys(const std::string& path, const StoreConfig& config, Env* env = Env::Default());
  // Opens an existing store, refusing unknown format versions, and recovers
  // from an earlier crash (temp packs removed, unindexed packs indexed).
  // An encrypted store needs its master key (Unlock); without one it is
  // refused before anything in it is read but its config.json.
  static Result<std::unique_ptr<Store>> Open(const std::string& path, Env* env = Env::Default(),
                                             const crypto::Key256* master = nullptr);
  // The same with packs and refs kept elsewhere (a remote store: path is then
  // its local side, the index and temp packs).
  static Result<std::unique_ptr<Store>> Open(const std::string& path, Env* env, const BackendFactory& backend,
                                             const crypto::Key256* master = nullptr);
  // The configuration of the store at path, read before opening it (to know
  // whether it needs a passphrase).
  static Result<StoreConfig> ReadConfig(const std::string& path, Env* env = Env::Default());
  // The master key of the encrypted store at path, from the first key file
  // passphrase opens; InvalidArgument ("wrong passphrase") if none does.
  // Nothing in the store is written.
  static Result<crypto::Key256> Unlock(const std::string& path, std::string_view passphrase,
                                       Env* env = Env::Default());
  // Whether master is the key of the encrypted store at path (its key check
  // in config.json); InvalidArgument naming the store if not. Reads only
  // config.json.
  static Status CheckKey(const std::string& path, const crypto::Key256& master, Env* env = Env::Default());
  // The directory of the key files of the store at path (canonical or not).
  static std::string KeysDir(const std::string& path) { return path + "/keys"; }
  // The Env for the files of the store at path, confined to it and refused
  // unless the directory is its user's own (for its key ring); *root gets
  // the store's canonical path.
  static Result<std::unique_ptr<Env>> TrustedEnv(const std::string& path, Env* env, std::string* root);

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const StoreConfig& config() const { return config_; }
  // An encrypted store's cipher; null for a plain store.
  const StoreCipher* cipher() const { return cipher_.get(); }
  // The id an object of these bytes has in this store (keyed if encrypted),
  // and the chunker that cuts files for it (a keyed gear table if encrypted).
  Hash ObjectId(ObjectType type, std::string_view data) const;
  Chunker NewChunker() const;
  // The store's canonical path, and the Env for files inside it: confined to
  // it (Env::Beneath), so it refuses links and paths outside the store.
  const std::string& path() const { return path_; }
  Env* env() const { return env_; }

  // ---- objects
  // An encrypted store seals at most config().seal_limit objects under one
  // object-seal key generation (the random-nonce bound of AES-GCM with
  // margin, docs/format/encryption.md, "Nonces"), then moves to the next;
  // a format 3 store has one generation and refuses to seal more.
  Result<PutResult> Put(ObjectType type, std::string_view data);
  Result<std::string> Get(const Hash& id, ObjectType expected);
  // The same in a Buffer (never zero-filled): for file data.
  Result<Buffer> GetBuffer(const Hash& id, ObjectType expected);
  // Bytes [offset, offset + length) of an object, within the whole frames
  // that hold them (PackCache::ReadRange): a small read of a large chunk
  // decodes one frame, not the chunk. The whole object where its check needs
  // every byte (pack format 1, or kFull). REQUIRES: length > 0.
  Result<ObjectPart> GetRange(const Hash& id, ObjectType expected, uint64_t offset, uint64_t length);
  Result<bool> Contains(const Hash& id) EXCLUDES(write_mu_);
  Result<Tree> GetTree(const Hash& id);
  Result<Commit> GetCommit(const Hash& id);
  StoreReadCounters ReadCounters() const;
  // How Get and GetBuffer check what they read (pack_reader.h): kFast unless
  // a mount asks for kFull (--verify-reads=full). A store on a remote
  // backend always checks kFull, whatever is asked.
  void SetReadCheck(ReadCheck check);
  ReadCheck read_check() const;
  // Copying between stores: the object as stored, checked against its id
  // (decoded and hashed, then the stored bytes handed over); and storing one
  // so obtained as it is. PutStored trusts the id: give it only what
  // GetStored of a store returned.
  Result<StoredObject> GetStored(const Hash& id);
  Result<PutResult> PutStored(const Hash& id, const StoredObject& object);
  // Seals the open pack and indexes it; after it returns every Put is durable.
  Status Flush() EXCLUDES(write_mu_);
  // Adds to the counter of file bytes given to the store (for the dedup ratio).
  void AddLogicalBytes(uint64_t n) { logical_bytes_pending_ += n; }

  // Key generations of an encrypted store (format 4), so that stores sharing
  // a master key never seal under one generation: Grant hands away up to
  // max_count of this store's (the upper half of what it has left), Adopt
  // makes a granted range the own of a store that has sealed nothing, Owned
  // is what the store may still seal under.
  Result<SealRange> GrantSealGenerations(uint64_t max_count);
  Status AdoptSealGenerations(const SealRange& range) EXCLUDES(seal_mu_);
  Result<SealRange> OwnedSealGenerations();
  // Where the store gets more key generations once it has sealed all it may
  // under those it owns: a claim on the bucket of a remote (seal_grants.h).
  // Called by the seal that finds them used up, holding the seal lock (other
  // seals wait for it); its range becomes the store's (Index::ExtendSeals).
  // Without one, or when it fails, that seal fails, saying why.
  using SealGenerationSource = std::function<Result<SealRange>()>;
  void SetSealGenerationSource(SealGenerationSource source) EXCLUDES(seal_mu_);

  // ---- write sessions
  // A session spans from a writer's first Put (the moment it may count on an
  // object being stored) until what it wrote is reachable: from a ref, or as a
  // workspace's base. While any session is open, in any process, gc deletes
  // nothing. Sessions nest and may be held by many threads; the first one
  // waits while gc is deleting (a short phase). See docs/format/store.md.
  class WriteSession {
   public:
    WriteSession(WriteSession&& other) noexcept : store_(other.store_) { other.store_ = nullptr; }
    WriteSession& operator=(WriteSession&&) = delete;
    ~WriteSession();

   private:
    friend class Store;
    explicit WriteSession(Store* store) : store_(store) {}
    Store* store_;
  };
  Result<WriteSession> BeginWrite() EXCLUDES(session_mu_);
  // The lock file sessions (shared) and gc's deleting phase (exclusive) take.
  std::string GcLockPath() const { return path_ + "/gc.lock"; }
  // Held by a pack merge (pack_merge.h) and by gc for its whole run.
  std::string MergeLockPath() const { return path_ + "/merge.lock"; }

  // Whether the end of the last write session merges small packs
  // (pack_merge.h); on by default. Tests that count packs turn it off.
  void SetPackMerging(bool on) { merge_small_packs_ = on; }

  // Ids of commits whose hex form starts with prefix (at most `limit`).
  Result<std::vector<Hash>> FindCommitsByPrefix(std::string_view hex_prefix, size_t limit);

  // ---- refs (branches); names are checked by IsValidRefName
  Result<std::optional<Hash>> GetRef(const std::string& name);
  Result<std::map<std::string, Hash>> ListRefs();
  // Moves name from `expected` (nullopt: must not exist) to `target`.
  // A ref that moved meanwhile is Conflict ("head moved"), never overwritten.
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target);
  // Flush() and then CompareAndSwapRef(), as a commit publishes itself; in a
  // local store the open pack's index rows, the counters and the move are one
  // index transaction (one disk flush instead of three). What was written is
  // durable and indexed also when the move is refused (Conflict).
  Status FlushAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target)
      EXCLUDES(write_mu_);
  // Deletes name if it still points at `expected` (the value the caller read);
  // Conflict ("head moved") if it moved or went meanwhile. The commits stay.
  Status DeleteRef(const std::string& name, const Hash& expected);

  Result<StoreStats> Stats();

  // ---- for verify
  Backend* backend() const { return backend_.get(); }
  Index* index() const { return index_.get(); }

 private:
  Store(std::string path, std::unique_ptr<Env> env, StoreConfig config, std::unique_ptr<Index> index,
        std::unique_ptr<Backend> backend, std::unique_ptr<StoreCipher> cipher);
  // A branch name as the backend keeps it: sealed in an encrypted store.
  Result<std::string> BackendRefName(const std::string& name) const;
  // Init, calling before_config (if any) once the store's directories exist
  // and before config.json makes it a store; it may complete the config.
  static Status InitWith(const std::string& path, StoreConfig config, Env* env,
                         const std::function<Status(Env* inside, const std::string& root, StoreConfig* config)>&
                             before_config);
  // The key generation of the next seal, from a reservation this Store holds
  // or makes in the index (Index::ReserveSeals) before the seal.
  Result<uint32_t> TakeSeal() EXCLUDES(seal_mu_);
  // The reservation TakeSeal makes (into seals_left_ and seal_generation_),
  // claiming more generations from seal_source_ once when the store's are
  // used up.
  Status ReserveSeals() REQUIRES(seal_mu_);
  // OK if master's key check is config's (root names the store in messages).
  static Status CheckKeyOf(const StoreConfig& config, const crypto::Key256& master, const std::string& root);
  Status Recover();
  // Indexes published packs the index does not know (from their footers).
  Status IndexNewPacks();
  // For a shared backend: an object missing from the index may be in a pack
  // another machine published since; lists the packs at most once a second.
  Status RefreshAfterMiss() EXCLUDES(refresh_mu_);
  // For a shared backend: a read found its pack gone; indexes the packs
  // listed now and forgets those that went (Backend::ForgetPacksGoneSinceListing).
  Status RefreshAfterVanishedPack() EXCLUDES(refresh_mu_);
  void EndWrite() EXCLUDES(session_mu_);
  void ForgetKnownIds() EXCLUDES(write_mu_);
  // Get, GetBuffer and GetStored: finds id in the index (asking a shared
  // backend again on a miss), checks its type (unless nullopt: any type) and
  // reads it with read(pack, entry), once more where the index says gc moved
  // it meanwhile.
  template <typename T, typename ReadFn>
  Result<T> ReadObject(const Hash& id, std::optional<ObjectType> expected, ReadFn read);
  // Closes pack handles once gc removed packs, so their space is freed even in
  // a long-running mount; checks the index at most once a second.
  void DropRemovedPackHandles();
  // Whether the object is stored (remembered in known_ if so).
  Result<bool> IsStored(const Hash& id) EXCLUDES(write_mu_);
  // A session that announces itself to a shared backend (AnnounceWriter) or,
  // for indexing alone (Recover, RefreshAfterMiss), only holds the lock.
  Result<WriteSession> BeginSession(bool announce) EXCLUDES(session_mu_);
  // Indexes a pack this store sealed and published.
  // With `publish`, its counters and ref move go in the same transaction
  // (Index::Publish), and *moved says whether the ref moved.
  Status IndexOwnPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries,
                      IndexPublish* publish = nullptr, Status* moved = nullptr);
  // Adds an object to the open pack unless another thread just did.
  Result<PutResult> Append(const Hash& id, ObjectType type, Codec codec, std::string_view stored, uint64_t raw_len)
      EXCLUDES(write_mu_);
  // Seals the open pack early when it holds `id`, so that id can be read.
  Status FlushIfUnsealed(const Hash& id) EXCLUDES(write_mu_);
  // Seals the open pack; drops write_mu_ while syncing it, and holds it again on return.
  // With `publish`, the pack is indexed with it (IndexOwnPack).
  Status SealOpenPack(IndexPublish* publish = nullptr, Status* moved = nullptr) REQUIRES(write_mu_);

  const std::string path_;  // canonical
  const std::unique_ptr<Env> owned_env_;  // confined to path_ (Env::Beneath)
  Env* const env_;
  const StoreConfig config_;
  std::unique_ptr<Index> index_;
  std::unique_ptr<Backend> backend_;  // packs and refs
  const std::unique_ptr<StoreCipher> cipher_;  // null: a plain store
  std::unique_ptr<PackCache> packs_;

  // Lock order, across modules: a workspace's mu_ (SqliteWorkspace) before
  // any of these; then refresh_mu_, session_mu_, write_mu_, and last the
  // index's mu_ (Index) and the pack cache's (PackCache), which are leaves;
  // seal_mu_ is held only around the index's.
  // Nothing under a store lock calls back up into the workspace.
  Mutex refresh_mu_ ACQUIRED_BEFORE(session_mu_);  // one pack-list refresh at a time
  int64_t refresh_ms_ GUARDED_BY(refresh_mu_) = 0;  // when the last one started
  Mutex session_mu_ ACQUIRED_BEFORE(write_mu_);
  int sessions_ GUARDED_BY(session_mu_) = 0;
  std::unique_ptr<FileLock> session_lock_ GUARDED_BY(session_mu_);  // shared gc lock while sessions_ > 0
  bool announced_ GUARDED_BY(session_mu_) = false;  // the backend was told of the open sessions
  Mutex write_mu_;  // protects the open pack
  std::unique_ptr<PackWriter> open_pack_ GUARDED_BY(write_mu_);
  std::unordered_set<Hash> open_ids_ GUARDED_BY(write_mu_);  // objects in open_pack_
  std::unordered_set<Hash> sealing_ids_ GUARDED_BY(write_mu_);  // objects in packs being sealed
  int sealing_ GUARDED_BY(write_mu_) = 0;  // packs being sealed
  CondVar sealed_;  // sealing_ dropped to 0
  Status seal_error_ GUARDED_BY(write_mu_);  // sticky: a pack that failed to seal
  // Every id this Store wrote or found already stored, so repeated Puts of one
  // object (common in an import) skip the index lookup.
  std::unordered_set<Hash> known_ GUARDED_BY(write_mu_);
  std::atomic<uint64_t> logical_bytes_pending_{0};
  // Seals this Store reserved in the index and has not used yet, and their generation.
  Mutex seal_mu_;
  uint64_t seals_left_ GUARDED_BY(seal_mu_) = 0;
  uint32_t seal_generation_ GUARDED_BY(seal_mu_) = 0;
  SealGenerationSource seal_source_ GUARDED_BY(seal_mu_);

  std::atomic<uint64_t> gets_in_flight_{0}, max_gets_in_flight_{0}, lookup_us_{0};
  std::atomic<int64_t> pack_check_ms_{0};     // when DropRemovedPackHandles last looked
  std::atomic<uint64_t> gc_generation_{0};    // the index's gc generation it saw then
  std::atomic<bool> merge_small_packs_{true};
};

// Branch names: like git's, minus what would be ambiguous with a revision:
// letters, digits, '-', '_', '.', '/'; no "..", no leading '-' or '/', no '~' or ':'.
bool IsValidRefName(std::string_view name);

}  // namespace strata
