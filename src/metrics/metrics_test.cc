// The metrics endpoint's parts: which addresses it accepts, what it answers
// to which request (over a real loopback socket too), and the exposition of
// counters (histogram buckets cumulative, label values escaped).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics/exposition.h"
#include "metrics/http_endpoint.h"
#include "metrics/listen_address.h"

namespace strata::metrics {
namespace {

TEST(ListenAddressTest, AcceptsLoopbackOnly) {
  EXPECT_TRUE(ParseListenAddress("127.0.0.1:9567").ok());
  EXPECT_TRUE(ParseListenAddress("127.3.2.1:1").ok());
  EXPECT_TRUE(ParseListenAddress("localhost:65535").ok());
  EXPECT_TRUE(ParseListenAddress("[::1]:9567").ok());
  for (const char* bad : {"0.0.0.0:9567", "10.1.2.3:80", "[::]:9567", "example.com:80"}) {
    auto r = ParseListenAddress(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
  }
}

TEST(ListenAddressTest, RefusesMalformedPortsAndHosts) {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:9x", ":9567",
                          "127.1:9567", "::1:9567", "[::1:9567", "127.0.0.1:-1", "127.0.0.1: 80"}) {
    auto r = ParseListenAddress(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  auto r = ParseListenAddress("127.0.0.1:99999");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("1 to 65535"), std::string::npos) << r.status().message();
}

std::string Page() { return "page\n"; }

TEST(HttpAnswerTest, ServesMetricsOnlyToGetAndHead) {
  EXPECT_EQ(AnswerRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", Page).status, 200);
  EXPECT_EQ(AnswerRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", Page).body, "page\n");
  EXPECT_EQ(AnswerRequest("GET /metrics?x=1 HTTP/1.0\r\n\r\n", Page).status, 200);
  EXPECT_EQ(AnswerRequest("HEAD /metrics HTTP/1.1\r\n\r\n", Page).status, 200);
  EXPECT_EQ(AnswerRequest("GET / HTTP/1.1\r\n\r\n", Page).status, 404);
  EXPECT_EQ(AnswerRequest("GET /metrics/x HTTP/1.1\r\n\r\n", Page).status, 404);
  EXPECT_EQ(AnswerRequest("POST /metrics HTTP/1.1\r\n\r\n", Page).status, 405);
  EXPECT_EQ(AnswerRequest("GET /metrics HTTP/2.0\r\n\r\n", Page).status, 400);
  EXPECT_EQ(AnswerRequest("GET /metrics\r\n\r\n", Page).status, 400);
  EXPECT_EQ(AnswerRequest("GET  /metrics HTTP/1.1\r\n\r\n", Page).status, 400);
  EXPECT_EQ(AnswerRequest("garbage", Page).status, 400);
}

TEST(HttpAnswerTest, HeadGetsHeadersWithoutBody) {
  const std::string get = EncodeReply({200, "abc"}, false), head = EncodeReply({200, "abc"}, true);
  EXPECT_EQ(get.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_NE(get.find("Content-Length: 3\r\n"), std::string::npos);
  EXPECT_NE(get.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_EQ(get.substr(get.size() - 7), "\r\n\r\nabc");
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
  EXPECT_NE(EncodeReply({405, ""}, false).find("Allow: GET, HEAD\r\n"), std::string::npos);
}

// One request over a real connection to the endpoint; the whole reply.
std::string Fetch(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return "connect failed";
  }
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return reply;
}

TEST(MetricsEndpointTest, AnswersOverLoopbackAndRefusesAPortInUse) {
  auto address = ParseListenAddress("127.0.0.1:1");
  ASSERT_TRUE(address.ok());
  // Port 0 is no user's choice, but lets the test take a free port.
  reinterpret_cast<sockaddr_in*>(&address->addr)->sin_port = 0;
  auto endpoint = MetricsEndpoint::Bind(*address);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().message();
  int scrapes = 0;
  ASSERT_TRUE((*endpoint)->Serve([&] { return "scrape " + std::to_string(++scrapes) + "\n"; }).ok());
  const uint16_t port = (*endpoint)->port();
  ASSERT_NE(port, 0);

  std::string reply = Fetch(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("\r\n\r\nscrape 1\n"), std::string::npos) << reply;
  reply = Fetch(port, "GET /other HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 404 ", 0), 0u) << reply;
  reply = Fetch(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(MetricsEndpoint::kMaxRequestBytes, 'a'));
  EXPECT_EQ(reply.rfind("HTTP/1.1 431 ", 0), 0u) << reply;
  reply = Fetch(port, "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_NE(reply.find("scrape 2\n"), std::string::npos) << reply;

  ListenAddress same = *address;
  reinterpret_cast<sockaddr_in*>(&same.addr)->sin_port = htons(port);
  same.text = "127.0.0.1:" + std::to_string(port);
  auto second = MetricsEndpoint::Bind(same);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use"), std::string::npos) << second.status().message();
  (*endpoint)->Stop();
  (*endpoint)->Stop();  // again: nothing
}

TEST(ExpositionTest, HistogramsAreCumulativeWithSumAndCount) {
  MetricsSnapshot s;
  s.workspace = "w\"s";
  ServedCounters::Operation lookup{"lookup", 5, 1, {{1, 2}, {8, 2}, {uint64_t{1} << 23, 1}}, 9'000'000'000};
  s.served.operations.push_back(lookup);
  s.commits.commits = 3;
  s.served.transport = "strata";
  const std::string text = RenderExposition(s);
  EXPECT_NE(text.find("strata_workspace_info{workspace=\"w\\\"s\",read_only=\"false\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("strata_fuse_requests_total{op=\"lookup\"} 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("strata_fuse_request_errors_total{op=\"lookup\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_bucket{op=\"lookup\",le=\"1e-06\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_bucket{op=\"lookup\",le=\"4e-06\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_bucket{op=\"lookup\",le=\"8e-06\"} 4\n"),
            std::string::npos);
  // The slowest bucket holds what no finite bound does.
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_bucket{op=\"lookup\",le=\"4.194304\"} 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_bucket{op=\"lookup\",le=\"+Inf\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_sum{op=\"lookup\"} 9\n"), std::string::npos);
  EXPECT_NE(text.find("strata_fuse_request_duration_seconds_count{op=\"lookup\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("strata_fuse_transport_info{transport=\"strata\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("strata_commits_total{result=\"committed\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE strata_fuse_request_duration_seconds histogram\n"), std::string::npos);
  // Every family is described once.
  EXPECT_EQ(text.find("# TYPE strata_fuse_requests_total"), text.rfind("# TYPE strata_fuse_requests_total"));
}

TEST(CommitTallyTest, CountsOutcomesAndPhases) {
  CommitTally tally;
  CommitOutcome made;
  made.commit = Hash();
  made.stats.cut_ms = 1500;
  made.stats.bytes_hashed = 10;
  tally.Record(made);
  tally.Record(CommitOutcome{});
  tally.RecordFailure();
  const CommitTotals t = tally.Totals();
  EXPECT_EQ(t.commits, 1u);
  EXPECT_EQ(t.empty, 1u);
  EXPECT_EQ(t.failed, 1u);
  EXPECT_DOUBLE_EQ(t.cut_seconds, 1.5);
  EXPECT_EQ(t.bytes_hashed, 10u);
}

}  // namespace
}  // namespace strata::metrics
