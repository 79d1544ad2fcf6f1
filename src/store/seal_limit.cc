#include "store/seal_limit.h"

namespace strata {

Status TakeSealLimitBeforeFirstSeal(Store& store, uint64_t limit) {
  const StoreConfig& config = store.config();
  if (!config.encrypted() || !config.seal_generations())
    return Status::InvalidArgument("the store at " + store.path() + " has no key generations, so no seal limit");
  if (limit < StoreConfig::kMinSealLimit || limit > StoreConfig::kMaxSealLimit)
    return Status::InvalidArgument("a seal limit is from " + std::to_string(StoreConfig::kMinSealLimit) +
                                   " to 2^31, not " + std::to_string(limit));
  STRATA_ASSIGN_OR_RETURN(SealRange owned, store.OwnedSealGenerations());
  if (owned.first < owned.end || limit >= config.seal_limit) return Status::Ok();
  StoreConfig lowered = config;
  lowered.seal_limit = limit;
  // Atomically (written aside, synced, renamed): a crash leaves the old
  // limit or the new one, and the claim that follows comes after either.
  return store.env()->WriteFileAtomically(store.path() + "/config.json", lowered.ToJson());
}

}  // namespace strata
