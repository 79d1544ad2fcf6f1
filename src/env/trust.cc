#include "env/trust.h"

#include <fcntl.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "env/beneath.h"
#include "env/user_config.h"

namespace strata {
namespace {

std::string Canonical(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

std::string TrustFilePath() { return UserConfigFile("trusted"); }

std::vector<std::string> TrustedEntries() {
  std::vector<std::string> out;
  if (const char* list = std::getenv("STRATA_TRUSTED_DIRS")) {
    std::string all(list);
    size_t start = 0;
    while (start <= all.size()) {
      size_t colon = all.find(':', start);
      std::string entry = all.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!entry.empty()) out.push_back(entry);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  const std::string file = TrustFilePath();
  struct stat st;
  // The list itself must be as private as what it vouches for.
  if (!file.empty() && ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 022) == 0) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
      size_t lead = line.find_first_not_of(" \t");
      if (lead != std::string::npos) out.push_back(line.substr(lead));
    }
  }
  return out;
}

std::string UserName(uid_t uid) {
  struct passwd* pw = ::getpwuid(uid);
  std::string id = "uid " + std::to_string(uid);
  return pw != nullptr && pw->pw_name != nullptr ? id + " (" + pw->pw_name + ")" : id;
}

}  // namespace

bool IsTrustedByUser(const std::string& canonical_path) {
  for (const std::string& entry : TrustedEntries())
    if (entry == "*" || Canonical(entry) == canonical_path) return true;
  return false;
}

Status CheckTrustedDir(int fd, const std::string& shown, std::string_view what, const std::string& trust_root) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError("stat " + shown, errno);
  if (!S_ISDIR(st.st_mode)) return Status::IOError(shown + " is not a directory", ENOTDIR);
  std::string problem;
  if (st.st_uid != ::geteuid())
    problem = "it is owned by " + UserName(st.st_uid) + ", not by the user strata runs as (" + UserName(::geteuid()) + ")";
  else if (st.st_mode & 022)
    problem = std::string("it is writable by ") + ((st.st_mode & 002) ? "others" : "its group");
  if (problem.empty() || IsTrustedByUser(trust_root)) return Status::Ok();
  return Status::IOErrorWithMessage("refusing the " + std::string(what) + " at " + shown + ": " + problem +
                             "; whoever can write it can make strata read and write other files. If you trust it, "
                             "add " + trust_root + " to STRATA_TRUSTED_DIRS or to " + TrustFilePath(),
                         EPERM);
}

}  // namespace strata

namespace strata {

Status CheckTrustedDirInside(const std::string& root, const std::string& rel, std::string_view what) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return Status::IOError("opening " + root, errno);
  const std::string shown = root + "/" + rel;
  STRATA_ASSIGN_OR_RETURN(UniqueFd dir, OpenBeneath(root_fd.get(), rel, O_RDONLY | O_DIRECTORY, 0, shown));
  return CheckTrustedDir(dir.get(), shown, what, root);
}

Status CheckNoLinkInside(const std::string& root, const std::string& rel) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return Status::IOError("opening " + root, errno);
  auto file = OpenBeneath(root_fd.get(), rel, O_PATH, 0, root + "/" + rel);
  if (!file.ok() && file.status().IsNotFound()) return Status::Ok();
  return file.status();
}

}  // namespace strata
