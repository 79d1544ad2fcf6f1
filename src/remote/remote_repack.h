// Repacking a remote store, as part of its gc (remote_gc.h): the live
// objects of packs that are mostly garbage, and of small packs (one per small
// push or commit), are copied into new, full packs; the old packs then go
// the way gc's garbage packs go, after the same wait.
//
// Why it is safe (docs/format/remote.md, "Repacking", has the argument): a
// new pack is uploaded and indexed before the gc's list is written, so every
// live object of an old pack is in the bucket twice from then until the old
// pack is deleted; a machine that finds the old pack gone looks the object up
// in the packs listed now and finds its new copy.
//
// Work is bounded: a run reads at most `max_bytes` of packs (and uploads at
// most their live share), choosing the most dead packs first and then the
// smallest, so a remote of many small pushes shrinks by a bounded step each
// run and the runs converge.
//
// Thread-safety: functions; the copy is for one thread.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "store/pack_format.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"

namespace strata {

class S3Backend;

// A pack of the remote as gc found it after marking.
struct RepackCandidate {
  std::string name;
  uint64_t size = 0;        // bytes of the pack
  uint64_t live_bytes = 0;  // stored bytes of its reachable objects
  uint64_t live_objects = 0;
};

// The packs worth rewriting, within max_bytes of packs read: those whose live
// share of bytes is below `threshold` (0: none), most dead first, then those
// smaller than a quarter of pack_size, smallest first. Packs with nothing live
// are not chosen (gc deletes them whole); small packs only when at least two
// are chosen (one small pack copied alone would stay as small).
std::vector<std::string> PickPacksToRewrite(const std::vector<RepackCandidate>& packs, uint64_t pack_size,
                                            double threshold, uint64_t max_bytes);

// The byte ranges of a pack that hold `entries`, one range GET each: the
// entries' spans sorted, and two joined when at most `max_gap` bytes lie
// between them (a GET more costs a round trip, a byte more costs little up
// to a point). Dead objects longer than that are not read.
struct ByteRange {
  uint64_t begin = 0, end = 0;
  bool operator==(const ByteRange&) const = default;
};
std::vector<ByteRange> CoalesceRanges(std::vector<PackEntry> entries, uint64_t max_gap);
// The gap joined in repacking: about what a round trip to the server costs.
constexpr uint64_t kRepackMaxGap = 64 << 10;

struct RewriteResult {
  std::unordered_set<Hash> copied;  // objects that are in a new pack now
  uint64_t packs_written = 0, bytes_written = 0;
  uint64_t bytes_read = 0;
};

// Copies `live` objects of each pack (its entries as its footer gives them)
// into new packs of at most the store's pack size, checking each against its
// id; uploads each new pack and indexes it (its objects are read from there
// on this machine) before returning. An object damaged in its old pack is
// Corruption, and nothing built so far is deleted.
Result<RewriteResult> RewriteLiveObjects(Store& store, S3Backend& backend,
                                         const std::vector<std::pair<std::string, std::vector<PackEntry>>>& live,
                                         Progress* progress);

}  // namespace strata
