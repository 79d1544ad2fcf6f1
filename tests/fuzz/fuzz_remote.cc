// What a remote store's bytes decode to. The first byte picks the decoder:
//   0  a ref body (refs/<branch>: "<hex id>\n" or the tombstone)
//   1  remote.json of a remote
//   2  an S3 ListObjectsV2 answer
//   3  an S3 error document
// Ref bodies and remote.json must re-encode to a value that decodes the
// same; an S3 answer that parses must parse the same once written out again
// with its text escaped (so entity decoding and element matching agree).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "remote/remote.h"
#include "remote/s3_backend.h"
#include "remote/s3_xml.h"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: RefBody(in); break;
    case 1: RemoteJson(in); break;
    case 2: ListPage(in); break;
    default: ErrorDocument(in); break;
  }
  return 0;
}
