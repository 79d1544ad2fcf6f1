// What `strata fsck` checks of a workspace's own files (beside the store's
// objects that fsck checks anyway).
#pragma once

#include <string>
#include <vector>

#include "store/store.h"
#include "util/status.h"

namespace strata {

// Every data file the workspace's extents name is there, a regular file of
// its own, and at least as long as they need (file_data.h): one message per
// damaged file, naming it. Reads the workspace's database as last committed;
// the workspace may be open meanwhile. Right after the machine restarted,
// shortness is a power cut's and the next open fills it in: not reported.
Result<std::vector<std::string>> CheckWorkspaceDataFiles(Store& store, const std::string& name);

}  // namespace strata
