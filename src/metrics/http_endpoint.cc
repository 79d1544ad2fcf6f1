#include "metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

namespace strata::metrics {

namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Internal Server Error";
  }
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

HttpReply AnswerRequest(std::string_view request, const std::function<std::string()>& render) {
  const size_t eol = request.find("\r\n");
  if (eol == std::string_view::npos) return {400, "bad request\n"};
  const std::string_view line = request.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return {400, "bad request\n"};
  const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return {400, "bad request: HTTP/1.0 or HTTP/1.1 only\n"};
  if (method != "GET" && method != "HEAD") return {405, "only GET and HEAD are served\n"};
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") return {404, "not found: the metrics are at /metrics\n"};
  return {200, render()};
}

std::string EncodeReply(const HttpReply& reply, bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + Reason(reply.status) + "\r\n";
  // The Prometheus text format, version 0.0.4; everything else is plain text too.
  out += reply.status == 200 ? "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                             : "Content-Type: text/plain; charset=utf-8\r\n";
  if (reply.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head) out += reply.body;
  return out;
}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Bind(const ListenAddress& address) {
  std::unique_ptr<MetricsEndpoint> e(new MetricsEndpoint());
  e->listen_ = UniqueFd(::socket(address.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!e->listen_.valid()) return Status::IOError("metrics socket", errno);
  // A daemon restarted at once finds its port in TIME_WAIT: that is no conflict.
  int one = 1;
  ::setsockopt(e->listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(e->listen_.get(), reinterpret_cast<const sockaddr*>(&address.addr), address.size) != 0) {
    const int err = errno;
    if (err == EADDRINUSE)
      return Status::IOErrorWithMessage("--metrics " + address.text +
                                            ": the address is in use (another program "
                                            "listens there: choose another port)",
                                        err);
    return Status::IOError("--metrics " + address.text + ": cannot listen there", err);
  }
  if (::listen(e->listen_.get(), 16) != 0) return Status::IOError("--metrics " + address.text, errno);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::getsockname(e->listen_.get(), reinterpret_cast<sockaddr*>(&bound), &len) == 0)
    e->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                 : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  e->stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
  if (!e->stop_.valid()) return Status::IOError("eventfd", errno);
  return e;
}

Status MetricsEndpoint::Serve(std::function<std::string()> render) {
  if (thread_.joinable()) return Status::Internal("the metrics endpoint serves already");
  render_ = std::move(render);
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void MetricsEndpoint::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof(one));
  thread_.join();
}

void MetricsEndpoint::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents & POLLIN) return;
    UniqueFd c(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (c.valid()) Answer(c.get());
  }
}

void MetricsEndpoint::Answer(int fd) {
  // The timeouts bound what one client can hold the thread for, reading and writing.
  timeval tv{kRequestTimeout.count() / 1000, static_cast<suseconds_t>(kRequestTimeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const auto deadline = std::chrono::steady_clock::now() + kRequestTimeout;
  std::string request;
  char buf[1024];
  HttpReply reply;
  for (;;) {
    if (request.find("\r\n\r\n") != std::string::npos) {
      reply = AnswerRequest(request, render_);
      break;
    }
    if (request.size() > kMaxRequestBytes) {
      reply = {431, "request too large\n"};
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      reply = {408, "request timeout\n"};
      break;
    }
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      reply = {408, "request timeout\n"};
      break;
    }
    if (n <= 0) return;  // the client went away before its request was complete
    request.append(buf, static_cast<size_t>(n));
  }
  (void)SendAll(fd, EncodeReply(reply, request.rfind("HEAD ", 0) == 0));
}

}  // namespace strata::metrics
