// S3Client against a real S3 server: the Ceph RGW that scripts/ceph.sh starts
// (the ctest fixture "ceph" does it and passes its env file in
// STRATA_CEPH_ENV). Without STRATA_CEPH_ENV the tests that need a server skip.
#include "remote/s3_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "testing/store_test_util.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct ServerEnv {
  std::string endpoint;
  S3Credentials credentials;
  std::string region;
};

// The "export NAME=VALUE" lines of the file scripts/ceph.sh writes.
std::map<std::string, std::string> ReadEnvFile(const std::string& path) {
  std::map<std::string, std::string> vars;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("export ")) line = line.substr(7);
    size_t eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

std::string Unique(const std::string& stem) {
  static std::mt19937_64 rng{std::random_device{}()};
  return stem + std::to_string(getpid()) + "-" + std::to_string(rng() % 1000000000);
}

// A port on 127.0.0.1 that, with `listen_without_accept`, accepts TCP
// connections into the backlog and never answers; without, has no listener.
class LocalPort {
 public:
  explicit LocalPort(bool listen_without_accept) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (listen_without_accept) {
      listen(fd_, 16);
    } else {
      close(fd_);  // the port was free a moment ago; nobody listens there now
      fd_ = -1;
    }
  }
  ~LocalPort() {
    if (fd_ >= 0) close(fd_);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("STRATA_CEPH_ENV");
    if (path == nullptr) GTEST_SKIP() << "STRATA_CEPH_ENV is not set: no S3 server to test against";
    auto vars = ReadEnvFile(path);
    ASSERT_TRUE(vars.count("STRATA_S3_ENDPOINT")) << "no STRATA_S3_ENDPOINT in " << path;
    server_ = {vars["STRATA_S3_ENDPOINT"], {vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"]},
               vars["AWS_REGION"]};
    bucket_ = Unique("strata-test-");
    client_ = Connect(bucket_, "");
    Status created = client_->CreateBucket();
    ASSERT_TRUE(created.ok()) << created.ToString();
  }

  std::unique_ptr<S3Client> Connect(const std::string& bucket, const std::string& prefix,
                                    S3Options options = {}, std::optional<S3Credentials> credentials = {},
                                    std::string endpoint = "") {
    auto location = S3Location::FromUrl("s3://" + bucket + (prefix.empty() ? "" : "/" + prefix),
                                        endpoint.empty() ? server_.endpoint : endpoint);
    EXPECT_TRUE(location.ok()) << location.status().ToString();
    if (!server_.region.empty()) location->region = server_.region;
    auto client = S3Client::Create(*location, credentials.value_or(server_.credentials), options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }

  std::string GetOrDie(const std::string& key) {
    auto body = client_->Get(key);
    EXPECT_TRUE(body.ok()) << body.status().ToString();
    EXPECT_TRUE(body->has_value()) << key;
    return body.ok() && body->has_value() ? (*body)->data : "";
  }

  ServerEnv server_;
  std::string bucket_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3ClientTest, PutGetHeadRangeDelete) {
  ASSERT_TRUE(client_->Put("a/b", "hello world").ok());
  auto body = client_->Get("a/b");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  ASSERT_TRUE(body->has_value());
  EXPECT_EQ((*body)->data, "hello world");
  EXPECT_FALSE((*body)->etag.empty());
  EXPECT_EQ((*body)->etag.find('"'), std::string::npos);

  auto size = client_->Head("a/b");
  ASSERT_TRUE(size.ok() && size->has_value());
  EXPECT_EQ(**size, 11u);
  auto range = client_->GetRange("a/b", 6, 5);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, "world");
  EXPECT_EQ(client_->GetRange("a/b", 6, 6).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(client_->GetRange("a/b", 20, 1).status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(client_->GetRange("a/b", 3, 0).ok());
  EXPECT_TRUE(client_->GetRange("a/missing", 0, 1).status().IsNotFound());
  EXPECT_TRUE(client_->GetRange("a/missing", 0, 0).status().IsNotFound());

  auto missing = client_->Get("a/missing");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  auto missing_size = client_->Head("a/missing");
  ASSERT_TRUE(missing_size.ok());
  EXPECT_FALSE(missing_size->has_value());

  ASSERT_TRUE(client_->Put("empty", "").ok());
  EXPECT_EQ(GetOrDie("empty"), "");
  EXPECT_EQ(**client_->Head("empty"), 0u);

  ASSERT_TRUE(client_->Delete("a/b").ok());
  EXPECT_FALSE(client_->Get("a/b")->has_value());
  EXPECT_TRUE(client_->Delete("a/b").ok()) << "deleting an absent object is no error";
}

TEST_F(S3ClientTest, DeleteManyDeletesInBatchesAndSaysWhatWent) {
  // Under a prefix, with a key that needs escaping, past one request's 1000
  // keys: the objects asked for go, the others stay.
  auto client = Connect(bucket_, "team/store");
  std::vector<std::string> keys;
  for (int i = 0; i < 1003; i++) keys.push_back("packs/" + std::to_string(i));
  keys[5] = "odd & <key> 'x'";
  for (size_t i : {size_t{0}, size_t{5}, size_t{999}, size_t{1000}, size_t{1002}})
    ASSERT_TRUE(client->Put(keys[i], "x").ok());
  ASSERT_TRUE(client->Put("packs/kept", "y").ok());
  const S3RequestCounts before = client->counts();
  auto outcome = client->DeleteMany(keys);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  const S3RequestCounts sent = client->counts() - before;
  EXPECT_EQ(sent.delete_many, 2u) << "1003 keys are two requests";
  EXPECT_EQ(sent.keys_deleted, 1003u);
  EXPECT_EQ(sent.delete_one, 0u);
  EXPECT_TRUE(outcome->failed.empty()) << outcome->failed.front().first << ": " << outcome->failed.front().second;
  // Absent keys count as gone: deleting twice is harmless.
  std::vector<std::string> deleted = outcome->deleted;
  std::sort(deleted.begin(), deleted.end());
  std::vector<std::string> asked = keys;
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(deleted, asked);
  auto left = client->List("packs/");
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].key, "packs/kept");
  EXPECT_FALSE(client->Get(keys[5])->has_value());
  EXPECT_EQ(client->DeleteMany({std::string("bad\x01key")}).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(S3ClientTest, DeleteManyWithoutTheRightToDeleteFailsEveryKey) {
  // Another bucket's objects, asked for with credentials the server refuses:
  // nothing is taken as gone.
  ASSERT_TRUE(client_->Put("p/a", "x").ok());
  auto refused = Connect(bucket_, "", {.retries = 0}, S3Credentials{"wrong", "credentials"});
  auto outcome = refused->DeleteMany({"p/a", "p/b"});
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->deleted.empty());
  ASSERT_EQ(outcome->failed.size(), 2u);
  EXPECT_EQ(outcome->failed[0].first, "p/a");
  EXPECT_NE(outcome->failed[0].second.find("403"), std::string::npos) << outcome->failed[0].second;
  EXPECT_EQ(GetOrDie("p/a"), "x");
}

TEST_F(S3ClientTest, PutFileStreamsAndRangesReadBack) {
  testing::TempDir dir;
  std::string data = testing::RandomBytes(6 << 20, 42);
  std::string path = dir.path() + "/pack";
  std::ofstream(path, std::ios::binary) << data;
  ASSERT_TRUE(client_->PutFile("packs/p1", path).ok());
  EXPECT_EQ(GetOrDie("packs/p1"), data);
  auto range = client_->GetRange("packs/p1", 3 << 20, 100000);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range, data.substr(3 << 20, 100000));
  Status missing = client_->PutFile("packs/p2", dir.path() + "/nothing");
  EXPECT_EQ(missing.code(), Status::Code::kIOError);
  EXPECT_NE(missing.message().find("/nothing"), std::string::npos) << missing.ToString();
}

TEST_F(S3ClientTest, ListReadsEveryPage) {
  S3Options small_pages;
  small_pages.list_page_size = 7;
  auto client = Connect(bucket_, "", small_pages);
  for (int i = 0; i < 30; i++) ASSERT_TRUE(client->Put("list/k" + std::to_string(100 + i), std::string(i, 'x')).ok());
  ASSERT_TRUE(client->Put("other/x", "x").ok());
  ASSERT_TRUE(client->Put("lis", "x").ok());

  auto listed = client->List("list/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 30u);
  for (int i = 0; i < 30; i++) {
    EXPECT_EQ((*listed)[i].key, "list/k" + std::to_string(100 + i));
    EXPECT_EQ((*listed)[i].size, static_cast<uint64_t>(i));
    EXPECT_FALSE((*listed)[i].etag.empty());
    EXPECT_EQ((*listed)[i].etag.find('"'), std::string::npos);
  }
  EXPECT_EQ(client->List("")->size(), 32u);
  EXPECT_EQ(client->List("nothing/")->size(), 0u);
}

TEST_F(S3ClientTest, ListPastTheServersPageOf1000) {
  constexpr int kKeys = 1003;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kKeys; i += 8) {
        if (!client_->Put("many/" + std::to_string(10000 + i), "").ok()) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  auto listed = client_->List("many/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(listed->back().key, "many/" + std::to_string(10000 + kKeys - 1));
}

TEST_F(S3ClientTest, PrefixIsHiddenFromKeys) {
  auto scoped = Connect(bucket_, "team/store");
  ASSERT_TRUE(scoped->Put("refs/main", "r").ok());
  EXPECT_EQ(GetOrDie("team/store/refs/main"), "r");
  auto listed = scoped->List("");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].key, "refs/main");
  EXPECT_EQ(scoped->location().Url(), "s3://" + bucket_ + "/team/store");
}

TEST_F(S3ClientTest, OddKeyNamesRoundTrip) {
  const std::vector<std::string> keys = {
      "odd/a b+c%d&e=f?g#h~i'j(k)l*m!n$o,p;q:r@s",
      "odd/\xc3\xbcn\xc3\xaf/\xc3\xa7\xc3\xb8\x64\xc3\xa9",  // "ünï/çødé"
      "odd/<x>&amp;\"quoted\"",
      "odd/%2F-not-a-slash",
      "odd/trailing-space ",
  };
  for (const auto& key : keys) ASSERT_TRUE(client_->Put(key, key).ok()) << key;
  for (const auto& key : keys) EXPECT_EQ(GetOrDie(key), key);
  auto listed = client_->List("odd/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::set<std::string> names;
  for (const auto& o : *listed) names.insert(o.key);
  EXPECT_EQ(names, std::set<std::string>(keys.begin(), keys.end()));
  // A prefix that needs encoding in the query string.
  auto some = client_->List("odd/a b+c");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(some->size(), 1u);
}

TEST_F(S3ClientTest, CreateIfAbsentWinsOnce) {
  auto first = client_->PutIf("refs/main", "one", std::nullopt);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, S3PutOutcome::kWritten);
  auto second = client_->PutIf("refs/main", "two", std::nullopt);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, S3PutOutcome::kPreconditionFailed);
  EXPECT_EQ(GetOrDie("refs/main"), "one");
}

TEST_F(S3ClientTest, IfMatchNeedsTheCurrentEtag) {
  ASSERT_TRUE(client_->Put("refs/main", "v1").ok());
  std::string v1 = (*client_->Get("refs/main"))->etag;
  auto won = client_->PutIf("refs/main", "v2", v1);
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  EXPECT_EQ(*won, S3PutOutcome::kWritten);
  auto stale = client_->PutIf("refs/main", "v3", v1);
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  EXPECT_EQ(*stale, S3PutOutcome::kPreconditionFailed);
  EXPECT_EQ(GetOrDie("refs/main"), "v2");
  auto absent = client_->PutIf("refs/none", "v", v1);
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(*absent, S3PutOutcome::kPreconditionFailed);
  // The probe cleaned up after itself.
  EXPECT_EQ(client_->List(".probe/")->size(), 0u);
}

TEST_F(S3ClientTest, RacingIfMatchHasOneWinner) {
  constexpr int kThreads = 6;
  ASSERT_TRUE(client_->Put("refs/race", "start").ok());
  for (int round = 0; round < 5; round++) {
    std::string etag = (*client_->Get("refs/race"))->etag;
    std::vector<Result<S3PutOutcome>> outcomes(kThreads, Status::Unavailable("not run"));
    std::vector<std::thread> threads;
    auto value = [round](int t) { return "round " + std::to_string(round) + " thread " + std::to_string(t); };
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, t] { outcomes[t] = client_->PutIf("refs/race", value(t), etag); });
    }
    for (auto& t : threads) t.join();
    std::string now = GetOrDie("refs/race");
    // A loser may hear 500 instead of 412 (RGW): "unknown" means re-read, and
    // the re-read shows whether this thread's value is the one that stuck.
    int winners = 0;
    for (int t = 0; t < kThreads; t++) {
      ASSERT_TRUE(outcomes[t].ok()) << outcomes[t].status().ToString();
      bool stuck = now == value(t);
      switch (*outcomes[t]) {
        case S3PutOutcome::kWritten:
          EXPECT_TRUE(stuck) << "thread " << t << " was told it won, but the object holds " << now;
          winners++;
          break;
        case S3PutOutcome::kPreconditionFailed:
          EXPECT_FALSE(stuck) << "thread " << t << " was told it lost, but its value stuck";
          break;
        case S3PutOutcome::kUnknown:
          winners += stuck ? 1 : 0;
          break;
      }
    }
    EXPECT_EQ(winners, 1) << "round " << round << ": the object holds " << now;
  }
}

TEST_F(S3ClientTest, WrongCredentialsSayWhy) {
  S3Credentials bad_secret{server_.credentials.access_key, "not-the-secret-at-all"};
  auto client = Connect(bucket_, "", {}, bad_secret);
  auto start = Clock::now();
  Status st = client->Put("x", "y");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "a 403 is not retried";
  EXPECT_EQ(st.code(), Status::Code::kIOError);
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(server_.endpoint + "/" + bucket_ + "/x"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.message().find("not-the-secret-at-all"), std::string::npos) << st.ToString();

  S3Credentials bad_key{"NOSUCHKEY", server_.credentials.secret_key};
  Status st2 = Connect(bucket_, "", {}, bad_key)->Get("x").status();
  EXPECT_NE(st2.message().find("InvalidAccessKeyId"), std::string::npos) << st2.ToString();
  EXPECT_EQ(st2.message().find(server_.credentials.secret_key), std::string::npos) << st2.ToString();
}

TEST_F(S3ClientTest, MissingBucketIsNotAnEmptyStore) {
  auto client = Connect(Unique("strata-none-"), "");
  EXPECT_TRUE(client->Get("refs/main").status().IsNotFound()) << client->Get("refs/main").status().ToString();
  EXPECT_FALSE(client->List("").ok());
  EXPECT_EQ(client_->CreateBucket().code(), Status::Code::kAlreadyExists);
}

// No server needed: nothing listens on the port.
TEST(S3ClientOffline, NobodyListeningIsUnavailableAfterRetries) {
  LocalPort port(false);
  auto location = S3Location::FromUrl("s3://bucket/pre", port.endpoint());
  ASSERT_TRUE(location.ok());
  S3Options options;
  options.retries = 3;
  options.backoff_ms = 100;
  auto client = S3Client::Create(*location, {"key", "secret"}, options);
  ASSERT_TRUE(client.ok());
  auto start = Clock::now();
  Status st = (*client)->Get("refs/main").status();
  auto elapsed = Clock::now() - start;
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find(port.endpoint() + "/bucket/pre/refs/main"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("4 attempts"), std::string::npos) << st.ToString();
  // Backoff 100, 200, 400 ms with jitter down to half.
  EXPECT_GE(elapsed, std::chrono::milliseconds(350));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
  // A conditional write that reached nobody is safe to retry, and unavailable.
  EXPECT_EQ((*client)->PutIf("refs/main", "x", std::nullopt).status().code(), Status::Code::kUnavailable);
}

// A server that takes the connection and never answers.
TEST(S3ClientOffline, SilentServerTimesOut) {
  LocalPort port(true);
  auto location = S3Location::FromUrl("s3://bucket", port.endpoint());
  ASSERT_TRUE(location.ok());
  S3Options options;
  options.request_timeout_ms = 1000;
  options.retries = 1;
  options.backoff_ms = 10;
  auto client = S3Client::Create(*location, {"key", "secret"}, options);
  ASSERT_TRUE(client.ok());
  auto start = Clock::now();
  Status st = (*client)->Head("k").status();
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(1900));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(6));
  // A conditional write whose answer is lost is not retried: unknown.
  start = Clock::now();
  auto outcome = (*client)->PutIf("k", "v", std::nullopt);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(*outcome, S3PutOutcome::kUnknown);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace strata
