// The control protocol: what strata commands ask the daemon serving a mount,
// and what it answers, encoded and decoded here only (the socket that carries
// it is control/socket.h).
//
// A client connects to the daemon's Unix socket, sends one request as a JSON
// object on one line, and reads one JSON reply until the daemon closes the
// connection:
//   {"op": "stats"}                         → {"operations": ..., "workspace": ...}
//   {"op": "commit", "message": M, "author": A, "branch": B}
//                                           → CommitReplyJson(...)
//   {"op": "snapshot"}                      → SnapshotReplyJson(...): the trees the next
//                                             commit would hold (Workspace::Snapshot)
//   {"op": "reset", "commit": HEX, "hard": bool}
//                                           → {"base", "content_replaced", "differs"}; the
//                                             kernel's stale caches are invalidated first
//   {"op": "rebase", "commit": HEX}       → RebaseReplyJson(...); after a rebase that
//                                             replaced the content, the kernel's stale
//                                             caches are invalidated first
// Any failure is {"error": message, "code": "conflict" | "invalid" | "damaged" | "failed"}
// ("damaged": the store's data is, and the command exits as for damage).
// Requests are served one at a time, in the order they arrive.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"
#include "workspace/workspace.h"

namespace strata::control {

// A request, decoded. Bytes from the socket reach the daemon only through
// DecodeDaemonRequest: anything else is an "invalid" error reply, never an
// exception in the serving thread.
struct DaemonRequest {
  enum class Op { kStats, kCommit, kSnapshot, kReset, kRebase };
  Op op = Op::kStats;
  CommitRequest commit;  // kCommit: message, author, branch (strings; absent: "")
  Hash target;           // kReset, kRebase: "commit" (64 hex digits)
  bool hard = false;     // kReset: "hard" (a bool; absent: false)
  bool operator==(const DaemonRequest& o) const {
    return op == o.op && commit.message == o.commit.message && commit.author == o.commit.author &&
           commit.branch == o.commit.branch && target == o.target && hard == o.hard;
  }
};
// One line, without its newline.
std::string EncodeDaemonRequest(const DaemonRequest& request);
Result<DaemonRequest> DecodeDaemonRequest(std::string_view line);

// Client side: the daemon's reply to a request of `op`, as the CLI reads it.
// Corruption unless it is a JSON object holding every field the CLI reads for
// that op with the type it reads it as (so reading it cannot throw); an error
// reply comes back as a Status (Conflict for "conflict", InvalidArgument for
// "invalid").
Result<nlohmann::ordered_json> DecodeControlReply(DaemonRequest::Op op, std::string_view reply);
// What ControlRequest (socket.h) does with the bytes it read until the daemon closed the
// connection: a reply is complete only with its final newline. Without it
// (nothing at all, or a part) the daemon stopped while serving the request:
// Unavailable with kDaemonStoppedMessage, whatever the request may have done
// before. Otherwise DecodeControlReply of the line.
Result<nlohmann::ordered_json> DecodeControlReplyOrStop(DaemonRequest::Op op, std::string_view reply);
inline constexpr const char* kDaemonStoppedMessage = "the daemon stopped before it answered";

// The reply to a commit, also printed by `strata commit --json`.
nlohmann::ordered_json CommitReplyJson(const CommitOutcome& outcome);
// The reply to a snapshot: {"base": hex | null, "root": hex, "root_meta":
// {"mode", "uid", "gid", "mtime_sec", "mtime_nsec", "xattrs": [[name, value]]
// with names and values in hex (they are bytes)}, "differs": bool}, and
// what the client reads back from it.
nlohmann::ordered_json SnapshotReplyJson(const WorkspaceSnapshot& snap);
Result<WorkspaceSnapshot> SnapshotFromJson(const nlohmann::ordered_json& j);
// The reply to a rebase onto `onto`, also printed by `strata rebase --json`:
// {"onto": hex, "up_to_date": bool, "conflicts": [{"path", "reason"}],
// "root": hex | null (the merged tree, when the rebase happened), "differs": bool}.
// Conflicts are a result, not an error: the workspace is unchanged.
nlohmann::ordered_json RebaseReplyJson(const Hash& onto, const RebaseOutcome& outcome);
// The reply to a reset to `commit`: {"base": hex, "content_replaced": bool, "differs": bool}.
nlohmann::ordered_json ResetReplyJson(const Hash& commit, const ResetOutcome& outcome);
// The error reply for a failed request.
nlohmann::ordered_json ErrorReplyJson(const Status& s);

}  // namespace strata::control
