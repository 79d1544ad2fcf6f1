#include "workspace/space_reserve.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <mutex>

namespace strata::workspace_internal {
namespace {

std::mutex probe_mu;
std::function<uint64_t(const std::string&)>& Probe() {
  static std::function<uint64_t(const std::string&)> probe;  // GUARDED_BY(probe_mu)
  return probe;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

SpaceReserve::SpaceReserve(std::string path) : path_(std::move(path)), dir_(DirectoryOf(path_)) {}

void SpaceReserve::SetProbeForTesting(std::function<uint64_t(const std::string& dir)> probe) {
  std::lock_guard lock(probe_mu);
  Probe() = std::move(probe);
}

uint64_t SpaceReserve::Available() const {
  {
    std::lock_guard lock(probe_mu);
    if (Probe()) return Probe()(dir_);
  }
  struct statvfs st;
  // Cannot tell: behave as if there were room (the kernel still says ENOSPC).
  if (::statvfs(dir_.c_str(), &st) != 0) return std::numeric_limits<uint64_t>::max();
  // f_bavail also for root: f_bfree counts blocks that not even root can
  // allocate (ext4 keeps 2 % of the disk, at most 4096 clusters, for its own
  // use: 4 MiB of a 200 MiB disk), so a disk where every write already fails
  // looked as if it had room, and the reserve was never released. Leaving
  // the blocks kept for root untouched is also what a mount must do for the
  // users it writes for.
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

bool SpaceReserve::Take() {
  if (held_) return true;
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  // Real blocks, not a sparse file: a hole would free nothing when released.
  held_ = ::posix_fallocate(fd, 0, static_cast<off_t>(kBytes)) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!held_) ::unlink(path_.c_str());
  return held_;
}

bool SpaceReserve::Release() {
  if (!held_) return false;
  held_ = false;
  return ::unlink(path_.c_str()) == 0;
}

bool SpaceReserve::MakeRoomForCommit() {
  if (!held_ || Available() >= kBytes) return false;
  return Release();
}

Status SpaceReserve::RoomForData(uint64_t n) {
  if (held_) return Status::Ok();
  const uint64_t available = Available();
  if (available >= 2 * kBytes + n && Take()) return Status::Ok();
  if (available >= kBytes && available - kBytes >= n) return Status::Ok();
  return Status::IOError("no space left: the last " + std::to_string(kBytes >> 20) +
                             " MiB of the disk are kept for the workspace's database",
                         ENOSPC);
}

void SpaceReserve::Replenish() {
  if (!held_ && Available() >= 2 * kBytes) (void)Take();
}

}  // namespace strata::workspace_internal
