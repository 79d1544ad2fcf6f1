#include "sandbox/bwrap_args.h"

namespace strata::sandbox {
namespace {

bool IsAbsolute(const std::string& p) { return !p.empty() && p.front() == '/'; }

}  // namespace

bool IsWithin(const std::string& inner, const std::string& outer) {
  if (outer == "/") return true;
  return inner == outer || (inner.starts_with(outer) && inner[outer.size()] == '/');
}

Result<std::vector<std::string>> BwrapArgs(const SandboxSpec& spec) {
  if (spec.command.empty()) return Status::InvalidArgument("no command to run (give it after --)");
  if (!IsAbsolute(spec.tree)) return Status::InvalidArgument("the working tree must be an absolute path");
  std::vector<std::string> a = {"bwrap"};
  // Every namespace; the user namespace is what lets --uid name another uid
  // without privileges, and a new PID namespace ends every process of the
  // sandbox when its first one ends.
  a.insert(a.end(), {"--unshare-all", "--die-with-parent"});
  if (spec.net) a.push_back("--share-net");
  if (spec.uid) {
    a.insert(a.end(), {"--unshare-user", "--uid", std::to_string(*spec.uid), "--gid", std::to_string(*spec.uid)});
  }
  if (spec.layout == SandboxSpec::Layout::kAt) {
    if (!IsAbsolute(spec.at)) return Status::InvalidArgument("--at needs an absolute directory, not '" + spec.at + "'");
    if (spec.at == "/") return Status::InvalidArgument("--at / would hide the host entirely: use --root");
    a.insert(a.end(), {"--ro-bind", "/", "/"});
    // The host's /dev and /proc belong to the host's namespaces: fresh ones.
    a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
    for (const std::string& h : spec.hide) {
      if (!IsAbsolute(h)) return Status::InvalidArgument("a hidden path must be absolute: " + h);
      if (IsWithin(spec.at, h))
        return Status::InvalidArgument("--at " + spec.at + " lies in " + h + ", which the sandbox does not show");
      a.insert(a.end(), {"--tmpfs", h});
    }
    // Last, so that nothing above covers it (bwrap makes the directory when
    // it is missing, which it can only be under a tmpfs).
    a.insert(a.end(), {"--bind", spec.tree, spec.at, "--chdir", spec.at});
  } else {
    a.insert(a.end(), {"--bind", spec.tree, "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/"});
  }
  a.push_back("--");
  a.insert(a.end(), spec.command.begin(), spec.command.end());
  return a;
}

}  // namespace strata::sandbox
