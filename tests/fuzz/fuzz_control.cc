// The control socket: a request line as the daemon receives it, and a reply
// as the CLI reads it back. The first byte picks which: 0 a request, 1-5 the
// reply to stats, commit, snapshot, reset or rebase. A request the daemon
// accepts encodes to a line that decodes to the same request; a reply the CLI
// accepts is one it can read without an exception (a snapshot's fields read
// back the same after encoding), and accepting it again from its own dump.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "control/protocol.h"

namespace {

namespace control = strata::control;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

bool Same(const strata::WorkspaceSnapshot& a, const strata::WorkspaceSnapshot& b) {
  return a.base == b.base && a.root == b.root && a.root_meta == b.root_meta && a.differs == b.differs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0] % 6;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (selector == 0) {
    auto request = control::DecodeDaemonRequest(in);
    if (!request.ok()) return 0;
    const std::string line = control::EncodeDaemonRequest(*request);
    if (line.find('\n') != std::string::npos) Fail("an encoded request spans lines");
    auto again = control::DecodeDaemonRequest(line);
    if (!again.ok()) Fail("an encoded request is refused");
    // JSON text is UTF-8, so nothing was replaced on the way out.
    if (!(*again == *request)) Fail("a request does not survive encoding");
    return 0;
  }
  using Op = control::DaemonRequest::Op;
  static constexpr Op kOps[] = {Op::kStats, Op::kCommit, Op::kSnapshot, Op::kReset, Op::kRebase};
  const Op op = kOps[selector - 1];
  auto reply = control::DecodeControlReply(op, in);
  if (!reply.ok()) return 0;
  auto again = control::DecodeControlReply(op, reply->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!again.ok()) Fail("an accepted reply is refused once dumped again");
  if (op == Op::kSnapshot) {
    auto snap = control::SnapshotFromJson(*reply);
    if (!snap.ok()) Fail("an accepted snapshot reply does not read as a snapshot");
    auto back = control::SnapshotFromJson(control::SnapshotReplyJson(*snap));
    if (!back.ok() || !Same(*back, *snap)) Fail("a snapshot does not survive encoding");
  }
  return 0;
}
