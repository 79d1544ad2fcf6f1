#include "daemon/mount_source.h"

#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace strata::daemon {
namespace {
constexpr std::string_view kPrefix = "strata";
bool IsOctal(char c) { return c >= '0' && c <= '7'; }
}  // namespace

std::string FormatMountSource(const MountSource& source) {
  std::string out(kPrefix);
  if (!source.remote.empty()) out += "+" + source.remote;
  out += ":" + source.workspace;
  if (!source.store.empty()) out += ":" + source.store;
  return out;
}

std::optional<MountSource> ParseMountSource(std::string_view text) {
  if (!text.starts_with(kPrefix)) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  MountSource out;
  if (colon > 0) {
    if (text[0] != '+' || colon == 1) return std::nullopt;
    out.remote = std::string(text.substr(1, colon - 1));
  }
  text.remove_prefix(colon + 1);
  const size_t next = text.find(':');
  out.workspace = std::string(text.substr(0, next));
  if (out.workspace.empty()) return std::nullopt;
  if (next != std::string_view::npos) {
    out.store = std::string(text.substr(next + 1));
    if (!out.store.starts_with('/')) return std::nullopt;
  }
  return out;
}

std::string UnescapeMountField(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); i++) {
    if (field[i] == '\\' && i + 3 < field.size() && IsOctal(field[i + 1]) && IsOctal(field[i + 2]) &&
        IsOctal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

std::optional<std::string> StrataMountSource(const std::string& path) {
  std::ifstream in("/proc/mounts");
  std::string fsname, dir, type, rest;
  std::optional<std::string> found;
  // The last mount listed at path is the one on top, the one path reaches.
  while (in >> fsname >> dir >> type && std::getline(in, rest)) {
    if (type == "fuse.strata" && UnescapeMountField(dir) == path) found = UnescapeMountField(fsname);
  }
  return found;
}

namespace {

// path made absolute and canonical; "" when it cannot even be made absolute.
std::string CanonicalOrAsWritten(const std::string& path) {
  std::error_code ec;
  std::string canonical = std::filesystem::canonical(path, ec).string();
  if (!ec) return canonical;
  // A mount whose daemon has stopped answers ENOTCONN to the stat that
  // canonical() makes: it is still found by its path as written.
  canonical = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) return "";
  if (canonical.size() > 1 && canonical.back() == '/') canonical.pop_back();
  return canonical;
}

// Whether dir is path or one of the directories above it.
bool DirectoryHolds(const std::string& dir, const std::string& path) {
  if (dir == "/") return true;
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

}  // namespace

std::optional<MountSource> MountSourceOf(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::string canonical = CanonicalOrAsWritten(path);
  if (canonical.empty()) return std::nullopt;
  auto text = StrataMountSource(canonical);
  return text ? ParseMountSource(*text) : std::nullopt;
}

std::optional<EnclosingMount> EnclosingMountIn(std::istream& mount_table, const std::string& canonical_path) {
  std::string fsname, dir, type, rest;
  std::string best_dir, best_type, best_source;
  // Of the mounts at one mountpoint, the last listed is on top: it wins ties.
  while (mount_table >> fsname >> dir >> type && std::getline(mount_table, rest)) {
    std::string mountpoint = UnescapeMountField(dir);
    if (!DirectoryHolds(mountpoint, canonical_path) || mountpoint.size() < best_dir.size()) continue;
    best_dir = std::move(mountpoint);
    best_type = type;
    best_source = UnescapeMountField(fsname);
  }
  if (best_type != "fuse.strata") return std::nullopt;
  auto source = ParseMountSource(best_source);
  if (!source) return std::nullopt;
  return EnclosingMount{best_dir, std::move(*source)};
}

std::optional<EnclosingMount> EnclosingStrataMount(const std::string& path) {
  if (path.empty()) return std::nullopt;
  const std::string canonical = CanonicalOrAsWritten(path);
  if (canonical.empty()) return std::nullopt;
  std::ifstream in("/proc/mounts");
  return EnclosingMountIn(in, canonical);
}

// statfs is never served from a cache, unlike stat: it reaches the daemon, or
// the kernel answers ENOTCONN once the daemon's connection is aborted. A
// daemon that was killed and whose process is still exiting answers nothing,
// so the statfs waits until the process has closed its /dev/fuse, and then
// fails with ECONNABORTED: the answer is "dead" or "alive", never "not yet"
// (a check of ENOTCONN alone took a daemon killed an instant before for a
// live one).
bool IsDeadMount(const std::string& path) {
  struct statfs st;
  int rc;
  while ((rc = ::statfs(path.c_str(), &st)) != 0 && errno == EINTR) {
  }
  return rc != 0 && (errno == ENOTCONN || errno == ECONNABORTED);
}

namespace {

// fusermount3 says why on its stderr, which is the user's; the exit status
// alone cannot tell busy from anything else, so the message guesses the
// usual cause.
Status RunFusermount(const std::string& mountpoint, bool lazy) {
  pid_t pid = ::fork();
  if (pid < 0) return Status::IOError("fork for fusermount3", errno);
  if (pid == 0) {
    if (lazy)
      ::execlp("fusermount3", "fusermount3", "-u", "-z", "-q", mountpoint.c_str(), static_cast<char*>(nullptr));
    else
      ::execlp("fusermount3", "fusermount3", "-u", "-q", mountpoint.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  return Status::IOError("cannot unmount " + mountpoint + " (busy? see fusermount3)", EBUSY);
}

}  // namespace

Status UnmountFuse(const std::string& mountpoint, bool lazy) {
  if (::geteuid() != 0) return RunFusermount(mountpoint, lazy);
  // NOFOLLOW as fusermount3 does: a link put in the mount's place is not
  // followed to some other mount.
  if (::umount2(mountpoint.c_str(), (lazy ? MNT_DETACH : 0) | UMOUNT_NOFOLLOW) == 0) return Status::Ok();
  const int err = errno;
  switch (err) {
    case EPERM:  // root of a user namespace that does not own this mount
      return RunFusermount(mountpoint, lazy);
    case EBUSY:
      return Status::IOError("cannot unmount " + mountpoint + " (a process has a file open there or works inside)",
                             EBUSY);
    case EINVAL:
      return Status::IOError("cannot unmount " + mountpoint + " (not a mountpoint)", EINVAL);
    default:
      return Status::IOError("cannot unmount " + mountpoint, err);
  }
}

}  // namespace strata::daemon
