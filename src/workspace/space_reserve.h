// SpaceReserve: a few MiB set aside on the workspace's filesystem so that a
// full disk can still be un-filled.
//
// Freeing space in a workspace needs a database commit first: a deleted
// file's data goes only after the batch that forgets it has committed (a
// crash must not leave a name without its data). On a full disk that commit
// has no room to grow the write-ahead log, so nothing could ever be freed.
// The reserve is a preallocated file; when a commit fails, it is released and
// the commit retried, which frees what the batch deleted; the reserve is
// taken again once there is room.
//
// Thread-safety: none; the workspace calls it under its lock.
#pragma once

#include <cstdint>
#include <string>

namespace strata::workspace_internal {

class SpaceReserve {
 public:
  static constexpr uint64_t kBytes = 4ull << 20;
  explicit SpaceReserve(std::string path) : path_(std::move(path)) {}

  // Allocates the reserve if it is not held; best effort (false: no room yet).
  bool Take();
  // Deletes the reserve; false if none was held.
  bool Release();
  bool held() const { return held_; }

 private:
  const std::string path_;
  bool held_ = false;
};

}  // namespace strata::workspace_internal
