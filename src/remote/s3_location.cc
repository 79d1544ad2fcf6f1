// S3Location::FromUrl and S3Credentials::FromEnvironment: turning what a user
// typed or exported into a place and a key pair, with messages that say what
// to fix.
#include <cstdlib>
#include <fstream>
#include <string>

#include "remote/s3_client.h"

namespace strata {
namespace {

bool ValidBucketName(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : b) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return alnum(b.front()) && alnum(b.back());
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
  if (!url.starts_with(kScheme)) {
    return Status::InvalidArgument("not an S3 URL (expected s3://BUCKET[/PREFIX]): " + std::string(url));
  }
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  size_t slash = rest.find('/');
  S3Location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (!ValidBucketName(location.bucket)) {
    return Status::InvalidArgument("bad bucket name '" + location.bucket + "' in " + std::string(url) +
                                   ": 3 to 63 of a-z 0-9 . -, starting and ending with a letter or digit");
  }
  if (slash != std::string_view::npos) {
    location.prefix = std::string(rest.substr(slash + 1));
    if (location.prefix.empty() || location.prefix.front() == '/' ||
        location.prefix.find("//") != std::string::npos) {
      return Status::InvalidArgument("bad prefix in " + std::string(url) + ": empty path segment");
    }
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  size_t host = endpoint.find("://");
  bool http = endpoint.starts_with("http://") || endpoint.starts_with("https://");
  if (!http || endpoint.size() == host + 3 || endpoint.find('/', host + 3) != std::string::npos) {
    return Status::InvalidArgument("bad S3 endpoint '" + endpoint +
                                   "': expected http(s)://HOST[:PORT] without a path");
  }
  location.endpoint = std::move(endpoint);
  return location;
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
  std::ifstream in(path);
  if (!in) return Status::NotFound("no S3 credentials: " + help);

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
