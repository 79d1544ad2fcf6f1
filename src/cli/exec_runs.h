// Detached runs of `strata exec` (--detach) and the commands that follow
// them: exec-status, output [--follow], stop.
//
// A detached run is a process of its own (a new session, stdin from
// /dev/null) that carries out the exec exactly as in the foreground, with
// its stdout and stderr (the program's, and strata's messages and --json
// events) in a file. Its record is the directory STORE/exec-runs/ID:
//   pid      the run's process, written before it starts anything
//   output   everything the run wrote
//   result   {"exit_status": N}, written when it has finished
// A record with a pid that is gone and no result is a run that was killed.
// Thread-safety: one thread.
#pragma once

#include <functional>

#include "cli/cli.h"

namespace strata::cli {

// Starts run() in a detached process, prints the run's id and returns 0 at
// once; run()'s return value is the run's exit status.
int StartDetachedRun(Globals& g, const std::function<int()>& run);

// exec-status, output, stop.
void RegisterExecRunCommands(CLI::App& app, Globals& g, int* exit_code);

}  // namespace strata::cli
