// S3Location::FromUrl and S3Credentials::FromEnvironment: turning what a user
// typed or exported into a place and a key pair, with messages that say what
// to fix.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>

#include "remote/s3_client.h"
#include "util/hex.h"
#include "util/unique_fd.h"

namespace strata {
namespace {

// A credentials file holds a few profiles: far less than this.
constexpr off_t kMaxCredentialsFile = 64 * 1024;

bool ValidBucketName(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : b) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return alnum(b.front()) && alnum(b.back());
}

bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// For messages: a value as typed, with control characters shown as \xNN so
// that a newline in it cannot start a line of its own.
std::string Printable(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      AppendHexByte(&out, u);
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

Result<S3Location> S3Location::FromUrl(std::string_view url, std::string endpoint) {
  constexpr std::string_view kScheme = "s3://";
  if (HasControl(url)) return Status::InvalidArgument("the S3 URL " + Printable(url) + " holds a control character");
  if (!url.starts_with(kScheme)) {
    return Status::InvalidArgument("not an S3 URL (expected s3://BUCKET[/PREFIX]): " + std::string(url));
  }
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  size_t slash = rest.find('/');
  S3Location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) location.prefix = std::string(rest.substr(slash + 1));
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  location.endpoint = std::move(endpoint);
  if (Status s = location.Validate(); !s.ok()) return s.WithContext(std::string(url));
  return location;
}

Status S3Location::Validate() const {
  if (!ValidBucketName(bucket)) {
    return Status::InvalidArgument("bad bucket name '" + Printable(bucket) +
                                   "': 3 to 63 of a-z 0-9 . -, starting and ending with a letter or digit");
  }
  // Every segment becomes part of each key: "." and ".." would be resolved
  // by the server (or not) and send objects somewhere else than listings
  // look, and an empty one is a different key from the one without it.
  if (HasControl(prefix)) return Status::InvalidArgument("bad prefix " + Printable(prefix) + ": control character");
  if (!prefix.empty()) {
    if (prefix.size() > 512) return Status::InvalidArgument("bad prefix: longer than 512 bytes");
    for (size_t start = 0;;) {
      size_t end = prefix.find('/', start);
      std::string_view segment = std::string_view(prefix).substr(start, end == std::string::npos ? end : end - start);
      if (segment.empty() || segment == "." || segment == "..")
        return Status::InvalidArgument("bad prefix '" + prefix + "': empty, '.' or '..' path segment");
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  size_t host = endpoint.find("://");
  bool http = endpoint.starts_with("http://") || endpoint.starts_with("https://");
  bool clean = std::all_of(endpoint.begin(), endpoint.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == ':' || c == '/' || c == '[' || c == ']' || c == '_';
  });
  if (!http || !clean || endpoint.size() == host + 3 || endpoint.find('/', host + 3) != std::string::npos) {
    return Status::InvalidArgument("bad S3 endpoint " + Printable(endpoint) +
                                   ": expected http(s)://HOST[:PORT] without a path");
  }
  // The region is part of every signature and of CreateBucket's body.
  bool region_ok = !region.empty() && region.size() <= 32 && std::all_of(region.begin(), region.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!region_ok) return Status::InvalidArgument("bad S3 region " + Printable(region) + ": 1 to 32 of a-z 0-9 -");
  return Status::Ok();
}

std::string S3Location::Url() const {
  return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix);
}

Result<S3Credentials> S3Credentials::FromEnvironment() {
  S3Credentials credentials{Env("AWS_ACCESS_KEY_ID"), Env("AWS_SECRET_ACCESS_KEY")};
  if (!credentials.access_key.empty() && !credentials.secret_key.empty()) return credentials;
  if (!credentials.access_key.empty() || !credentials.secret_key.empty()) {
    return Status::NotFound(
        "S3 credentials: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (only one of them is set)");
  }

  std::string path = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (path.empty()) path = Env("HOME") + "/.aws/credentials";
  std::string profile = Env("AWS_PROFILE");
  if (profile.empty()) profile = "default";
  const std::string help = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_access_key_id and "
                           "aws_secret_access_key in profile [" + profile + "] of " + path;
  // Read with a bound, and only from a regular file: a device (/dev/zero)
  // would grow memory without end and a FIFO would block the command.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status::NotFound("no S3 credentials: " + help);
    return Status::IOError("S3 credentials: opening " + path, errno);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IOError("S3 credentials: stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("S3 credentials: " + path + " is not a regular file");
  if (st.st_size > kMaxCredentialsFile)
    return Status::InvalidArgument("S3 credentials: " + path + " is larger than " +
                                   std::to_string(kMaxCredentialsFile / 1024) + " KiB");
  std::string text;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("S3 credentials: reading " + path, errno);
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxCredentialsFile)  // it grew after the stat
      return Status::InvalidArgument("S3 credentials: " + path + " is larger than " +
                                     std::to_string(kMaxCredentialsFile / 1024) + " KiB");
  }
  std::istringstream in(text);

  // An INI file; "[profile NAME]" (the config file's spelling) is accepted too.
  bool in_profile = false;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = Trim(line);
    if (l.empty() || l.front() == '#' || l.front() == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      std::string_view name = Trim(l.substr(1, l.size() - 2));
      if (name.starts_with("profile ")) name = Trim(name.substr(8));
      in_profile = name == profile;
      continue;
    }
    size_t eq = l.find('=');
    if (!in_profile || eq == std::string_view::npos) continue;
    std::string_view key = Trim(l.substr(0, eq));
    std::string_view value = Trim(l.substr(eq + 1));
    if (key == "aws_access_key_id") credentials.access_key = std::string(value);
    if (key == "aws_secret_access_key") credentials.secret_key = std::string(value);
  }
  if (credentials.access_key.empty() || credentials.secret_key.empty()) {
    return Status::NotFound("no S3 credentials: " + help);
  }
  return credentials;
}

}  // namespace strata
