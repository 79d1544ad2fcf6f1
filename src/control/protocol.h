// The control protocol: what strata commands ask the daemon serving a mount,
// and what it answers, as typed requests and replies. Their encoding and
// decoding live in protocol.cc only; the socket that carries them is
// control/socket.h.
//
// A client connects to the daemon's Unix socket, sends one request as a JSON
// object on one line, and reads one JSON reply line until the daemon closes
// the connection:
//   {"op": "stats"}                              → StatsReply
//   {"op": "commit", "message", "author", "branch"} → CommitReply
//   {"op": "snapshot"}                           → SnapshotReply: the trees the next
//                                                  commit would hold (Workspace::Snapshot)
//   {"op": "reset", "commit": HEX, "hard": bool} → ResetReply; the kernel's stale
//                                                  caches are invalidated first
//   {"op": "rebase", "commit": HEX, "choose": {PATH: "ours" | "theirs" | "both"}}
//                                                → RebaseReply; after a rebase that
//                                                  replaced the content, the kernel's
//                                                  stale caches are invalidated first
//   {"op": "progress"}                           → ProgressReply: how far the commit
//                                                  running (or the last one) is
// Any failure is {"error": message, "code": "conflict" | "invalid" | "damaged" | "failed"}
// ("damaged": the store's data is, and the command exits as for damage).
// Requests that change the workspace or the kernel's caches (commit,
// snapshot, reset, rebase) are served one at a time, in the order they
// arrive. Read-only ones (stats, progress: IsReadOnly) are answered at once,
// also while one of those runs: that is how a command shows a commit's
// progress.
//
// Decoding is strict on both sides: every field must be there with its type
// and no other field may be, so a message of another strata version is a
// clear error naming the field, never a value read wrongly. A request that
// does not decode is answered "invalid"; a reply that does not decode is
// Corruption ("the daemon's reply is not what this strata reads").
// Thread-safety: pure functions of their arguments.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "util/status.h"
#include "workspace/workspace.h"

namespace strata::control {

// Requests. A commit and a reset are asked with the workspace's own
// CommitRequest and ResetRequest (workspace.h).
struct StatsRequest {};
struct SnapshotRequest {};
struct ProgressRequest {};
struct RebaseRequest {
  Hash onto;                // "commit" on the wire
  ConflictChoices choices;  // "choose" on the wire
};
using DaemonRequest =
    std::variant<StatsRequest, CommitRequest, SnapshotRequest, ResetRequest, RebaseRequest, ProgressRequest>;
// Stats and progress: answered beside a running commit (see above).
bool IsReadOnly(const DaemonRequest& request);

// Replies.
// One FUSE operation's counters (`strata stats`): how many, how many failed,
// and a latency histogram of (upper bound in µs, count) with the bounds
// increasing powers of two ("<N" on the wire).
struct OperationCounters {
  std::string name;
  uint64_t count = 0, errors = 0;
  std::vector<std::pair<uint64_t, uint64_t>> latency_us;
};
// How the mount's request loop ran.
struct RequestLoopCounters {
  uint64_t inline_requests = 0, worker_requests = 0, caught_polling = 0, sleeps = 0;
};
// FUSE passthrough on the mount (fs/passthrough.h).
struct PassthroughCounters {
  bool on = false;
  uint64_t opens = 0, write_opens = 0, declined = 0, held = 0;
};
// How the kernel's requests reached a strata transport: over FUSE over
// io_uring, or read from /dev/fuse (all zero on the libfuse transport).
struct FuseRequestCounters {
  uint64_t over_io_uring = 0, read_from_dev_fuse = 0;
};
struct StatsReply {
  std::vector<OperationCounters> operations;  // the operations served at least once
  WorkspaceCounters workspace;
  RequestLoopCounters request_loop;
  std::string transport;  // how the kernel's requests reach the daemon: "libfuse", "strata", "strata (io_uring)", ... (fs/transport.h)
  PassthroughCounters passthrough;
  FuseRequestCounters fuse_requests;
};
using CommitReply = CommitOutcome;
using SnapshotReply = WorkspaceSnapshot;
struct ResetReply {
  Hash base;
  bool content_replaced = false;
  bool differs = false;
};
struct RebaseReply {
  Hash onto;
  bool up_to_date = false;
  std::vector<MergeConflict> conflicts;  // a result, not an error: the workspace is unchanged
  std::optional<Hash> root;              // the merged tree, when the rebase happened
  bool differs = false;
};
// The daemon's commit, running or last run: phase "idle" (none since the
// mount), "cut", "capture", "trees", "publish", "rebase" or "done".
using ProgressReply = CommitProgressView;
// The reply to each request, in the order of DaemonRequest's alternatives.
using DaemonReply = std::variant<StatsReply, CommitReply, SnapshotReply, ResetReply, RebaseReply, ProgressReply>;

// The reply type of a request type, and the replies the workspace's outcomes make.
template <typename T, typename... Ts>
constexpr size_t AlternativeIndex(const std::variant<Ts...>*) {
  size_t i = 0;
  const bool found = ((std::is_same_v<T, Ts> || (++i, false)) || ...);
  return found ? i : sizeof...(Ts);
}
template <typename Request>
using ReplyTo =
    std::variant_alternative_t<AlternativeIndex<Request>(static_cast<const DaemonRequest*>(nullptr)), DaemonReply>;
ResetReply ResetReplyOf(const Hash& commit, const ResetOutcome& outcome);
RebaseReply RebaseReplyOf(const Hash& onto, const RebaseOutcome& outcome);

// One line, without its newline.
std::string EncodeRequest(const DaemonRequest& request);
// InvalidArgument naming what is wrong, for anything but a request EncodeRequest could write.
Result<DaemonRequest> DecodeRequest(std::string_view line);

// The daemon's reply line (without its newline): the reply, or the error.
std::string EncodeReply(const Result<DaemonReply>& reply);
// Client side: the reply line to `request`, holding the alternative of
// ReplyTo that request. An error reply comes back as its Status (Conflict
// for "conflict", InvalidArgument for "invalid", Corruption for "damaged").
Result<DaemonReply> DecodeReply(const DaemonRequest& request, std::string_view line);
// What ControlRequest (socket.h) does with the bytes it read until the daemon
// closed the connection: a reply is complete only with its final newline.
// Without it (nothing at all, or a part) the daemon stopped while serving the
// request: Unavailable with kDaemonStoppedMessage, whatever the request may
// have done before. Otherwise DecodeReply of the line.
Result<DaemonReply> DecodeReplyOrStop(const DaemonRequest& request, std::string_view bytes);
inline constexpr const char* kDaemonStoppedMessage = "the daemon stopped before it answered";

// The replies as JSON, as the wire carries them and `strata ... --json` prints them.
nlohmann::ordered_json ToJson(const CommitReply& reply);
nlohmann::ordered_json ToJson(const SnapshotReply& reply);
nlohmann::ordered_json ToJson(const ResetReply& reply);
nlohmann::ordered_json ToJson(const RebaseReply& reply);
nlohmann::ordered_json ToJson(const ProgressReply& reply);
// The parts of a StatsReply, as `strata stats --json` prints them.
nlohmann::ordered_json ToJson(const std::vector<OperationCounters>& operations);
nlohmann::ordered_json ToJson(const WorkspaceCounters& workspace);
nlohmann::ordered_json ToJson(const RequestLoopCounters& loop);
nlohmann::ordered_json ToJson(const PassthroughCounters& passthrough);
nlohmann::ordered_json ToJson(const FuseRequestCounters& requests);

}  // namespace strata::control
