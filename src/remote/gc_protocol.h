// The objects through which a remote's writers and its gc coordinate, with
// nothing but the bucket and its conditional writes (docs/format/remote.md,
// "gc while others push", has the protocol and the argument for its safety):
//
//   leases/<id>          a writer's announcement, written (If-None-Match: *)
//                        before it counts on any object being in the bucket,
//                        deleted when what it wrote is reachable or given up.
//                        Body: "strata-lease 1 SECONDS\n", the longest the
//                        writer may go on relying on what it saw.
//   forgotten/<commits>  an empty object: `strata forget` let go of the
//                        commits its name lists, one to fifteen ids in hex
//                        one after another (forget.h); gc walks their parents,
//                        not their trees.
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

// The commits a forgotten marker's name (the key after its folder) lists:
// one or more ids of 64 hex digits, nothing between them. nullopt for any
// other name. A name of one id is the form strata wrote before markers
// named several.
std::optional<std::vector<Hash>> DecodeForgottenName(std::string_view name);
// The names of markers for `commits`, at most `per_key` ids each (at least 1).
std::vector<std::string> EncodeForgottenNames(const std::vector<Hash>& commits, size_t per_key);
// How many ids one marker's name holds under a location's prefix: as many as
// keep the whole key within S3's 1024 bytes, at most 15.
size_t ForgottenIdsPerKey(const S3Location& location);

// The remote's forgotten commits (keys that name no commit are ignored), and
// recording more: one marker per ForgottenIdsPerKey commits.
Result<std::unordered_set<Hash>> ReadForgotten(S3Client& client);
Status WriteForgotten(S3Client& client, const std::vector<Hash>& commits);

}  // namespace strata
