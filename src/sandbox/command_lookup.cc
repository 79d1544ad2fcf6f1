#include "sandbox/command_lookup.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "util/unique_fd.h"

namespace strata::sandbox {
namespace {

enum class Probe { kExecutable, kMissing, kNotExecutable, kUnknown };

// What `rel` is below dirfd, resolved as `resolve` says (openat2).
Probe ProbeBelow(int dirfd, const std::string& rel, uint64_t resolve) {
  struct open_how how = {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = resolve;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dirfd, rel.empty() ? "." : rel.c_str(), &how, sizeof(how))));
  if (fd.get() < 0) return errno == ENOENT || errno == ENOTDIR ? Probe::kMissing : Probe::kUnknown;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Probe::kUnknown;
  return S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0 ? Probe::kExecutable : Probe::kNotExecutable;
}

// Below the working tree: `rel` as the sandbox resolves it there.
Probe ProbeInTree(const SandboxSpec& spec, const std::string& rel) {
  UniqueFd root(::open(spec.tree.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return Probe::kUnknown;
  // --root: the tree is the sandbox's "/", so its absolute links lead back
  // into it. --at: a link that leaves the tree leads to the host's view,
  // which is not followed here (EXDEV: unknown).
  const uint64_t resolve = spec.layout == SandboxSpec::Layout::kRoot ? RESOLVE_IN_ROOT : RESOLVE_BENEATH;
  return ProbeBelow(root.get(), rel, resolve | RESOLVE_NO_MAGICLINKS);
}

// `inside`: an absolute, normalised path in the sandbox's view.
Probe ProbeInside(const SandboxSpec& spec, const std::string& inside) {
  for (const char* fresh : {"/dev", "/proc", "/tmp"})
    if (IsWithin(inside, fresh)) return Probe::kUnknown;
  if (spec.layout == SandboxSpec::Layout::kRoot) return ProbeInTree(spec, inside.substr(1));
  if (IsWithin(inside, spec.at)) return ProbeInTree(spec, inside.substr(std::min(inside.size(), spec.at.size() + 1)));
  for (const std::string& h : spec.hide)
    if (IsWithin(inside, h)) return inside == h ? Probe::kNotExecutable : Probe::kMissing;  // an empty tmpfs
  return ProbeBelow(AT_FDCWD, inside, 0);  // the host, read-only
}

// name in the sandbox's view, relative to dir (absolute) unless absolute.
std::string Join(const std::string& dir, std::string name) {
  if (!name.empty() && name.front() == '/') return name;
  while (name.starts_with("./")) name.erase(0, 2);  // "./prog", as a user runs one from the working directory
  if (name.empty()) return dir;
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Paths with "." or ".." components or doubled slashes are not mapped into
// the view here (bwrap tells what they are).
bool Normalised(const std::string& path) {
  if (path.find("//") != std::string::npos) return false;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

CommandLookup LookUpCommand(const SandboxSpec& spec, const std::string& path_var) {
  const std::string& program = spec.command.front();
  const std::string cwd = spec.layout == SandboxSpec::Layout::kRoot ? "/" : spec.at;
  auto answer = [](Probe p) {
    switch (p) {
      case Probe::kMissing: return CommandLookup::kNotFound;
      case Probe::kNotExecutable: return CommandLookup::kNotExecutable;
      default: return CommandLookup::kFound;
    }
  };
  if (program.find('/') != std::string::npos) {
    std::string path = Join(cwd, program);
    if (!Normalised(path)) return CommandLookup::kFound;
    return answer(ProbeInside(spec, path));
  }
  if (program.empty()) return CommandLookup::kNotFound;
  bool seen_not_executable = false;
  size_t start = 0;
  while (true) {
    const size_t colon = path_var.find(':', start);
    std::string dir = path_var.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string path = Join(cwd, dir.empty() ? program : dir + "/" + program);  // "" is the working directory
    if (!Normalised(path)) return CommandLookup::kFound;
    const Probe p = ProbeInside(spec, path);
    if (p == Probe::kExecutable || p == Probe::kUnknown) return CommandLookup::kFound;
    if (p == Probe::kNotExecutable) seen_not_executable = true;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return seen_not_executable ? CommandLookup::kNotExecutable : CommandLookup::kNotFound;
}

int ExitStatusOf(CommandLookup lookup) { return lookup == CommandLookup::kNotExecutable ? 126 : 127; }

}  // namespace strata::sandbox
