// Index: the store's SQLite database (STORE/index.db).
//
// Tables (docs/format/store.md):
//   packs(id, name, size, objects)       one row per sealed pack
//   objects(oid, pack, offset, ...)      where each object lives; rebuildable from pack footers
//   refs(name, oid)                      branches; the only state that is not derivable
//   counters(name, value)                cumulative counters (logical bytes ingested)
//   forgotten(oid, forgotten_ns)         commits `strata forget` let go of; not derivable either;
//                                        made by the first forget (older stores lack it)
//   meta(key, value)                     schema version
//
// WAL mode with synchronous=FULL: a ref update that returned is durable.
//
// Thread-safety: one connection, serialised by an internal mutex. Several
// processes may open the same index; SQLite's locking arbitrates, with a busy
// timeout so short contention waits instead of failing.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "store/pack_format.h"
#include "store/seal_range.h"
#include "util/hash.h"
#include "util/mutex.h"
#include "util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strata {

struct ObjectLocation {
  std::string pack;  // file name under packs/
  PackEntry entry;
};

// A pack and how much of it the index still uses (gc decides from this
// whether to rewrite it).
struct PackUsage {
  std::string name;
  uint64_t size = 0;          // bytes of the pack file
  uint64_t live_objects = 0;  // objects the index places in it
  uint64_t live_bytes = 0;    // their stored bytes
};

// A pack gc wrote, with the objects it holds.
struct NewPack {
  std::string name;
  uint64_t size = 0;
  std::vector<PackEntry> entries;
};

// What a commit publishes, in one transaction (Index::Publish): the pack it
// sealed, if any, counter increments, and the move of its branch.
struct IndexPublish {
  std::optional<NewPack> pack;
  std::vector<std::pair<std::string, uint64_t>> counters;  // name, increment
  std::string ref;
  std::optional<Hash> expected;  // nullopt: the ref must not exist
  Hash target;
};

struct TypeTotals {
  uint64_t count = 0, raw_bytes = 0, stored_bytes = 0;
};

// ---- rows as SQLite hands them over, and what they mean
//
// index.db is a file like any other: a damaged or hostile one must be an
// error, never a pack path outside packs/, an unknown enum value or a length
// that wraps. These pure functions are the only way the Index reads rows.

// One row of the objects table (the pack column is resolved to its name apart).
struct IndexObjectRow {
  std::string oid;  // BLOB
  int64_t offset = 0, stored_len = 0, raw_len = 0, type = 0, codec = 0;
  bool operator==(const IndexObjectRow&) const = default;
};
// What AddPack writes for e (id included).
IndexObjectRow EncodeIndexObjectRow(const PackEntry& e);
// Corruption unless oid is 32 bytes, type and codec are known values (not
// merely after a cast to a byte), offset lies past the pack header, the
// stored bytes end below 2^63 and raw_len is at most kMaxObjectSize.
Result<PackEntry> DecodeIndexObjectRow(const IndexObjectRow& row);
// A packs row's name and size: the name must be "<64 hex digits>.pack" (a
// name read from the index becomes a path under packs/), the size at least a
// header and a trailer.
struct IndexPackRow {
  std::string name;
  uint64_t size = 0;
};
Result<IndexPackRow> DecodeIndexPackRow(std::string_view name, int64_t size);
// A refs row: a valid branch name (IsValidRefName) and a 32-byte id.
Result<Hash> DecodeIndexRefRow(std::string_view name, std::string_view oid);

class Index {
 public:
  static Result<std::unique_ptr<Index>> Open(const std::string& path, bool create);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  Result<std::optional<ObjectLocation>> Lookup(const Hash& id);
  // Adds a sealed pack and its objects in one transaction; re-adding is a no-op.
  Status AddPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries);
  Result<std::map<std::string, uint64_t>> ListPacks();  // name -> size
  Result<uint64_t> PackCount();
  // Every object the index places in `pack`.
  Result<std::vector<PackEntry>> ObjectsInPack(const std::string& pack);
  // Packs holding objects that the index places elsewhere (an object has one
  // row, in the first pack indexed with it): fewer rows than the pack's
  // footer has entries. Their footers tell their true contents.
  Result<std::vector<std::string>> PacksWithObjectsElsewhere();
  // Places in the indexed pack `name` those of `entries` that no pack holds
  // any more in the index (after the pack that did was forgotten).
  Status AddMissingObjects(const std::string& name, const std::vector<PackEntry>& entries);
  Result<std::vector<Hash>> FindByPrefix(ObjectType type, const std::string& hex_prefix, size_t limit);
  Result<std::map<int, TypeTotals>> TotalsByType();

  // ---- for gc
  // Every indexed object with its stored size, sorted by id.
  Result<std::vector<std::pair<Hash, uint64_t>>> ListObjects();
  // Forgets objects (in one transaction); their bytes stay in their packs
  // until gc rewrites or removes those.
  Status DeleteObjects(const std::vector<Hash>& ids);
  Result<std::vector<PackUsage>> ListPackUsage();
  // In one transaction: indexes `added` (its objects now live there, wherever
  // they were), then forgets the packs in `removed` and any object still placed
  // in them, and bumps the gc generation counter so that other processes close
  // their handles on the removed packs.
  Status ReplacePacks(const std::optional<NewPack>& added, const std::vector<std::string>& removed);

  Result<std::optional<Hash>> GetRef(const std::string& name);
  Result<std::map<std::string, Hash>> ListRefs();
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target);
  // In one transaction, so one disk flush: indexes p.pack (as AddPack),
  // increments the counters, and moves p.ref from p.expected to p.target as
  // CompareAndSwapRef would. The pack and counters land even when the ref
  // does not move: *moved is then Conflict (the ref is elsewhere) or
  // InvalidArgument (the target is no indexed commit). The returned status is
  // the transaction's; *moved is meaningful only when it is Ok.
  Status Publish(const IndexPublish& p, Status* moved);
  // Removes name if it still points at expected; Conflict otherwise.
  Status DeleteRef(const std::string& name, const Hash& expected);

  // ---- commits `strata forget` let go of: their trees are no longer kept
  // (docs/format/store.md). The set only grows; adding is one transaction.
  Status AddForgotten(const std::vector<Hash>& commits, int64_t when_ns);
  Result<std::unordered_set<Hash>> ListForgotten();
  Result<bool> IsForgotten(const Hash& commit);

  Status AddCounter(const std::string& name, uint64_t delta);
  Result<uint64_t> GetCounter(const std::string& name);

  // Seals an encrypted store may make under one object-seal generation: up to
  // `want` of the generation in counter gen_counter, in one transaction, so
  // that no two reservations (of any process) overlap and the reservation is
  // durable before its first seal. When that generation has given `limit`, the
  // next one starts (none past max_generation: Unsupported). A crash loses
  // only unused seals, never reuses one.
  struct SealReservation {
    uint32_t generation = 0;
    uint64_t count = 0;
  };
  // given_counter: the generations handed away from the top of the store's
  // range (GrantSeals), which it never seals under itself.
  Result<SealReservation> ReserveSeals(const std::string& gen_counter, const std::string& used_counter,
                                       const std::string& given_counter, uint64_t want, uint64_t limit,
                                       uint32_t max_generation);
  // Key generations a store owns: [first, end), end at most 2^32. It seals
  // under them upwards from its current one and hands ranges away from the
  // top (docs/format/encryption.md, "Nonces across stores").
  // Hands away the upper half of the generations above the current one, at
  // most max_count, in one transaction: the store never seals under them.
  // Unsupported when fewer than two are left.
  Result<SealRange> GrantSeals(const std::string& gen_counter, const std::string& given_counter, uint64_t max_count);
  // Makes range the store's own; InvalidArgument once it has sealed anything.
  Status AdoptSeals(const std::string& gen_counter, const std::string& used_counter,
                    const std::string& given_counter, const SealRange& range);
  // For a store that has sealed all it may under the generations it owns
  // (ReserveSeals refused): makes the new range, claimed from elsewhere, its
  // own, starting it afresh. If another process already did so (the store
  // has generations to seal under again), range is left unused: false.
  Result<bool> ExtendSeals(const std::string& gen_counter, const std::string& used_counter,
                           const std::string& given_counter, const SealRange& range, uint64_t limit,
                           uint32_t max_generation);
  // The generations the store still owns: from its current one to the end.
  Result<SealRange> OwnedSeals(const std::string& gen_counter, const std::string& given_counter);

 private:
  // Conflict ("head moved") unless ref name points at expected (nullopt: absent).
  // Inside a transaction.
  Status CheckRef(const std::string& name, const std::optional<Hash>& expected) REQUIRES(mu_);
  // The bodies of AddPack, AddCounter and a ref's move, inside a transaction.
  Status InsertPack(const std::string& name, uint64_t size, const std::vector<PackEntry>& entries) REQUIRES(mu_);
  Status BumpCounter(const std::string& name, uint64_t delta) REQUIRES(mu_);
  Status WriteRef(const std::string& name, const Hash& target) REQUIRES(mu_);
  // Whether the forgotten table exists (stores made before it have none
  // until their first forget).
  Result<bool> HasForgottenTable() REQUIRES(mu_);
  explicit Index(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql) REQUIRES(mu_);

  // A leaf lock (see the lock order in store.h): held for one statement or
  // transaction, with no other lock taken under it.
  Mutex mu_;
  sqlite3* db_ GUARDED_BY(mu_);
  // Lookup runs once per chunk of an import: its statement is prepared once.
  sqlite3_stmt* lookup_ GUARDED_BY(mu_) = nullptr;
};

}  // namespace strata
