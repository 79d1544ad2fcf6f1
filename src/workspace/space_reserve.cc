#include "workspace/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

namespace strata::workspace_internal {

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

}  // namespace strata::workspace_internal
