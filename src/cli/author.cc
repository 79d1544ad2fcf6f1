#include "cli/author.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "env/user_config.h"

namespace strata::cli {
namespace {

std::string_view Trim(std::string_view s) {
  const char* space = " \t\r";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

// "" when value can stand in "Name <email>"; else why not.
std::string ValueProblem(std::string_view value) {
  if (value.empty()) return "an empty value";
  for (char c : value) {
    if (c == '<' || c == '>') return "'<' or '>' in the value (strata adds the brackets around the email)";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a control character in the value";
  }
  return "";
}

std::string LoginName() {
  if (struct passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) return pw->pw_name;
  return "unknown";
}

std::string HostName() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  return host;
}

Result<AuthorConfig> ReadConfigFile() {
  const std::string path = UserConfigFile("config");
  if (path.empty()) return AuthorConfig{};
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return AuthorConfig{};
    return Status::IOError("reading the config file " + path, errno);
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("the config file " + path + " is not a regular file");
  std::ifstream in(path);
  if (!in) return Status::IOError("reading the config file " + path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseAuthorConfig(text.str(), path);
}

// The environment's value for one field, checked as the file's are.
Result<std::string> FromEnvironment(const char* variable) {
  const char* v = std::getenv(variable);
  if (v == nullptr || *v == '\0') return std::string();
  if (std::string problem = ValueProblem(v); !problem.empty())
    return Status::InvalidArgument(std::string(variable) + " has " + problem);
  return std::string(v);
}

}  // namespace

Result<AuthorConfig> ParseAuthorConfig(std::string_view text, const std::string& shown) {
  AuthorConfig out;
  bool seen_name = false, seen_email = false;
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    number++;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = shown + ":" + std::to_string(number) + ": ";
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      return Status::InvalidArgument(where + "expected 'name = ...' or 'email = ...', found '" + std::string(line) +
                                     "'");
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    bool* seen = key == "name" ? &seen_name : key == "email" ? &seen_email : nullptr;
    if (seen == nullptr)
      return Status::InvalidArgument(where + "unknown key '" + std::string(key) + "' (the keys are name and email)");
    if (*seen) return Status::InvalidArgument(where + "'" + std::string(key) + "' is given a second time");
    if (std::string problem = ValueProblem(value); !problem.empty())
      return Status::InvalidArgument(where + "'" + std::string(key) + "' has " + problem);
    *seen = true;
    (key == "name" ? out.name : out.email) = std::string(value);
  }
  return out;
}

Result<std::string> CommitAuthor() {
  STRATA_ASSIGN_OR_RETURN(std::string name, FromEnvironment("STRATA_AUTHOR_NAME"));
  STRATA_ASSIGN_OR_RETURN(std::string email, FromEnvironment("STRATA_AUTHOR_EMAIL"));
  if (name.empty() || email.empty()) {
    STRATA_ASSIGN_OR_RETURN(AuthorConfig file, ReadConfigFile());
    if (name.empty()) name = file.name;
    if (email.empty()) email = file.email;
  }
  const std::string login = LoginName();
  const std::string fallback_email = login + "@" + HostName();
  if (name.empty() && email.empty()) return fallback_email;
  return (name.empty() ? login : name) + " <" + (email.empty() ? fallback_email : email) + ">";
}

}  // namespace strata::cli
