#include "workspace/released_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace strata::workspace_internal {

ReleasedFiles::ReleasedFiles(std::string dir) : dir_(std::move(dir)) {
  usable_ = ::mkdir(dir_.c_str(), 0700) == 0 || errno == EEXIST;
  // Leftovers of an earlier instance (a crash, a kill): every name here is garbage.
  if (DIR* d = usable_ ? ::opendir(dir_.c_str()) : nullptr) {
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") queue_.push_back(std::move(name));
    }
    ::closedir(d);
  }
  // Names of this instance cannot meet those of an earlier one still queued.
  name_prefix_ = std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + ".";
  thread_ = std::thread([this] { DeleteLoop(); });
}

ReleasedFiles::~ReleasedFiles() {
  Drain();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void ReleasedFiles::Release(const std::string& path) {
  std::string name;
  {
    std::lock_guard lock(mu_);
    name = name_prefix_ + std::to_string(next_name_++);
  }
  if (usable_ && ::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, (dir_ + "/" + name).c_str(), RENAME_NOREPLACE) == 0) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(name));
    }
    work_.notify_one();
    return;
  }
  if (errno == ENOENT) return;  // no data file: the usual case for an inode never written
  ::unlink(path.c_str());
}

bool ReleasedFiles::Drain() {
  std::unique_lock lock(mu_);
  const bool waited = !queue_.empty() || deleting_;
  drained_.wait(lock, [this] { return queue_.empty() && !deleting_; });
  return waited;
}

uint64_t ReleasedFiles::pending() {
  std::lock_guard lock(mu_);
  return queue_.size() + (deleting_ ? 1 : 0);
}

void ReleasedFiles::DeleteLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::string name = std::move(queue_.front());
    queue_.pop_front();
    deleting_ = true;
    lock.unlock();
    const std::string path = dir_ + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      std::fprintf(stderr, "strata: deleting %s: %s\n", path.c_str(), std::strerror(errno));
    lock.lock();
    deleting_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace strata::workspace_internal
