#include "metrics/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace strata::metrics {

namespace {

Status Bad(const std::string& text, const std::string& why) {
  return Status::InvalidArgument("--metrics '" + text + "': " + why + " (expected HOST:PORT, such as 127.0.0.1:9567)");
}

}  // namespace

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return Bad(text, "no port");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
    return Bad(text, "the port must be a number from 1 to 65535");
  if (host.empty()) return Bad(text, "no host");

  ListenAddress out;
  out.text = text;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return Bad(text, "an IPv6 address goes in brackets, as [::1]");
    host = host.substr(1, host.size() - 2);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET6, host.c_str(), &a.sin6_addr) != 1) return Bad(text, "'" + host + "' is no IPv6 address");
    if (!IN6_IS_ADDR_LOOPBACK(&a.sin6_addr))
      return Bad(text, "only the loopback address [::1] is served (the endpoint has no authentication)");
    std::memcpy(&out.addr, &a, sizeof(a));
    out.size = sizeof(a);
    return out;
  }
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  // inet_pton, not inet_aton: "127.1" and "0x7f.1" are not addresses a user means.
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    return Bad(text, "'" + host + "' is no IPv4 address (host names other than localhost are not looked up)");
  if ((ntohl(a.sin_addr.s_addr) >> 24) != 127)
    return Bad(text,
               "only loopback addresses (127.0.0.0/8, [::1], localhost) are served (the endpoint has no "
               "authentication)");
  std::memcpy(&out.addr, &a, sizeof(a));
  out.size = sizeof(a);
  return out;
}

}  // namespace strata::metrics
