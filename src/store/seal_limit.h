// A store made with another store's master key (init --encrypt --key-file)
// seals nothing until its first remote's bucket gives it key generations;
// at that moment it also takes the seal limit of the bucket's first store,
// so that a limit chosen with `init --seal-limit` holds for every store
// sharing the key and the bucket (docs/format/encryption.md, "Nonces across
// stores"). The master key file carries no limit: the limit is a store's.
#pragma once

#include <cstdint>

#include "store/store.h"
#include "util/status.h"

namespace strata {

// Writes limit as the seal limit in the config.json of store, when it is
// lower than the store's own (a lower limit is never less safe) and the
// store owns no key generation yet (has sealed nothing). A store that owns
// generations keeps its limit; a plain or format 3 store is InvalidArgument.
// The Store object keeps the limit it was opened with: the caller seals
// nothing through it afterwards (remote add, which only claims generations),
// and every later open reads the new one.
Status TakeSealLimitBeforeFirstSeal(Store& store, uint64_t limit);

}  // namespace strata
