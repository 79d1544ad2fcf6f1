// The part of `strata gc` that `strata forget --prune` runs too: gc's roots
// beyond the branches, a collection with its progress bar, and its report.
// Thread-safety: for the command's one thread.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "store/gc.h"
#include "store/reachability.h"

namespace strata::cli {

// What every workspace still reads or will reuse: its base commit, the trees
// and base chunks its rows name.
Result<std::vector<RootSet>> WorkspaceRoots(Store& store);
// gc with every workspace as a root, a progress bar and notes on a terminal;
// also_forgotten: see GcOptions.
Result<GcReport> CollectGarbageWithProgress(Store& store, bool dry_run, double repack_threshold,
                                            const std::vector<Hash>& also_forgotten = {});
nlohmann::ordered_json GcReportJson(const GcReport& report, bool dry_run);
void PrintGcReport(const GcReport& report, bool dry_run);

// gc of the remote store g.remote names while others may push to it
// (remote/remote_gc.h), repacking within max_repack_mib of packs read (0:
// none); grace in seconds. Prints the summary or its JSON; returns the exit
// code.
struct Globals;
constexpr double kDefaultRemoteGcGraceSeconds = 900;
constexpr uint64_t kDefaultMaxRepackMib = 512;
struct RemoteGcArgs {
  bool dry_run = false;
  double grace_seconds = kDefaultRemoteGcGraceSeconds;
  double repack_threshold = 0.5;
  uint64_t max_repack_mib = kDefaultMaxRepackMib;
};
int RunRemoteGc(const Globals& g, const RemoteGcArgs& args);
// The requests a remote store's client has sent since it was opened, by
// kind, for --json; null for a local store.
nlohmann::ordered_json RemoteRequestsJson(Store& store);

}  // namespace strata::cli
