// Running a sandbox's bwrap to its end: in its cgroup (or under rlimits when
// there is none), with a wall-time limit, and with the signals that would end
// the strata command passed on to it, so that the command always lives to
// clean up after it.
// Thread-safety: one call at a time per process (it changes the signal mask
// of the calling thread while it runs).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "sandbox/cgroup.h"
#include "sandbox/limits.h"
#include "util/status.h"

namespace strata::sandbox {

struct RunOutcome {
  enum class End { kExited, kSignaled, kTimeout, kMemoryLimit };
  End end = End::kExited;
  // The status a shell would report: the exit code, or 128 + the signal; 124
  // after a timeout, as timeout(1) reports it.
  int exit_status = 0;
  int signal = 0;  // kSignaled: the signal
  double wall_ms = 0;
};

// Exit status after the wall-time limit ended the program.
inline constexpr int kTimeoutExitStatus = 124;

// Runs argv (argv[0] looked up in PATH) with stdin, stdout and stderr
// inherited. cgroup (may be null) receives the process before it execs;
// without one, limits.memory_bytes and limits.pids become RLIMIT_AS and
// RLIMIT_NPROC. on_start is called with the pid once it runs. IOError when
// the process cannot be started; every other end is an outcome.
Result<RunOutcome> RunToEnd(const std::vector<std::string>& argv, const Limits& limits, const Cgroup* cgroup,
                            const std::function<void(pid_t)>& on_start);

// "exited 3", "killed by signal 9 (Killed)", "killed: timeout 2s",
// "killed: memory limit 64M".
std::string DescribeOutcome(const RunOutcome& outcome, const Limits& limits);

}  // namespace strata::sandbox
