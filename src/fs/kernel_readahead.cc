// The kernel's read-ahead for a FUSE mount lives in the mount's backing
// device info (bdi), which starts at the kernel's default of 128 KiB; the
// max_readahead a daemon answers at init can only lower it. So the daemon
// raises it itself, by writing the mount's /sys/class/bdi/<dev>/read_ahead_kb.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "fs/fs_context.h"

namespace strata::fs {
namespace {

// Undoes /proc's octal escapes (space, tab, newline, backslash) in a path.
std::string UnescapeMountPath(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); i++) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out.push_back(static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

// "major:minor" of the file system mounted last at mountpoint, from mountinfo
// (no request to the file system, which may not be serving yet).
std::string MountDevice(const std::string& mountpoint) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    if (UnescapeMountPath(point) == mountpoint) found = dev;
  }
  return found;
}

}  // namespace

Status SetKernelReadAhead(const std::string& mountpoint, uint64_t kib) {
  const std::string dev = MountDevice(mountpoint);
  if (dev.empty()) return Status::NotFound("no mount at " + mountpoint + " in /proc/self/mountinfo");
  const std::string path = "/sys/class/bdi/" + dev + "/read_ahead_kb";
  std::ofstream out(path);
  out << kib << "\n";
  out.flush();
  if (!out) return Status::IOError("cannot write " + path + " (only root may)", EACCES);
  return Status::Ok();
}

}  // namespace strata::fs
