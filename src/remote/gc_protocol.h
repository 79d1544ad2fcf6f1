// The objects through which a remote's writers and its gc coordinate, with
// nothing but the bucket and its conditional writes (docs/format/remote.md,
// "gc while others push", has the protocol and the argument for its safety):
//
//   leases/<id>          a writer's announcement, written (If-None-Match: *)
//                        before it counts on any object being in the bucket,
//                        deleted when what it wrote is reachable or given up.
//                        Body: "strata-lease 1 SECONDS\n", the longest the
//                        writer may go on relying on what it saw.
//   forgotten/<commit>   an empty object: `strata forget` let go of the
//                        commit (forget.h); gc walks its parents, not its tree.
//   gc/condemned/<id>    one gc's list of the objects unreachable when it
//                        marked: "strata-condemned 1 SECONDS\n" (how long that
//                        gc may delete for) then one object id in hex a line.
//                        Writers that announce themselves after it was written
//                        store these objects again instead of relying on them.
//
// The server's clock (the Last-Modified of listed keys) orders leases and
// lists; each machine measures durations with its own monotonic clock.
//
// Thread-safety: functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "remote/s3_client.h"
#include "util/hash.h"
#include "util/status.h"

namespace strata {

constexpr const char* kLeasesFolder = "leases/";
constexpr const char* kCondemnedFolder = "gc/condemned/";
constexpr const char* kForgottenFolder = "forgotten/";
// How long a writer may rely on what it saw when it announced itself: a push
// or commit that takes longer fails before moving its ref (and is run again).
constexpr uint32_t kWriterLeaseSeconds = 3600;

// 32 random hex digits: the name of a lease or of a gc's list.
std::string RandomKeyId();

std::string EncodeLease(uint32_t seconds);
// Corruption unless body is what EncodeLease writes.
Result<uint32_t> DecodeLease(std::string_view body);

struct CondemnedList {
  uint32_t seconds = 0;  // how long after writing it its gc may delete
  std::vector<Hash> ids;
};
std::string EncodeCondemned(const CondemnedList& list);
Result<CondemnedList> DecodeCondemned(std::string_view body);

// The union of every gc/condemned/ list in the bucket. A list that cannot be
// decoded is an error: ignoring it could let a writer rely on what a gc is
// about to delete.
Result<std::unordered_set<Hash>> ReadCondemned(S3Client& client);

// The remote's forgotten commits (keys that are not a commit id are ignored),
// and recording more.
Result<std::unordered_set<Hash>> ReadForgotten(S3Client& client);
Status WriteForgotten(S3Client& client, const std::vector<Hash>& commits);

}  // namespace strata
