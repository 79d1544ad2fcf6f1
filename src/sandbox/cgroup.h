// The control group of one sandbox: where its memory, CPU and process
// limits are enforced, how all its processes are found and killed, and
// whether the kernel killed one for memory.
//
// cgroup v2 (a unified hierarchy: /sys/fs/cgroup/cgroup.controllers exists)
// gets one directory, /sys/fs/cgroup/strata/ID, with the controllers it needs
// enabled on the way down. Otherwise each v1 controller asked for (memory,
// cpu, pids under /sys/fs/cgroup/CONTROLLER) gets a directory strata/ID of
// its own. ID is "exec-PID" of the strata process that owns it, so that
// RemoveStale can find the groups of a process that was killed.
// Thread-safety: one thread; AddSelf may be called in a forked child.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sandbox/limits.h"
#include "util/status.h"

namespace strata::sandbox {

class Cgroup {
 public:
  // The group(s) for limits (at least one of memory, cpus, pids set), named
  // after this process. Unsupported, naming the controller, when the host
  // has none writable for a limit asked for.
  static Result<std::unique_ptr<Cgroup>> Create(const Limits& limits);
  // The same under another cgroup file system root than /sys/fs/cgroup (a
  // test's directory laid out like one).
  static Result<std::unique_ptr<Cgroup>> CreateUnder(const std::string& root, const Limits& limits);
  // Kills what is still in the group and removes its directories.
  ~Cgroup();
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  // Moves the calling process into the group. Only open(2) and write(2):
  // safe between fork and exec. 0 or an errno.
  int AddSelf() const noexcept;
  // Whether the kernel's OOM killer ended a process of the group.
  bool MemoryLimitHit() const;
  // SIGKILL to every process in the group, until none is left (bounded).
  void KillAll() const;
  // "v1" or "v2".
  const char* version() const { return v2_ ? "v2" : "v1"; }

  // Removes the groups that strata processes which are gone left behind
  // (killed before they could), killing anything still in them.
  static void RemoveStale();
  static void RemoveStaleUnder(const std::string& root);

 private:
  Cgroup() = default;
  bool v2_ = false;
  std::vector<std::string> dirs_;         // created by this object, removed by its destructor
  std::vector<std::string> procs_files_;  // cgroup.procs of each
  std::string memory_dir_;                // where the OOM kill count is read; empty: no memory limit
};

}  // namespace strata::sandbox
