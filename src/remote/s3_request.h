// One signed HTTP exchange with an S3 endpoint, over libcurl; internal to
// src/remote (S3Client is the interface the rest of strata uses).
//
// Perform() makes exactly one attempt; retrying is the caller's decision,
// because only the caller knows whether a request is idempotent. It tells
// apart "nothing was sent" (connect failed: always safe to retry) from "sent,
// but the answer was lost" (only safe to retry when idempotent).
//
// Thread-safety: Perform() may be called from any number of threads at once;
// each thread uses its own curl handle (and so its own connection cache).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace strata::s3 {

struct HttpConfig {
  std::string access_key;
  std::string secret_key;
  std::string region;
  int connect_timeout_ms = 5000;  // never more than the attempt's stall_ms
};

struct HttpRequest {
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string url;     // already percent-encoded, query sorted
  std::vector<std::string> headers;  // "Name: value"
  // Upload body of a PUT (a POST sends `body`): `body`, or when body_fd >= 0, body_size bytes of
  // that file from offset 0 (read with pread, so the fd's offset is untouched).
  std::string_view body;
  int body_fd = -1;
  uint64_t body_size = 0;
  // A new connection instead of a pooled one: a pooled connection that turns
  // out dead makes curl resend the request by itself, which must not happen
  // to a conditional write whose first copy may have been applied.
  bool fresh_connection = false;
  // The attempt is abandoned once no byte has moved (up or down) for this
  // long; libcurl checks about once a second while nothing moves, so it may
  // run up to a second longer.
  int stall_ms = 30000;
};

enum class Transport {
  kAnswered,  // got an HTTP status (any)
  kNotSent,   // could not connect (or resolve): the server saw nothing
  kLost,      // sent (maybe partly); no complete answer (timeout, reset)
  kLocal,     // a local failure (reading the upload file, bad URL): not worth retrying
};

struct HttpResponse {
  Transport transport = Transport::kLocal;
  std::string transport_error;  // curl's explanation when not answered
  long status = 0;
  std::string body;
  std::string etag;  // ETag header, quotes stripped
  std::optional<uint64_t> content_length;
  // When body bytes last moved either way (the attempt's start if none did).
  std::chrono::steady_clock::time_point last_progress;
  bool progressed = false;  // whether any body byte moved
};

// Loads libcurl and runs curl_global_init, once per process (see
// curl_library.h); Unsupported when libcurl cannot be loaded. Perform() loads
// it too, and answers Transport::kLocal with that message when it cannot.
Status GlobalInit();

HttpResponse Perform(const HttpConfig& config, const HttpRequest& request);

// RFC 3986 percent-encoding as SigV4 wants it: every byte except A-Z a-z 0-9
// - . _ ~ (and '/' when keep_slash) becomes %XX with upper-case hex.
std::string PercentEncode(std::string_view s, bool keep_slash);

// The Content-MD5 header's value for `body`: the base64 of its MD5 digest
// (RFC 1864). S3 wants it on a multi-object delete.
std::string ContentMd5(std::string_view body);

// "\"abc\"" -> "abc"; anything else unchanged.
std::string StripQuotes(std::string_view etag);

// What one response header line (as libcurl hands it over, CRLF included)
// means to strata. Only the headers strata uses are read; the rest is ignored.
struct HeaderLine {
  // "HTTP/1.1 200 OK": a new response starts (the real one after a
  // "100 Continue"), so what earlier lines said no longer holds.
  bool starts_response = false;
  // An ETag header. Empty when its value is unusable: strata sends an ETag
  // back in If-Match, so only visible ASCII without '"' is kept (a weak or
  // malformed tag, or one with control characters, would be echoed into a
  // request header otherwise).
  std::optional<std::string> etag;
  // A Content-Length header whose value is a plain decimal number that fits;
  // signs, junk and overflow leave it unset.
  std::optional<uint64_t> content_length;
  // When body bytes last moved either way (the attempt's start if none did).
  std::chrono::steady_clock::time_point last_progress;
  bool progressed = false;  // whether any body byte moved
};
HeaderLine ParseHeaderLine(std::string_view line);

// The most a response body reserves before it arrives. A Content-Length comes
// from the server, so it is a hint, not a promise: a broken or hostile server
// must not make us allocate gigabytes for nothing. 8 MiB covers everything
// strata GETs in one piece (1 MiB cache blocks, chunks of at most 2 MiB,
// pack footers, 1000-key listing pages, refs); anything longer grows as it
// arrives.
constexpr uint64_t kMaxBodyReserve = 8ull << 20;
// How much to reserve for a body announced as `content_length` bytes.
uint64_t BodyReserve(uint64_t content_length);

}  // namespace strata::s3
