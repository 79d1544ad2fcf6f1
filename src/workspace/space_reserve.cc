#include "workspace/space_reserve.h"

#include <algorithm>
#include <cerrno>
#include <limits>

namespace strata::workspace_internal {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string NameOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Real blocks, not a sparse file: a hole would free nothing when released.
// Where the filesystem cannot allocate without writing, zeros are written.
Status Fill(RandomRWFile& file, uint64_t bytes) {
  Status s = file.Allocate(0, bytes);
  if (s.ok() || s.errno_value() != EOPNOTSUPP) return s;
  const std::string zeros(1 << 20, '\0');
  for (uint64_t pos = 0; pos < bytes; pos += zeros.size())
    STRATA_RETURN_IF_ERROR(file.WriteAt(pos, std::string_view(zeros).substr(0, std::min<uint64_t>(zeros.size(), bytes - pos))));
  return Status::Ok();
}

}  // namespace

SpaceReserve::SpaceReserve(Env* env, std::string path)
    : env_(env), path_(std::move(path)), dir_(DirectoryOf(path_)), name_(NameOf(path_)) {}

uint64_t SpaceReserve::Available() const {
  auto free = env_->FreeSpace(dir_);
  // Cannot tell: behave as if there were room (the kernel still says ENOSPC).
  // f_bavail also for root: f_bfree counts blocks that not even root can
  // allocate (ext4 keeps 2 % of the disk, at most 4096 clusters, for its own
  // use: 4 MiB of a 200 MiB disk), so a disk where every write already fails
  // looked as if it had room, and the reserve was never released. Leaving
  // the blocks kept for root untouched is also what a mount must do for the
  // users it writes for.
  return free.ok() ? *free : std::numeric_limits<uint64_t>::max();
}

bool SpaceReserve::Take() {
  if (held_) return true;
  auto dir = env_->OpenDirectory(dir_);
  if (!dir.ok()) return false;
  auto file = (*dir)->OpenFile(name_, true);
  if (!file.ok()) return false;
  held_ = Fill(**file, kBytes).ok() && (*file)->Sync().ok();
  file->reset();
  if (!held_) (void)(*dir)->Remove(name_);
  return held_;
}

bool SpaceReserve::Release() {
  if (!held_) return false;
  held_ = false;
  auto dir = env_->OpenDirectory(dir_);
  return dir.ok() && (*dir)->Remove(name_).ok();
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
