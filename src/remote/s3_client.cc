// S3Client over libcurl: request building, the retry policy, answers mapped
// to Status, and the If-Match probe. One HTTP exchange is s3_request.cc; the
// XML answers are read by s3_xml.cc.
#include "remote/s3_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "remote/s3_request.h"
#include "remote/s3_xml.h"
#include "util/hex.h"
#include "util/unique_fd.h"

namespace strata {
namespace {

using s3::HttpRequest;
using s3::HttpResponse;
using s3::Transport;

constexpr const char* kProbeFolder = ".probe/";
// S3's bound on the keys of one multi-object delete.
constexpr size_t kMaxKeysPerDelete = 1000;

// What a request is, for S3RequestCounts.
enum class Kind { kGet, kGetRange, kHead, kList, kPut, kPutIf, kDeleteOne, kDeleteMany, kOther, kCount };
constexpr int64_t kAbandonedProbeAge = 24 * 3600;  // seconds

std::string RandomHex(size_t bytes) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  for (size_t i = 0; i < bytes; ++i) AppendHexByte(&out, static_cast<uint8_t>(rng() & 0xff));
  return out;
}

// Sleeps before retry number `attempt` (1-based): backoff_ms doubled each time,
// capped at 10 s and at the time the call has left, with jitter so that
// clients failing together spread out.
void Backoff(int backoff_ms, int attempt, int64_t left_ms) {
  thread_local std::mt19937 rng{std::random_device{}()};
  int64_t ms = std::min<int64_t>(int64_t{backoff_ms} << std::min(attempt - 1, 20), 10000);
  ms = ms / 2 + static_cast<int64_t>(rng() % static_cast<uint64_t>(ms / 2 + 1));
  ms = std::clamp<int64_t>(std::min(ms, left_ms), 0, 10000);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

class CurlS3Client final : public S3Client {
 public:
  CurlS3Client(S3Location location, S3Credentials credentials, S3Options options)
      : location_(std::move(location)), options_(options) {
    http_.access_key = std::move(credentials.access_key);
    http_.secret_key = std::move(credentials.secret_key);
    http_.region = location_.region;
    http_.connect_timeout_ms = options_.connect_timeout_ms;
  }

  const S3Location& location() const override { return location_; }

  Result<std::optional<S3Body>> Get(const std::string& key) override {
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(Request("GET", key), true, key, Kind::kGet));
    if (r.status == 404) {
      STRATA_RETURN_IF_ERROR(MissingBucket("GET", key, r));
      return std::optional<S3Body>();
    }
    if (r.status != 200) return HttpError("GET", key, r);
    return std::optional<S3Body>(S3Body{std::move(r.body), std::move(r.etag)});
  }

  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    if (length == 0) {  // not expressible as a Range; still say whether it exists
      STRATA_ASSIGN_OR_RETURN(auto size, Head(key));
      if (!size) return Status::NotFound("S3 GET " + Describe(key) + ": no such object");
      return std::string();
    }
    HttpRequest request = Request("GET", key);
    request.headers.push_back("Range: bytes=" + std::to_string(offset) + "-" +
                              std::to_string(offset + length - 1));
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, key, Kind::kGetRange));
    std::string what = Describe(key) + " bytes [" + std::to_string(offset) + ", " +
                       std::to_string(offset + length) + ")";
    if (r.status == 404) return Status::NotFound("S3 GET " + what + ": no such object");
    if (r.status == 416) return Status::InvalidArgument("S3 GET " + what + ": beyond the end of the object");
    if (r.status == 200) {  // a server that ignored Range sent the whole object
      r.body = r.body.size() > offset ? r.body.substr(offset, length) : std::string();
    } else if (r.status != 206) {
      return HttpError("GET", key, r);
    }
    if (r.body.size() != length) {
      return Status::InvalidArgument("S3 GET " + what + ": the object ends after " +
                                     std::to_string(r.body.size()) + " of them");
    }
    return std::move(r.body);
  }

  Result<std::optional<uint64_t>> Head(const std::string& key) override {
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(Request("HEAD", key), true, key, Kind::kHead));
    if (r.status == 404) return std::optional<uint64_t>();
    if (r.status != 200) return HttpError("HEAD", key, r);
    if (!r.content_length) return Status::IOErrorWithMessage("S3 HEAD " + Describe(key) + ": no Content-Length", EIO);
    return std::optional<uint64_t>(*r.content_length);
  }

  Status Put(const std::string& key, std::string_view body) override {
    HttpRequest request = Request("PUT", key);
    request.body = body;
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, key, Kind::kPut));
    return r.status == 200 ? Status::Ok() : HttpError("PUT", key, r);
  }

  Status PutFile(const std::string& key, const std::string& local_path) override {
    UniqueFd fd(open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return Status::IOError("opening " + local_path + " to upload", errno);
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Status::IOError("stat " + local_path, errno);
    HttpRequest request = Request("PUT", key);
    request.body_fd = fd.get();
    request.body_size = static_cast<uint64_t>(st.st_size);
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, key, Kind::kPut));
    return r.status == 200 ? Status::Ok() : HttpError("PUT", key, r);
  }

  Result<S3PutOutcome> PutIf(const std::string& key, std::string_view body,
                             const std::optional<std::string>& if_match) override {
    if (!if_match) return PutIfOnce(key, body, "If-None-Match: *");
    STRATA_ASSIGN_OR_RETURN(bool quoted, QuoteIfMatch());
    return PutIfOnce(key, body, "If-Match: " + (quoted ? "\"" + *if_match + "\"" : *if_match));
  }

  Status Delete(const std::string& key) override {
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(Request("DELETE", key), true, key, Kind::kDeleteOne));
    if (r.status == 404) return MissingBucket("DELETE", key, r);
    return r.status == 204 || r.status == 200 ? Status::Ok() : HttpError("DELETE", key, r);
  }

  Result<std::vector<S3ObjectInfo>> List(const std::string& key_prefix) override {
    std::vector<S3ObjectInfo> out;
    std::string full_prefix = FullKey(key_prefix);
    size_t strip = location_.prefix.empty() ? 0 : location_.prefix.size() + 1;
    std::string token;
    std::set<std::string> tokens_seen;
    size_t pages = 0;
    do {
      if (++pages > options_.max_list_pages) {
        return Status::IOErrorWithMessage("S3 LIST " + Describe(key_prefix + "*") + ": more than " +
                                              std::to_string(options_.max_list_pages) + " pages; giving up",
                                          EIO);
      }
      // SigV4 signs the query as is, so it is built in its canonical form:
      // parameters sorted by name, names and values strictly percent-encoded.
      std::map<std::string, std::string> query = {
          {"list-type", "2"}, {"max-keys", std::to_string(options_.list_page_size)}};
      if (!full_prefix.empty()) query["prefix"] = full_prefix;
      if (!token.empty()) query["continuation-token"] = token;
      std::string url = BucketUrl();
      char sep = '?';
      for (const auto& [name, value] : query) {
        url += sep + s3::PercentEncode(name, false) + "=" + s3::PercentEncode(value, false);
        sep = '&';
      }
      HttpRequest request{.method = "GET", .url = std::move(url)};
      STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, key_prefix + "*", Kind::kList));
      if (r.status != 200) return HttpError("LIST", key_prefix + "*", r);
      std::optional<s3::ListPage> page = s3::ParseListPage(r.body);
      if (!page) {
        return Status::IOErrorWithMessage("S3 LIST " + Describe(key_prefix + "*") + ": unreadable answer", EIO);
      }
      for (s3::ListedObject& object : page->objects) {
        // A server that answers with keys outside the prefix asked for is
        // not believed: such keys are not ours to name.
        if (!object.key.starts_with(full_prefix) || object.key.size() < strip) continue;
        out.push_back(
            S3ObjectInfo{object.key.substr(strip), object.size, std::move(object.etag), object.last_modified});
      }
      if (page->truncated && page->next_token.empty()) {
        return Status::IOErrorWithMessage(
            "S3 LIST " + Describe(key_prefix + "*") + ": truncated page without a continuation token", EIO);
      }
      token = page->truncated ? page->next_token : "";
      // A server that hands out a token twice would have us list forever.
      if (!token.empty() && !tokens_seen.insert(token).second) {
        return Status::IOErrorWithMessage(
            "S3 LIST " + Describe(key_prefix + "*") + ": the server repeated a continuation token", EIO);
      }
    } while (!token.empty());
    return out;
  }

  Result<S3DeleteOutcome> DeleteMany(const std::vector<std::string>& keys) override {
    S3DeleteOutcome outcome;
    for (size_t first = 0; first < keys.size(); first += kMaxKeysPerDelete) {
      const size_t n = std::min(kMaxKeysPerDelete, keys.size() - first);
      const std::vector<std::string> batch(keys.begin() + first, keys.begin() + first + n);
      Status sent = DeleteBatch(batch, outcome);
      if (sent.IsInvalidArgument()) return sent;
      if (!sent.ok()) {
        // No answer to go by: this batch and the ones not sent stay as they are.
        for (size_t i = first; i < keys.size(); i++) outcome.failed.emplace_back(keys[i], sent.message());
        break;
      }
    }
    return outcome;
  }

  S3RequestCounts counts() const override {
    auto n = [&](Kind k) { return sent_[static_cast<size_t>(k)].load(std::memory_order_relaxed); };
    S3RequestCounts c;
    c.get = n(Kind::kGet);
    c.get_range = n(Kind::kGetRange);
    c.head = n(Kind::kHead);
    c.list = n(Kind::kList);
    c.put = n(Kind::kPut);
    c.put_if = n(Kind::kPutIf);
    c.delete_one = n(Kind::kDeleteOne);
    c.delete_many = n(Kind::kDeleteMany);
    c.keys_deleted = keys_deleted_.load(std::memory_order_relaxed);
    c.other = n(Kind::kOther);
    return c;
  }

  Status CreateBucket() override {
    // Asked first because RGW (and AWS in us-east-1) answer 200 to creating a
    // bucket its owner already has.
    STRATA_ASSIGN_OR_RETURN(HttpResponse head, Send(HttpRequest{.method = "HEAD", .url = BucketUrl()}, true, "", Kind::kOther));
    if (head.status == 200) {
      return Status::AlreadyExists("S3 bucket " + location_.bucket + " at " + location_.endpoint + " already exists");
    }
    HttpRequest request{.method = "PUT", .url = BucketUrl()};
    // Outside us-east-1 AWS wants the region in the body; RGW takes either.
    std::string body;
    if (location_.region != "us-east-1") {
      body = "<CreateBucketConfiguration><LocationConstraint>" + location_.region +
             "</LocationConstraint></CreateBucketConfiguration>";
      request.body = body;
    }
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, "", Kind::kOther));
    if (r.status == 409) {
      return Status::AlreadyExists("S3 bucket " + location_.bucket + " at " + location_.endpoint +
                                   " already exists (" + s3::ParseError(r.body).code + ")");
    }
    return r.status == 200 ? Status::Ok() : HttpError("PUT", "", r);
  }

 private:
  std::string FullKey(const std::string& key) const {
    return location_.prefix.empty() ? key : location_.prefix + "/" + key;
  }
  std::string BucketUrl() const { return location_.endpoint + "/" + s3::PercentEncode(location_.bucket, false); }
  // For messages: plain (not encoded) and without credentials.
  std::string Describe(const std::string& key) const {
    return location_.endpoint + "/" + location_.bucket + (key.empty() ? "" : "/" + FullKey(key));
  }
  HttpRequest Request(const char* method, const std::string& key) const {
    return HttpRequest{.method = method, .url = BucketUrl() + "/" + s3::PercentEncode(FullKey(key), true)};
  }

  // One request under the retry policy. An attempt that reached no server is
  // always retried; a lost answer or a 5xx (or 429, "slow down") only when
  // `idempotent`. Non-idempotent requests get lost answers and 5xx back as
  // responses for the caller to call "unknown". Unavailable when the retries
  // run out; IOError for local failures.
  Result<HttpResponse> Send(HttpRequest request, bool idempotent, const std::string& key, Kind kind) {
    std::string last_error;
    using Clock = std::chrono::steady_clock;
    // total_timeout_ms counts from the last time a byte moved: a call that
    // makes progress (a large upload that then stalls) is retried, one that
    // gets nowhere fails about total_timeout_ms after it began.
    auto last_progress = Clock::now();
    const auto total = std::chrono::milliseconds(options_.total_timeout_ms);
    auto left_ms = [&]() -> int64_t {
      if (options_.total_timeout_ms <= 0) return INT64_MAX;
      return std::chrono::duration_cast<std::chrono::milliseconds>(total - (Clock::now() - last_progress)).count();
    };
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0) Backoff(options_.backoff_ms, attempt, left_ms());
      // An attempt may stall for request_timeout_ms, but not past the call's time.
      request.stall_ms = static_cast<int>(
          std::clamp<int64_t>(left_ms(), 100, std::max(100, options_.request_timeout_ms)));
      sent_[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
      HttpResponse r = s3::Perform(http_, request);
      if (r.progressed) last_progress = std::max(last_progress, r.last_progress);
      bool server_busy = r.transport == Transport::kAnswered && (r.status >= 500 || r.status == 429);
      if (r.transport == Transport::kLocal) {
        return Status::IOErrorWithMessage("S3 " + request.method + " " + Describe(key) + ": " + r.transport_error,
                                          EIO);
      }
      if (r.transport == Transport::kAnswered && !server_busy) return r;
      if (!idempotent && r.transport != Transport::kNotSent) return r;
      last_error = r.transport == Transport::kAnswered ? HttpError(request.method, key, r).message()
                                                      : r.transport_error;
      if (attempt >= options_.retries || left_ms() <= 0) {
        return Status::Unavailable("S3 " + request.method + " " + Describe(key) + ": no answer after " +
                                   std::to_string(attempt + 1) + " attempts (last: " + last_error + ")");
      }
    }
  }

  Status HttpError(const std::string& op, const std::string& key, const HttpResponse& r) const {
    s3::ErrorDocument error = s3::ParseError(r.body);
    std::string msg = "S3 " + op + " " + Describe(key) + ": HTTP " + std::to_string(r.status);
    if (!error.code.empty()) msg += " " + error.code;
    if (!error.message.empty()) msg += ": " + error.message;
    if (r.status == 403) {
      msg += " (check the access key, the secret and the clock)";
      return Status::IOErrorWithMessage(msg, EACCES);
    }
    return Status::IOErrorWithMessage(msg, EIO);
  }

  // A 404 naming the bucket is not "no such object": a store whose bucket is
  // gone must not look empty.
  Status MissingBucket(const std::string& op, const std::string& key, const HttpResponse& r) const {
    if (s3::ParseError(r.body).code != "NoSuchBucket") return Status::Ok();
    return Status::NotFound("S3 " + op + " " + Describe(key) + ": bucket " + location_.bucket +
                            " does not exist at " + location_.endpoint);
  }

  // One multi-object delete of at most kMaxKeysPerDelete keys; what the
  // answer says goes into `outcome`. An error when there is no answer to go by.
  Status DeleteBatch(const std::vector<std::string>& batch, S3DeleteOutcome& outcome) {
    std::vector<std::string> full;
    full.reserve(batch.size());
    for (const std::string& key : batch) full.push_back(FullKey(key));
    std::optional<std::string> body = s3::EncodeDeleteRequest(full);
    if (!body) return Status::InvalidArgument("S3 multi-object delete: a key holds a control character");
    // The query is "delete=" (an empty value), as SigV4 signs it.
    HttpRequest request{.method = "POST", .url = BucketUrl() + "?delete="};
    request.body = *body;
    request.headers.push_back("Content-MD5: " + s3::ContentMd5(*body));
    request.headers.push_back("Content-Type: application/xml");
    keys_deleted_.fetch_add(batch.size(), std::memory_order_relaxed);
    const std::string what = batch.front() + " and " + std::to_string(batch.size() - 1) + " more";
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, what, Kind::kDeleteMany));
    if (r.status == 404) STRATA_RETURN_IF_ERROR(MissingBucket("POST ?delete", what, r));
    if (r.status != 200) return HttpError("POST ?delete", what, r);
    std::optional<s3::DeleteResult> result = s3::ParseDeleteResult(r.body);
    if (!result) return Status::IOErrorWithMessage("S3 POST ?delete " + Describe(what) + ": unreadable answer", EIO);
    // Only keys asked for count, each once; a key the answer does not name
    // was not deleted as far as anyone can tell.
    std::map<std::string, size_t> asked;
    for (size_t i = 0; i < full.size(); i++) asked.emplace(full[i], i);
    std::vector<bool> settled(batch.size(), false);
    auto settle = [&](const std::string& key) -> std::optional<size_t> {
      auto it = asked.find(key);
      if (it == asked.end() || settled[it->second]) return std::nullopt;
      settled[it->second] = true;
      return it->second;
    };
    for (const std::string& key : result->deleted)
      if (auto i = settle(key)) outcome.deleted.push_back(batch[*i]);
    for (const s3::DeleteFailure& f : result->failed) {
      auto i = settle(f.key);
      if (!i) continue;
      if (f.code == "NoSuchKey") outcome.deleted.push_back(batch[*i]);  // gone already
      else outcome.failed.emplace_back(batch[*i], f.code + (f.message.empty() ? "" : ": " + f.message));
    }
    for (size_t i = 0; i < batch.size(); i++)
      if (!settled[i]) outcome.failed.emplace_back(batch[i], "not named in the server's answer");
    return Status::Ok();
  }

  Result<S3PutOutcome> PutIfOnce(const std::string& key, std::string_view body, std::string condition) {
    HttpRequest request = Request("PUT", key);
    request.body = body;
    request.headers.push_back(std::move(condition));
    request.fresh_connection = true;
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), false, key, Kind::kPutIf));
    if (r.transport != Transport::kAnswered || r.status >= 500) return S3PutOutcome::kUnknown;
    if (r.status == 200) return S3PutOutcome::kWritten;
    if (r.status == 412) return S3PutOutcome::kPreconditionFailed;
    if (r.status == 404) STRATA_RETURN_IF_ERROR(MissingBucket("PUT", key, r));
    return HttpError("PUT", key, r);
  }

  // Whether If-Match wants the ETag in quotes, as HTTP says; RGW 16 only
  // matches it bare. Learnt once, on a temporary object, so that a genuine
  // mismatch on a real key is never mistaken for the wrong form.
  Result<bool> QuoteIfMatch() {
    std::lock_guard<std::mutex> lock(probe_mu_);
    if (quote_if_match_) return *quote_if_match_;
    // Named after this host and process, so that the probe of a process
    // killed before it could delete it is recognised and removed later.
    const std::string mine = ProbeOwner(::getpid());
    std::string key = std::string(kProbeFolder) + mine + RandomHex(8);
    Result<bool> quoted = ProbeIfMatch(key);
    (void)Delete(key);  // best effort: a leftover probe object is harmless
    if (quoted.ok()) quote_if_match_ = *quoted;
    RemoveDeadProbes();
    return quoted;
  }

  static std::string ProbeOwner(pid_t pid) {
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    std::string name;
    for (const char* c = host; *c; ++c)
      if (std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' || *c == '.') name.push_back(*c);
    return "if-match-" + (name.empty() ? std::string("host") : name) + "-" + std::to_string(pid) + "-";
  }

  // Probes left behind by processes that died mid-probe: this host's as soon
  // as their process is gone, any host's once a day old (a probe lasts a few
  // requests; a day leaves room for clocks that disagree). Best effort, one
  // listing of the probe folder per client.
  void RemoveDeadProbes() {
    auto probes = List(kProbeFolder);
    if (!probes.ok()) return;
    const std::string host_part = ProbeOwner(0).substr(0, ProbeOwner(0).size() - 2);  // "if-match-HOST-"
    const int64_t now = static_cast<int64_t>(::time(nullptr));
    for (const S3ObjectInfo& o : *probes) {
      std::string_view name = std::string_view(o.key).substr(std::string_view(kProbeFolder).size());
      if (o.last_modified != 0 && now - o.last_modified > kAbandonedProbeAge) {
        (void)Delete(o.key);
        continue;
      }
      if (!name.starts_with(host_part)) continue;
      std::string_view rest = name.substr(host_part.size());
      size_t dash = rest.find('-');
      if (dash == std::string_view::npos || dash == 0 || dash > 9) continue;
      pid_t pid = 0;
      for (char c : rest.substr(0, dash)) {
        if (c < '0' || c > '9') {
          pid = 0;
          break;
        }
        pid = pid * 10 + (c - '0');
      }
      if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
      (void)Delete(o.key);
    }
  }

  Result<bool> ProbeIfMatch(const std::string& key) {
    HttpRequest request = Request("PUT", key);
    request.body = "probe";
    STRATA_ASSIGN_OR_RETURN(HttpResponse r, Send(std::move(request), true, key, Kind::kPut));
    if (r.status != 200) return HttpError("PUT", key, r);
    if (r.etag.empty()) return Status::Unsupported("S3 PUT " + Describe(key) + ": the answer has no ETag");
    std::string etag = r.etag;
    auto attempt = [&](const std::string& value) -> Result<S3PutOutcome> {
      STRATA_ASSIGN_OR_RETURN(S3PutOutcome outcome, PutIfOnce(key, "probe", "If-Match: " + value));
      if (outcome == S3PutOutcome::kUnknown) {
        return Status::Unavailable("S3 PUT " + Describe(key) + ": no clear answer to a conditional write");
      }
      return outcome;
    };
    // A server that ignores If-Match would let every ref update overwrite a
    // concurrent one: refuse it rather than lose commits.
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome wrong, attempt(std::string(etag.size(), '0')));
    if (wrong == S3PutOutcome::kWritten) {
      return Status::Unsupported("the S3 server at " + location_.endpoint +
                                 " ignores If-Match, so refs cannot be updated safely there");
    }
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome bare, attempt(etag));
    if (bare == S3PutOutcome::kWritten) return false;
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome quoted, attempt("\"" + etag + "\""));
    if (quoted == S3PutOutcome::kWritten) return true;
    return Status::Unsupported("the S3 server at " + location_.endpoint +
                               " matches If-Match with neither form of an object's ETag");
  }

  S3Location location_;
  S3Options options_;
  s3::HttpConfig http_;
  std::mutex probe_mu_;
  std::optional<bool> quote_if_match_;  // guarded by probe_mu_
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Kind::kCount)> sent_{};
  std::atomic<uint64_t> keys_deleted_{0};
};

}  // namespace

S3RequestCounts S3RequestCounts::operator-(const S3RequestCounts& e) const {
  S3RequestCounts d;
  d.get = get - e.get;
  d.get_range = get_range - e.get_range;
  d.head = head - e.head;
  d.list = list - e.list;
  d.put = put - e.put;
  d.put_if = put_if - e.put_if;
  d.delete_one = delete_one - e.delete_one;
  d.delete_many = delete_many - e.delete_many;
  d.keys_deleted = keys_deleted - e.keys_deleted;
  d.other = other - e.other;
  return d;
}

Result<std::unique_ptr<S3Client>> S3Client::Create(S3Location location, S3Credentials credentials,
                                                   S3Options options) {
  STRATA_RETURN_IF_ERROR(location.Validate());
  if (credentials.access_key.empty() || credentials.secret_key.empty()) {
    return Status::InvalidArgument("S3 credentials are empty");
  }
  // They go into the Authorization header: no byte that could end it. (The
  // message names neither.)
  for (const std::string* key : {&credentials.access_key, &credentials.secret_key})
    for (char c : *key)
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
        return Status::InvalidArgument("S3 credentials hold a space or a control character");
  if (options.list_page_size < 1 || options.list_page_size > 1000) {
    return Status::InvalidArgument("S3 list page size must be 1 to 1000");
  }
  // A clear error now, before any request, when libcurl is not installed.
  STRATA_RETURN_IF_ERROR(s3::GlobalInit());
  return std::unique_ptr<S3Client>(
      std::make_unique<CurlS3Client>(std::move(location), std::move(credentials), options));
}

}  // namespace strata
