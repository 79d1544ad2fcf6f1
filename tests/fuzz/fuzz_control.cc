// The control socket: a request line as the daemon receives it, and a reply
// as the CLI reads it back. The first byte picks which: 0 a request, 1-5 the
// reply to stats, commit, snapshot, reset or rebase. A request the daemon
// accepts encodes to a line that decodes to the same request; a reply the CLI
// accepts decodes to a typed reply whose encoding decodes again to one that
// encodes the same (so no field is read as something else).
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0] % 6;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (selector == 0) {
    auto request = control::DecodeRequest(in);
    if (!request.ok()) return 0;
    const std::string line = control::EncodeRequest(*request);
    if (line.find('\n') != std::string::npos) Fail("an encoded request spans lines");
    auto again = control::DecodeRequest(line);
    if (!again.ok()) Fail("an encoded request is refused");
    // JSON text is UTF-8, so nothing was replaced on the way out.
    if (again->index() != request->index() || control::EncodeRequest(*again) != line)
      Fail("a request does not survive encoding");
    return 0;
  }
  static const control::DaemonRequest kRequests[] = {control::StatsRequest{}, strata::CommitRequest{},
                                                     control::SnapshotRequest{}, strata::ResetRequest{},
                                                     control::RebaseRequest{}};
  const control::DaemonRequest& request = kRequests[selector - 1];
  auto reply = control::DecodeReply(request, in);
  if (!reply.ok()) return 0;
  if (reply->index() != request.index()) Fail("a reply decodes as the reply to another request");
  const std::string line = control::EncodeReply(*reply);
  auto again = control::DecodeReply(request, line);
  if (!again.ok()) Fail("an accepted reply is refused once encoded again");
  // Numbers may change their spelling once (1e0 is written 1.0), then no more.
  if (control::EncodeReply(*again) != line) Fail("a reply does not survive encoding");
  return 0;
}
