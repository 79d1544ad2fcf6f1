// Reading the few XML answers S3 gives strata: a ListObjectsV2 page, the
// answer to a multi-object delete and an error document; and writing the one
// XML request strata sends, a multi-object delete. Not a general XML parser: S3 answers are flat, machine-made
// and have no attributes strata needs, so elements are found by name.
// Also turning the keys a listing names back into pack and branch names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::s3 {

struct ListedObject {
  std::string key;   // full key, as stored (location prefix included)
  uint64_t size = 0;
  std::string etag;  // quotes stripped
  int64_t last_modified = 0;  // seconds since 1970 UTC; 0 when absent or not a time
};

// "2026-12-02T01:02:03.000Z" (ISO 8601 in UTC, as S3 lists it) in seconds
// since 1970; nullopt for anything else.
std::optional<int64_t> ParseIsoTime(std::string_view text);

struct ListPage {
  std::vector<ListedObject> objects;
  bool truncated = false;
  std::string next_token;  // NextContinuationToken when truncated
};

// nullopt when `xml` is not a ListBucketResult (or a number in it is not one).
std::optional<ListPage> ParseListPage(std::string_view xml);

// The body of a multi-object delete (POST /BUCKET?delete) of `keys` (full
// keys, location prefix included), not in quiet mode: the answer names every
// key, deleted or not. Keys are escaped as XML text. nullopt when a key holds
// a byte XML 1.0 cannot carry (a control character other than tab, newline
// and carriage return; S3 keys never need them) or there are no keys.
std::optional<std::string> EncodeDeleteRequest(const std::vector<std::string>& keys);

struct DeleteFailure {
  std::string key;  // full key, as sent
  std::string code;  // "AccessDenied", "InternalError", ...
  std::string message;
};

struct DeleteResult {
  std::vector<std::string> deleted;  // full keys the server says are gone
  std::vector<DeleteFailure> failed;
};

// nullopt when `xml` is not a DeleteResult, or an entry in it names no key.
std::optional<DeleteResult> ParseDeleteResult(std::string_view xml);

struct ErrorDocument {
  std::string code;     // "NoSuchKey", "AccessDenied", ...
  std::string message;  // often empty on RGW
};

// Empty fields when `xml` is not an S3 error document.
ErrorDocument ParseError(std::string_view xml);

// The text of the first <name>...</name> in `xml`, entities decoded; nullopt
// when there is none.
std::optional<std::string> ElementText(std::string_view xml, std::string_view name);

// The folders of a store's objects under the location's prefix
// (docs/format/remote.md); a key is folder + name.
constexpr const char* kPacksFolder = "packs/";
constexpr const char* kRefsFolder = "refs/";

// A listed key (relative to the location's prefix) back to the name strata
// stored it under: "packs/<hex>.pack" -> "<hex>.pack", "refs/<branch>" ->
// "<branch>". nullopt for any key strata would not have written there: one
// outside the folder, the folder alone, or a rest that is not a valid name
// (PackNameToHash in its lower-case hex form; IsValidRefName, or the
// lowercase hex of an encrypted store's sealed branch name). Those checks
// rule out "..", NUL, a leading or doubled '/', so a name that comes out is
// safe to use in paths, and folder + name is the key again. Branch names may
// hold '/' ("team/x"), as local ones do.
std::optional<std::string> PackNameFromKey(std::string_view key);
std::optional<std::string> RefNameFromKey(std::string_view key);

}  // namespace strata::s3
