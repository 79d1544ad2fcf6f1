// Where a mount's metrics endpoint listens (`strata mount --metrics HOST:PORT`).
//
// Only loopback addresses are accepted: 127.0.0.0/8, ::1 and "localhost".
// The metrics name the workspace and show how busy it is, and the endpoint
// has no authentication of its own, so it is not offered to the network; a
// Prometheus on another machine reaches it through whatever already guards
// access to this one (an SSH tunnel, a reverse proxy, an exporter agent).
// docs/metrics.md says the same for users.
// Thread-safety: pure functions of their arguments.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "util/status.h"

namespace strata::metrics {

struct ListenAddress {
  sockaddr_storage addr{};
  socklen_t size = 0;
  std::string text;  // as given ("127.0.0.1:9567", "[::1]:9567")
};

// "HOST:PORT" with HOST an IPv4 literal, "[IPv6]" or "localhost", PORT
// 1-65535. InvalidArgument saying what is wrong otherwise, and for an address
// that is not a loopback one.
Result<ListenAddress> ParseListenAddress(const std::string& text);

}  // namespace strata::metrics
