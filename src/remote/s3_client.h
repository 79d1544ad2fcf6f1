// S3Client: the few S3 requests a remote store needs, over libcurl.
//
// Requests are signed with AWS Signature V4 by libcurl itself
// (CURLOPT_AWS_SIGV4); the payload is sent as UNSIGNED-PAYLOAD. Keys are
// relative to the location's prefix and are percent-encoded here, so callers
// pass plain names ("packs/ab12...", "refs/main").
//
// Failures: a request that did not get an answer (connect error, timeout) or
// got a 5xx is retried with exponential backoff when it is idempotent (every
// request except a conditional PUT); when the retries run out the result is
// Unavailable, naming the endpoint and the key. 403 and other 4xx answers are
// not retried: they are IOError with the server's error code in the message.
// Credentials never appear in a message.
//
// Thread-safety: safe for concurrent use; each thread gets its own curl
// handle, so requests from several threads run in parallel.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace strata {

// Where a remote store lives: s3://BUCKET/PREFIX at an endpoint.
struct S3Location {
  std::string endpoint;  // "http://127.0.0.1:7480" (scheme, host, port; no path)
  std::string bucket;
  std::string prefix;    // "" or "team/store" (no leading or trailing '/')
  std::string region = "us-east-1";

  // Parses "s3://BUCKET[/PREFIX]" (and checks it with the endpoint as
  // Validate does); InvalidArgument naming what is wrong.
  static Result<S3Location> FromUrl(std::string_view url, std::string endpoint);
  // Every field goes into requests, so each is checked before one is made:
  // the bucket's name rules; a prefix of non-empty segments other than "."
  // and "..", without control characters; an endpoint http(s)://HOST[:PORT]
  // of URL-safe characters; a region of a-z 0-9 '-'. InvalidArgument otherwise.
  Status Validate() const;
  std::string Url() const;  // "s3://bucket/prefix"
};

struct S3Credentials {
  std::string access_key;
  std::string secret_key;

  // AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when set; otherwise the
  // profile AWS_PROFILE (default "default") of the credentials file
  // AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials). NotFound with a
  // message telling the user what to set when neither has them.
  static Result<S3Credentials> FromEnvironment();
};

struct S3Options {
  int connect_timeout_ms = 5000;
  // A request that makes no progress for this long fails (and is retried when
  // idempotent); also bounds how long a read on a mount can hang.
  int request_timeout_ms = 30000;
  int retries = 4;          // after the first attempt
  // When not 0: a call gives up once this long has passed since a byte last
  // moved (or since it began): no retry starts then, and an attempt under way
  // is cut off at that point (to within about a second). So a dead server
  // fails a call in about this time however many retries are allowed, while
  // a transfer that makes progress and then stalls is still retried.
  int total_timeout_ms = 0;
  int backoff_ms = 100;     // doubled after each failed attempt
  // Keys per ListObjectsV2 page (S3's maximum and default is 1000); smaller
  // pages are for tests of the paging.
  int list_page_size = 1000;
  // Pages one List may read: a bound on the work a server that never ends a
  // listing can cause (10 000 pages of 1000 are 10 million keys).
  size_t max_list_pages = 10000;
};

struct S3ObjectInfo {
  std::string key;  // relative to the prefix
  uint64_t size = 0;
  std::string etag;  // without quotes
  int64_t last_modified = 0;  // seconds since 1970 UTC, by the server's clock; 0 when not listed
};

struct S3Body {
  std::string data;
  std::string etag;  // without quotes
};

// What a multi-object delete did. A key is in `deleted` only when the
// server's answer says it is gone (or was never there); every other key asked
// for is in `failed`, with why, and may still exist.
struct S3DeleteOutcome {
  std::vector<std::string> deleted;
  std::vector<std::pair<std::string, std::string>> failed;  // key, why
};

// Requests sent, by kind: every attempt counts, retries included.
struct S3RequestCounts {
  uint64_t get = 0, get_range = 0, head = 0, list = 0;
  uint64_t put = 0, put_if = 0;
  uint64_t delete_one = 0;   // DELETE of one object
  uint64_t delete_many = 0;  // multi-object deletes (POST ?delete)
  uint64_t keys_deleted = 0;  // keys asked for in them
  uint64_t other = 0;         // bucket HEAD and PUT
  uint64_t total() const { return get + get_range + head + list + put + put_if + delete_one + delete_many + other; }
  S3RequestCounts operator-(const S3RequestCounts& earlier) const;
};

// Outcome of a conditional PUT.
enum class S3PutOutcome {
  kWritten,             // the condition held and the object was written
  kPreconditionFailed,  // 412: the condition did not hold; nothing written
  kUnknown,             // no clear answer (5xx, timeout): re-read to learn what happened
};

class S3Client {
 public:
  static Result<std::unique_ptr<S3Client>> Create(S3Location location, S3Credentials credentials,
                                                  S3Options options = {});
  virtual ~S3Client() = default;

  virtual const S3Location& location() const = 0;

  // The whole object; nullopt when it does not exist (404).
  virtual Result<std::optional<S3Body>> Get(const std::string& key) = 0;
  // Bytes [offset, offset+length) of an object; NotFound when it does not exist.
  virtual Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) = 0;
  // Size of an object; nullopt when it does not exist.
  virtual Result<std::optional<uint64_t>> Head(const std::string& key) = 0;
  // Unconditional PUT (idempotent, so retried).
  virtual Status Put(const std::string& key, std::string_view body) = 0;
  // Unconditional PUT of a local file's bytes, streamed from disk.
  virtual Status PutFile(const std::string& key, const std::string& local_path) = 0;
  // PUT with If-Match: if_match (when set) or If-None-Match: * (when not).
  // Never retried: a lost answer is kUnknown. (Only a failed connect, when
  // the server saw nothing, is retried; Unavailable when that persists.)
  // The first call with if_match learns which ETag form the server accepts
  // (RGW 16 wants it without quotes) from a temporary object under ".probe/",
  // and fails Unsupported on a server that ignores If-Match.
  virtual Result<S3PutOutcome> PutIf(const std::string& key, std::string_view body,
                                     const std::optional<std::string>& if_match) = 0;
  // DELETE; deleting an absent object is not an error.
  virtual Status Delete(const std::string& key) = 0;
  // Deletes `keys` with multi-object deletes (POST ?delete, up to 1000 keys
  // a request, with its Content-MD5), retried as a whole when the server is
  // busy or the answer was lost (deleting twice is harmless). A request that
  // fails for good leaves its keys and those after it in `failed` and is the
  // last one sent; the call itself fails only for keys it cannot send.
  virtual Result<S3DeleteOutcome> DeleteMany(const std::vector<std::string>& keys) = 0;
  // Every object whose key starts with key_prefix (all pages of ListObjectsV2).
  virtual Result<std::vector<S3ObjectInfo>> List(const std::string& key_prefix) = 0;
  // Creates the bucket; AlreadyExists when it is there.
  virtual Status CreateBucket() = 0;

  // The requests this client has sent so far.
  virtual S3RequestCounts counts() const = 0;
};

}  // namespace strata
