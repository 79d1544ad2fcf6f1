// libfuse's operation table over strata's handlers (ops_table.cc).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

namespace strata::fs {

// The table, with its init callback; the session's userdata is the mount's Context.
const fuse_lowlevel_ops& Operations();

}  // namespace strata::fs
