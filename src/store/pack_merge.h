// Merging small packs, so that the number of packs stays bounded.
//
// Every commit seals at least one pack, and a commit of a small change makes a
// small one. Left alone, a store that takes many small commits gains a pack
// per commit for good: every Store::Open lists them all, and a reader keeps a
// descriptor per pack it touches. So small packs are merged by size tier, as
// a log-structured store compacts its runs: packs below kSmallPackShare of
// the configured pack size fall into tiers that each span a factor of
// kMergeFanIn in size (everything below kSmallestTier in the first); when a
// tier holds kMergeFanIn packs, they are copied into one pack of the next
// tier. Each tier then holds fewer than kMergeFanIn packs, so a store has at
// most (tiers x (kMergeFanIn - 1)) small packs whatever its history, and each
// object is copied once per tier it climbs (a handful of times). The numbers
// behind these constants are in docs/format/pack.md.
//
// A merge is the same swap as gc's repack (gc.h, phase 3) and keeps its
// guarantees: the objects are copied as stored, each checked against its id;
// the new pack is published, the index rows moved and the old packs removed
// while the gc lock is held exclusively. It never waits: it gives up (and
// tries again after a later write) when gc runs or any write session is open.
//
// Thread-safety: as Store.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace strata {

class Store;

constexpr uint64_t kSmallPackShare = 4;      // small: below pack_size / 4
constexpr uint64_t kMergeFanIn = 8;          // packs per tier that trigger a merge
constexpr uint64_t kSmallestTier = 64 << 10;  // packs below this share the first tier

// The packs to merge now (one full tier), or none. `packs`: name -> size.
std::vector<std::string> PickPacksToMerge(const std::map<std::string, uint64_t>& packs, uint64_t pack_size);

// Merges one full tier of small packs if there is one and nothing else holds
// the store's gc locks; returns how many packs it merged (0: none).
Result<uint64_t> MergeSmallPacks(Store& store);

}  // namespace strata
