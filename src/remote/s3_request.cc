#include "remote/s3_request.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include <openssl/evp.h>

#include "remote/curl_library.h"
#include "util/hex.h"

namespace strata::s3 {
namespace {

// A curl easy handle per thread: requests from different threads never share
// one (a handle is not thread-safe), and each thread keeps its connections
// alive between requests. Freed when the thread ends.
struct ThreadHandle {
  const CurlApi& api;
  CURL* curl = nullptr;
  explicit ThreadHandle(const CurlApi& curl_api) : api(curl_api), curl(api.easy_init()) {}
  ~ThreadHandle() {
    if (curl != nullptr) api.easy_cleanup(curl);
  }
  ThreadHandle(const ThreadHandle&) = delete;
  ThreadHandle& operator=(const ThreadHandle&) = delete;
};

struct SlistDeleter {
  const CurlApi* api;
  void operator()(curl_slist* l) const { api->slist_free_all(l); }
};

// What the upload callbacks read from.
struct UploadSource {
  std::string_view body;
  int fd = -1;
  uint64_t size = 0;
  uint64_t offset = 0;
  int read_errno = 0;
};

size_t ReadBody(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* src = static_cast<UploadSource*>(userdata);
  size_t want = std::min<uint64_t>(size * nitems, src->size - src->offset);
  if (want == 0) return 0;
  if (src->fd < 0) {
    std::memcpy(buffer, src->body.data() + src->offset, want);
    src->offset += want;
    return want;
  }
  ssize_t n;
  do {
    n = pread(src->fd, buffer, want, static_cast<off_t>(src->offset));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {  // an error, or the file shrank under us
    src->read_errno = n < 0 ? errno : EIO;
    return CURL_READFUNC_ABORT;
  }
  src->offset += static_cast<uint64_t>(n);
  return static_cast<size_t>(n);
}

// curl rewinds the upload when it must send the request again on its own
// (a pooled connection found dead, an auth round trip).
int SeekBody(void* userdata, curl_off_t offset, int origin) {
  auto* src = static_cast<UploadSource*>(userdata);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > src->size) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  src->offset = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

size_t WriteBody(char* data, size_t size, size_t nmemb, void* userdata) {
  static_cast<HttpResponse*>(userdata)->body.append(data, size * nmemb);
  return size * nmemb;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Where OnHeader writes: the response, and whether a body is to come (a
// HEAD's Content-Length is the object's size, with no body behind it).
struct HeaderSink {
  HttpResponse* response;
  bool expects_body;
};

size_t OnHeader(char* data, size_t size, size_t nitems, void* userdata) {
  auto* sink = static_cast<HeaderSink*>(userdata);
  std::string_view line(data, size * nitems);
  HeaderLine header = ParseHeaderLine(line);
  if (header.starts_response) sink->response->etag.clear();
  if (header.etag) sink->response->etag = std::move(*header.etag);
  // Reserved once so a large GET does not grow its string many times.
  if (header.content_length && sink->expects_body) sink->response->body.reserve(BodyReserve(*header.content_length));
  return line.size();
}

bool IsHeaderName(std::string_view name, std::string_view expected) {
  return name.size() == expected.size() && strncasecmp(name.data(), expected.data(), name.size()) == 0;
}

// RFC 9110's etagc, minus obs-text: what can go back into If-Match as is.
bool IsUsableEtag(std::string_view etag) {
  for (char c : etag) {
    if (c <= ' ' || c > '~' || c == '"') return false;  // char may be signed: bytes >= 0x80 are negative
  }
  return true;
}

// Progress as libcurl reports it, to tell a stalled attempt from a slow one.
struct ProgressWatch {
  std::chrono::steady_clock::time_point last_progress;
  curl_off_t moved = 0;  // body bytes down + up so far
  std::chrono::milliseconds stall;
  bool stalled = false;
};

int OnProgress(void* userdata, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  auto* watch = static_cast<ProgressWatch*>(userdata);
  auto now = std::chrono::steady_clock::now();
  if (dlnow + ulnow != watch->moved) {
    watch->moved = dlnow + ulnow;
    watch->last_progress = now;
    return 0;
  }
  if (now - watch->last_progress < watch->stall) return 0;
  watch->stalled = true;
  return 1;  // abandons the transfer (CURLE_ABORTED_BY_CALLBACK)
}

Transport Classify(CURLcode code, curl_off_t request_bytes, bool stalled) {
  if (stalled) return request_bytes == 0 ? Transport::kNotSent : Transport::kLost;
  switch (code) {
    case CURLE_OK:
      return Transport::kAnswered;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return Transport::kNotSent;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_READ_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_BAD_FUNCTION_ARGUMENT:
      return Transport::kLocal;
    default:
      // A timeout while connecting (or a TLS handshake failure) sent nothing.
      return request_bytes == 0 ? Transport::kNotSent : Transport::kLost;
  }
}

}  // namespace

Status GlobalInit() { return LoadCurl().status(); }

HttpResponse Perform(const HttpConfig& config, const HttpRequest& request) {
  HttpResponse response;
  Result<const CurlApi*> loaded = LoadCurl();
  if (!loaded.ok()) {
    response.transport_error = loaded.status().message();
    return response;
  }
  const CurlApi& api = **loaded;
  thread_local ThreadHandle handle(api);
  CURL* curl = handle.curl;
  if (curl == nullptr) {
    response.transport_error = "curl_easy_init failed";
    return response;
  }

  std::unique_ptr<curl_slist, SlistDeleter> headers(nullptr, SlistDeleter{&api});
  auto add_header = [&](const std::string& h) {
    headers.reset(api.slist_append(headers.release(), h.c_str()));
  };
  add_header("x-amz-content-sha256: UNSIGNED-PAYLOAD");
  // No "Expect:" to turn off curl's "Expect: 100-continue" (sent for bodies
  // over 1 MiB): curl 7.88 signs the empty header it then leaves out, and the
  // signature no longer matches.
  for (const std::string& h : request.headers) add_header(h);

  std::string sigv4 = "aws:amz:" + config.region + ":s3";
  char error_buffer[CURL_ERROR_SIZE] = {0};
  UploadSource upload{request.body, request.body_fd,
                      request.body_fd >= 0 ? request.body_size : request.body.size(), 0, 0};

  api.easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
  api.easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  api.easy_setopt(curl, CURLOPT_USERNAME, config.access_key.c_str());
  api.easy_setopt(curl, CURLOPT_PASSWORD, config.secret_key.c_str());
  api.easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  const int stall_ms = std::max(1, request.stall_ms);
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(config.connect_timeout_ms, stall_ms)));
  // "No byte moved for stall_ms", watched in milliseconds (curl's own
  // low-speed limit counts whole seconds). A large transfer that moves is
  // never cut off.
  ProgressWatch watch{std::chrono::steady_clock::now(), 0, std::chrono::milliseconds(stall_ms), false};
  api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  api.easy_setopt(curl, CURLOPT_XFERINFODATA, &watch);
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  HeaderSink header_sink{&response, request.method != "HEAD"};
  api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  api.easy_setopt(curl, CURLOPT_HEADERDATA, &header_sink);
  if (request.fresh_connection) api.easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);

  if (request.method == "HEAD") {
    api.easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    api.easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    api.easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload.size));
    api.easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    api.easy_setopt(curl, CURLOPT_READDATA, &upload);
    api.easy_setopt(curl, CURLOPT_SEEKFUNCTION, SeekBody);
    api.easy_setopt(curl, CURLOPT_SEEKDATA, &upload);
  } else if (request.method == "POST") {
    api.easy_setopt(curl, CURLOPT_POST, 1L);
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  CURLcode code = api.easy_perform(curl);
  curl_off_t request_bytes = 0;
  api.easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &request_bytes);
  response.transport = Classify(code, request_bytes, watch.stalled);
  response.progressed = watch.moved > 0;
  response.last_progress = watch.last_progress;
  if (code == CURLE_OK) {
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_off_t length = -1;
    api.easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length >= 0) response.content_length = static_cast<uint64_t>(length);
  } else if (watch.stalled) {
    response.transport_error = "nothing moved for " + std::to_string(stall_ms) + " ms";
  } else if (upload.read_errno != 0) {
    response.transport_error = std::string("reading the upload: ") + std::strerror(upload.read_errno);
  } else {
    response.transport_error = error_buffer[0] != 0 ? error_buffer : api.easy_strerror(code);
  }
  // The handle outlives this frame: drop its pointers into it.
  api.easy_reset(curl);
  return response;
}

std::string PercentEncode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      AppendHexByte(&out, c, HexCase::kUpper);
    }
  }
  return out;
}

std::string ContentMd5(std::string_view body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  if (EVP_Digest(body.data(), body.size(), digest, &digest_len, EVP_md5(), nullptr) != 1) return std::string();
  // Base64 takes 4 bytes for every 3, and EVP_EncodeBlock ends it with a NUL.
  std::string out(4 * ((digest_len + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), digest, static_cast<int>(digest_len));
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::string StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

HeaderLine ParseHeaderLine(std::string_view line) {
  HeaderLine header;
  if (line.starts_with("HTTP/")) {
    header.starts_response = true;
    return header;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return header;
  std::string_view name = line.substr(0, colon);
  std::string_view value = Trim(line.substr(colon + 1));
  if (IsHeaderName(name, "etag")) {
    std::string etag = StripQuotes(value);
    header.etag = IsUsableEtag(etag) ? std::move(etag) : std::string();
  } else if (IsHeaderName(name, "content-length")) {
    uint64_t length = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, length);
    if (!value.empty() && ec == std::errc() && ptr == end) header.content_length = length;
  }
  return header;
}

uint64_t BodyReserve(uint64_t content_length) { return std::min(content_length, kMaxBodyReserve); }

}  // namespace strata::s3
