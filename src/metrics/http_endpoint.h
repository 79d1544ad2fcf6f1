// A small HTTP/1.1 server for one page: GET /metrics, the Prometheus text
// exposition of a mount's counters (metrics/exposition.h).
//
// Strict and small on purpose, since it runs inside the daemon of a mount:
// one thread serves one connection at a time, a request is read for at most
// kRequestTimeout and kMaxRequestBytes (a slow or huge one gets 408 or 431 and
// is closed), every reply closes its connection, and only GET and HEAD of
// /metrics (with or without a query string) are served: any other path is
// 404, any other method 405, anything that is not an HTTP/1.x request line 400.
// A scrape costs what `strata stats` does: one copy of the counters, which
// holds the workspace's lock for a moment.
//
// Thread-safety: Bind, Serve and Stop from one thread; render is called on
// the endpoint's own thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "metrics/listen_address.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace strata::metrics {

// What one request line and its headers ask for, and the reply they get.
struct HttpReply {
  int status = 200;
  std::string body;
};
// The reply to the bytes of one request (up to and including the blank line
// that ends its headers); render makes the page when /metrics is asked for.
// Exposed for tests: the server's whole policy is here.
HttpReply AnswerRequest(std::string_view request, const std::function<std::string()>& render);
// The bytes on the wire for reply; a HEAD request gets the headers only.
std::string EncodeReply(const HttpReply& reply, bool head);

class MetricsEndpoint {
 public:
  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr std::chrono::milliseconds kRequestTimeout{2000};

  // Listens on address. IOError naming the address when it cannot (in use:
  // EADDRINUSE; no such local address: EADDRNOTAVAIL).
  static Result<std::unique_ptr<MetricsEndpoint>> Bind(const ListenAddress& address);
  ~MetricsEndpoint() { Stop(); }
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Starts answering on a thread of its own; render makes the page.
  Status Serve(std::function<std::string()> render);
  // Ends the thread after the request it serves; may be called again.
  void Stop();
  uint16_t port() const { return port_; }  // the port bound

 private:
  MetricsEndpoint() = default;
  void Loop();
  void Answer(int fd);

  UniqueFd listen_, stop_;
  uint16_t port_ = 0;
  std::function<std::string()> render_;
  std::thread thread_;
};

}  // namespace strata::metrics
