// A mount's daemon: its start, its readiness, what it serves and its end.
//
// `strata mount` returns only when the mount is ready: StartDaemon forks a
// daemon that opens the workspace and mounts it (ServeMount), and waits on a
// pipe for "ready" or for the daemon's error message. The daemon then serves
// the mount and its control socket (control/socket.h) until it is unmounted
// or signalled, and keeps its mount record (mount_record.h) meanwhile.
// Thread-safety: StartDaemon and ServeMount are called once per process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "control/protocol.h"
#include "fs/fuse_server.h"
#include "metrics/listen_address.h"
#include "store/store.h"
#include "util/status.h"

namespace strata::daemon {

// The daemon's side of the ready pipe; fd -1 (a daemon in the foreground)
// reports to nobody. Best effort: if the command is gone, nobody waits.
class ReadyPipe {
 public:
  explicit ReadyPipe(int fd) : fd_(fd) {}
  ~ReadyPipe() { Close(); }
  ReadyPipe(const ReadyPipe&) = delete;
  ReadyPipe& operator=(const ReadyPipe&) = delete;

  void Ready();                    // the mount is up; closes the pipe
  void Failed(const Status& why);  // nothing was mounted
  bool ready() const { return ready_; }

 private:
  void Send(const std::string& message);
  void Close();
  int fd_;
  bool ready_ = false;
};

// What a daemon serves: workspace `name` of the store at `mountpoint`.
struct ServeSpec {
  std::string name;
  std::string mountpoint;        // absolute and canonical
  MountOptions options;          // state_dir is filled in by ServeMount
  uint64_t chunk_cache_mib = 0;  // 0: the default size
  // > 0: the mount belongs to that process (a `strata exec`) and is
  // unmounted, lazily, as soon as it is gone, however it ended.
  int owner_pid = 0;
  // Where to serve the mount's counters to Prometheus (metrics/), if anywhere.
  // The mount fails when that address cannot be listened on.
  std::optional<metrics::ListenAddress> metrics;
  // Show the read-only .strata/ directory of past versions (past/past_versions.h).
  bool past_versions = true;
  // Non-empty: a read-only mount that moves to each new head of this branch
  // (branch_follower.h), polled every follow_interval.
  std::string follow_branch;
  std::chrono::milliseconds follow_interval{5000};
};

// Allocator settings for a daemon's read path (see daemon.cc): call before
// anything large is allocated.
void TuneAllocatorForDaemon();

// Runs in the daemon: opens the workspace, refuses one whose top directory
// cannot be read, mounts it, reports readiness, serves until the mount ends,
// and removes the workspace of a read-only mount afterwards. An error before
// the mount came up changed nothing (ready.ready() is false then). With an
// owner, refuses to mount when the owner is already gone.
Status ServeMount(Store& store, const ServeSpec& spec, ReadyPipe& ready);

// Forks a daemon. The child leaves the command's session, reads nothing,
// writes its output to the path log_path() returns in the child (/dev/null
// when empty), and exits with what serve returns. The parent returns when the
// child reported ready, with the child's pid (the daemon's: a caller that
// waits for its end needs no mount record to find it), or its error once the
// child has exited (and with it released the workspace).
// REQUIRES: no Store (nor anything else holding a SQLite connection) open in
// this process: SQLite connections must not cross a fork, and a daemon
// forked beside one was seen to lose its commit's branch move without an
// error (`strata mount` closes its stores before this call). Checked: with a
// connection open (util/sqlite_connection.h) it returns an internal error
// and forks nothing.
Result<pid_t> StartDaemon(const std::function<std::string()>& log_path, const std::function<int(ReadyPipe&)>& serve);

}  // namespace strata::daemon
