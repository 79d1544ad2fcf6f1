// Shared pieces of the strata command: how the store is chosen, how results
// are printed (human or --json), how errors become exit codes.
#pragma once

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/passphrase.h"
#include "control/protocol.h"
#include "daemon/mount_source.h"
#include "store/store.h"

namespace strata::cli {

// The mount source and what /proc/mounts says live with the daemon; the
// commands name them as their own.
using daemon::FormatMountSource;
using daemon::MountSource;
using daemon::MountSourceOf;
using daemon::ParseMountSource;
using daemon::EnclosingStrataMount;
using daemon::StrataMountSource;

// Exit codes, documented in the README.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;     // not found, invalid input, I/O
constexpr int kExitUsage = 2;     // bad options
constexpr int kExitDamaged = 3;   // corrupted store data
constexpr int kExitConflict = 4;  // a branch moved under us
// strata exec passes its program's status through, so its own failures,
// command-line errors included, are 125, as env(1) and docker run report
// theirs: 1 or 2 could be the program's.
constexpr int kExecFailed = 125;

// Options every command shares.
struct Globals {
  std::string store;  // --store; empty: STRATA_STORE, then the default location
  bool json = false;  // --json on read-only commands
  std::string remote;  // --remote NAME: work on that remote's store instead
  mode_t caller_umask = 022;  // the umask strata was started with (it runs with 077)
  std::string password_file;  // --password-file: the passphrase of an encrypted store
  std::string key_file;       // --key-file: the master key of an encrypted store, from a file
};

// --store, else $STRATA_STORE, else the store of the strata mount the current
// directory lies in, else $XDG_DATA_HOME/strata, else ~/.local/share/strata.
std::string StorePath(const Globals& g);
// The local store, or with --remote the store at that remote. An encrypted
// store is unlocked first (passphrase.h), its passphrase asked once per process.
Result<std::unique_ptr<Store>> OpenStore(const Globals& g);
// The local store, whatever --remote says.
Result<std::unique_ptr<Store>> OpenLocalStore(const Globals& g);
// The master key of the local store when it is encrypted (unlocked once per
// process), else nullopt: its remotes open with it too.
Result<std::optional<crypto::Key256>> LocalStoreKey(const Globals& g);
// Where the passphrase of the selected store comes from: --password-file,
// STRATA_PASSWORD, the terminal.
PassphraseSource StorePassphrase(const Globals& g, const std::string& path);
// The master key file that opens the selected store instead of a passphrase:
// --key-file, else $STRATA_KEY_FILE unless --password-file was given; empty:
// none (a passphrase is used).
std::string StoreKeyFile(const Globals& g);
// For commands on a workspace: when mountpoint_or_name is a strata mountpoint,
// the store (and remote) its mount's source names, whatever --store,
// STRATA_STORE or --remote say; otherwise OpenStore.
Result<std::unique_ptr<Store>> OpenStoreFor(const Globals& g, const std::string& mountpoint_or_name);

// A validator of a real number in [lo, hi]. CLI::Range lets "nan" through (no
// comparison with NaN is true), which then reached the code as a timeout or a
// threshold; this one refuses it.
CLI::Validator FiniteRange(double lo, double hi);

// Prints "strata: <message>" to stderr and returns the exit code for the status.
int Fail(const Status& s);
// For options that parse but do not go together (CLI11 cannot say so):
// prints "strata: <message>" to stderr and returns kExitUsage.
int UsageError(const std::string& message);
void PrintJson(const nlohmann::ordered_json& j);
std::string ShortId(const Hash& h);
std::string FormatTime(int64_t sec, uint32_t nsec);
// A commit's time as git prints it: "Wed Dec 2 12:00:00 2026 +0000", local time.
std::string FormatCommitTime(int64_t time_ns);
// Waits up to timeout_ms for process pid to exit (a zombie has exited); true
// when it has, or when there is no such process.
bool WaitForProcessExit(int pid, int timeout_ms);

// The workspace a daemon serves, found by its mountpoint or its name.
struct MountedWorkspace {
  std::string name;
  int pid = 0;
  std::string mountpoint;
};
std::optional<MountedWorkspace> FindMountedWorkspace(Store& store, const std::string& mountpoint_or_name);
// Mounts the existing workspace `name` at mountpoint as `strata mount
// --workspace` would, printing nothing but errors; owner_pid > 0: the mount
// ends when that process does. An exit code (errors already printed); on
// success *daemon_pid is the pid of the daemon that serves the mount.
int MountWorkspaceQuietly(Globals& g, const std::string& name, const std::string& mountpoint, int owner_pid,
                          int* daemon_pid);
// Unmounts a workspace's mount and waits (a bounded time) for its daemon.
Status Unmount(const std::string& mountpoint, int daemon_pid);

// Each family of commands registers its subcommands on the app. The callback
// of a subcommand stores its exit code in *exit_code.
void RegisterStoreCommands(CLI::App& app, Globals& g, int* exit_code);     // init, verify, stats
void RegisterSnapshotCommands(CLI::App& app, Globals& g, int* exit_code);  // import, export
void RegisterHistoryCommands(CLI::App& app, Globals& g, int* exit_code);   // log, ls, cat, show, diff, branch, fork
void RegisterMountCommands(CLI::App& app, Globals& g, int* exit_code);     // mount, umount, workspace
void RegisterCommitCommands(CLI::App& app, Globals& g, int* exit_code);    // commit
void RegisterStatusCommands(CLI::App& app, Globals& g, int* exit_code);    // status
void RegisterGcCommands(CLI::App& app, Globals& g, int* exit_code);        // gc, fsck
void RegisterForgetCommands(CLI::App& app, Globals& g, int* exit_code);    // forget
void RegisterRemoteCommands(CLI::App& app, Globals& g, int* exit_code);    // remote, push, pull
void RegisterExecCommands(CLI::App& app, Globals& g, int* exit_code);      // exec
void RegisterKeyCommands(CLI::App& app, Globals& g, int* exit_code);       // key (add, list, passwd, unlock...)
// `strata stats MOUNTPOINT`: the counters of the daemon serving a mount.
int RunMountStats(Globals& g, const std::string& mountpoint);
// `strata stats MOUNTPOINT --watch`: those counters every interval_s seconds,
// with rates, until Ctrl-C or `count` looks (0: no limit) (stats_watch.cc).
int WatchMountStats(Globals& g, const std::string& mountpoint, double interval_s, uint64_t count);
// The counters of the daemon serving workspace `name`, from its control
// socket: {"operations", "workspace", "request_loop"} (control/protocol.h).
Result<control::StatsReply> DaemonCounters(const Store& store, const std::string& name);

}  // namespace strata::cli
