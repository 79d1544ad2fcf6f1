// What a remote store's bytes decode to. The first byte picks the decoder:
//   0  a ref body (refs/<branch>: "<hex id>\n" or the tombstone)
//   1  remote.json of a remote
//   2  an S3 ListObjectsV2 answer
//   3  an S3 error document
//   4  an HTTP response header line (as is, and as an ETag and a
//      Content-Length value)
//   5  a key from an S3 listing (as is, and under packs/ and refs/)
//   6  an encrypted store's bucket `generations` (seal_grants.h): in range,
//      and the one encoding of what it decodes to
//   7  an encrypted store's remote.sealed (remote_spec_seal.h), under a fixed
//      key: what opens is a valid remote.json, and seals and opens again to
//      the same settings
//   8  the answer to a multi-object delete; and the rest as a list of keys
//      for the request (one per line)
// Other selector values are ignored rather than folded onto these, so that
// adding a case later does not change what the stored corpus exercises.
// Ref bodies and remote.json must re-encode to a value that decodes the
// same; an S3 answer that parses must parse the same once written out again
// with its text escaped (so entity decoding and element matching agree).
// A delete answer that parses must parse the same once written out again,
// and a delete request must give back the keys it was made of.
// An ETag must come out fit to send back in If-Match (no quotes, blanks or
// control bytes) and a Content-Length as the number written; what it reserves
// stays under the bound. A key turned into a name must give a valid name that
// is the key again once put back under its folder.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "remote/remote.h"
#include "remote/remote_spec_seal.h"
#include "remote/s3_backend.h"
#include "remote/s3_request.h"
#include "remote/s3_xml.h"
#include "remote/seal_grants.h"
#include "store/pack_format.h"
#include "store/store.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void RefBody(std::string_view in) {
  auto ref = strata::DecodeRemoteRef(in);
  if (!ref.ok()) return;
  auto again = strata::DecodeRemoteRef(strata::EncodeRemoteRef(*ref));
  if (!again.ok() || *again != *ref) Fail("a ref body does not survive encoding");
}

void RemoteJson(std::string_view in) {
  auto spec = strata::RemoteSpecFromJson("fuzz", in);
  if (!spec.ok()) return;
  auto again = strata::RemoteSpecFromJson("fuzz", strata::RemoteSpecToJson(*spec));
  if (!again.ok()) Fail("an encoded remote.json is refused");
  const strata::S3Location &a = spec->location, &b = again->location;
  if (a.bucket != b.bucket || a.prefix != b.prefix || a.endpoint != b.endpoint || a.region != b.region ||
      spec->cache_bytes != again->cache_bytes || spec->timeout_ms != again->timeout_ms)
    Fail("remote.json does not survive encoding");
}

void ListPage(std::string_view in) {
  auto page = strata::s3::ParseListPage(in);
  if (!page) return;
  std::string xml = "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name>";
  for (const auto& o : page->objects)
    xml += "<Contents><Key>" + Escape(o.key) + "</Key><Size>" + std::to_string(o.size) + "</Size><ETag>&quot;" +
           Escape(o.etag) + "&quot;</ETag></Contents>";
  xml += std::string("<IsTruncated>") + (page->truncated ? "true" : "false") + "</IsTruncated>";
  if (!page->next_token.empty()) xml += "<NextContinuationToken>" + Escape(page->next_token) + "</NextContinuationToken>";
  xml += "</ListBucketResult>";
  auto again = strata::s3::ParseListPage(xml);
  if (!again || again->objects.size() != page->objects.size() || again->truncated != page->truncated ||
      again->next_token != page->next_token)
    Fail("a listing does not survive writing out");
  for (size_t i = 0; i < page->objects.size(); i++) {
    const auto &x = page->objects[i], &y = again->objects[i];
    if (x.key != y.key || x.size != y.size || x.etag != y.etag) Fail("a listed object does not survive writing out");
  }
}

void ErrorDocument(std::string_view in) {
  auto error = strata::s3::ParseError(in);
  auto again = strata::s3::ParseError("<Error><Code>" + Escape(error.code) + "</Code><Message>" +
                                      Escape(error.message) + "</Message></Error>");
  if (again.code != error.code || again.message != error.message) Fail("an error document does not survive writing out");
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

void CheckHeader(std::string_view line) {
  strata::s3::HeaderLine header = strata::s3::ParseHeaderLine(line);
  if (header.starts_response != line.starts_with("HTTP/")) Fail("a status line is missed, or another line taken for one");
  if (header.starts_response && (header.etag || header.content_length)) Fail("a status line read as a header");
  if (header.etag && header.content_length) Fail("one line read as two headers");
  if (header.etag && !header.etag->empty()) {
    for (char c : *header.etag)
      if (c <= ' ' || c > '~' || c == '"') Fail("an ETag keeps a quote, a blank or a control byte");
    auto again = strata::s3::ParseHeaderLine("ETag: \"" + *header.etag + "\"\r\n");
    if (again.etag != header.etag) Fail("an ETag does not survive quoting");
  }
  if (header.content_length) {
    uint64_t n = *header.content_length;
    // The value was that number in decimal, perhaps with leading zeros.
    std::string_view value = TrimBlanks(line.substr(line.find(':') + 1));
    while (value.size() > 1 && value.front() == '0') value.remove_prefix(1);
    if (value != std::to_string(n)) Fail("a Content-Length is not the number written");
    uint64_t reserve = strata::s3::BodyReserve(n);
    if (reserve > strata::s3::kMaxBodyReserve || reserve > n) Fail("a Content-Length reserves past the bound");
    if (n <= strata::s3::kMaxBodyReserve && reserve != n) Fail("an ordinary Content-Length is not reserved in full");
  }
}

void HeaderLine(std::string_view in) {
  CheckHeader(in);
  CheckHeader("ETag:" + std::string(in));
  CheckHeader("Content-Length:" + std::string(in));
}

// No ".." component, NUL, or absolute path: what a name must never hold.
void CheckSafe(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos ||
      name.find("..") != std::string::npos)
    Fail("a listed key gives a name unfit for a path");
}

void CheckKey(std::string_view key) {
  if (auto pack = strata::s3::PackNameFromKey(key)) {
    CheckSafe(*pack);
    auto id = strata::PackNameToHash(*pack);
    if (!id || id->ToHex() + strata::kPackSuffix != *pack || pack->find('/') != std::string::npos)
      Fail("a listed key gives an invalid pack name");
    if (strata::s3::kPacksFolder + *pack != key) Fail("a pack name is not its key again");
  }
  if (auto ref = strata::s3::RefNameFromKey(key)) {
    CheckSafe(*ref);
    // A plain branch name, or an encrypted store's sealed one (lowercase hex).
    const bool sealed_hex = !ref->empty() && ref->size() % 2 == 0 &&
                            ref->find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!strata::IsValidRefName(*ref) && !sealed_hex) Fail("a listed key gives an invalid branch name");
    if (strata::s3::kRefsFolder + *ref != key) Fail("a branch name is not its key again");
  }
}

void ListedKey(std::string_view in) {
  CheckKey(in);
  CheckKey(strata::s3::kPacksFolder + std::string(in));
  CheckKey(strata::s3::kRefsFolder + std::string(in));
}

void BucketGenerations(std::string_view in) {
  auto g = strata::DecodeBucketGenerations(in);
  if (!g.ok()) return;
  if (g->left.first > g->left.end || g->left.end > (uint64_t{1} << 32)) Fail("a range of generations out of bounds");
  if (strata::EncodeBucketGenerations(*g) != in) Fail("generations decode from other bytes than they encode to");
}

void SealedSpec(std::string_view in) {
  strata::crypto::Key256 key;
  key.bytes.fill(7);
  auto spec = strata::OpenRemoteSpec(key, "fuzz", in);
  if (!spec.ok()) return;
  auto sealed = strata::SealRemoteSpec(key, *spec);
  if (!sealed.ok()) Fail("settings that opened do not seal");
  auto again = strata::OpenRemoteSpec(key, "fuzz", *sealed);
  if (!again.ok() || again->location.Url() != spec->location.Url() ||
      again->location.endpoint != spec->location.endpoint || again->location.region != spec->location.region ||
      again->cache_bytes != spec->cache_bytes || again->timeout_ms != spec->timeout_ms)
    Fail("sealed settings do not survive sealing again");
  if (strata::OpenRemoteSpec(key, "other", *sealed).ok()) Fail("settings sealed for one remote open as another's");
}

void DeleteAnswer(std::string_view in) {
  if (auto result = strata::s3::ParseDeleteResult(in)) {
    std::string xml = "<?xml version=\"1.0\"?><DeleteResult>";
    for (const auto& key : result->deleted) xml += "<Deleted><Key>" + Escape(key) + "</Key></Deleted>";
    for (const auto& f : result->failed)
      xml += "<Error><Key>" + Escape(f.key) + "</Key><Code>" + Escape(f.code) + "</Code><Message>" +
             Escape(f.message) + "</Message></Error>";
    xml += "</DeleteResult>";
    auto again = strata::s3::ParseDeleteResult(xml);
    if (!again || again->deleted != result->deleted || again->failed.size() != result->failed.size())
      Fail("a delete answer does not survive writing out");
    for (size_t i = 0; i < result->failed.size(); i++) {
      const auto &x = result->failed[i], &y = again->failed[i];
      if (x.key != y.key || x.code != y.code || x.message != y.message) Fail("a failed delete does not survive writing out");
    }
  }
  std::vector<std::string> keys;
  for (size_t start = 0; start <= in.size();) {
    size_t end = std::min(in.find('\n', start), in.size());
    keys.emplace_back(in.substr(start, end - start));
    start = end + 1;
  }
  auto request = strata::s3::EncodeDeleteRequest(keys);
  if (!request) return;
  std::vector<std::string> read;
  for (size_t at = request->find("<Key>"); at != std::string::npos; at = request->find("<Key>", at + 1)) {
    auto key = strata::s3::ElementText(std::string_view(*request).substr(at), "Key");
    if (!key) Fail("a delete request holds a key it cannot give back");
    read.push_back(*key);
  }
  if (read != keys) Fail("a delete request names other keys than it was made of");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 0: RefBody(in); break;
    case 1: RemoteJson(in); break;
    case 2: ListPage(in); break;
    case 3: ErrorDocument(in); break;
    case 4: HeaderLine(in); break;
    case 5: ListedKey(in); break;
    case 6: BucketGenerations(in); break;
    case 7: SealedSpec(in); break;
    case 8: DeleteAnswer(in); break;
    default: break;
  }
  return 0;
}
