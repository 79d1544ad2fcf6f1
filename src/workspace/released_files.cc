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
  const size_t slash = dir_.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : dir_.substr(0, slash == 0 ? 1 : slash);
  UniqueFd parent_fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  Start(parent_fd.get(), slash == std::string::npos ? dir_ : dir_.substr(slash + 1));
}

ReleasedFiles::ReleasedFiles(int parent_fd, std::string path) : dir_(std::move(path)) {
  const size_t slash = dir_.find_last_of('/');
  Start(parent_fd, slash == std::string::npos ? dir_ : dir_.substr(slash + 1));
}

void ReleasedFiles::Start(int parent_fd, const std::string& name) {
  if (parent_fd >= 0 && (::mkdirat(parent_fd, name.c_str(), 0700) == 0 || errno == EEXIST))
    dir_fd_ = UniqueFd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd_.valid() && parent_fd >= 0)
    std::fprintf(stderr, "strata: %s is not a directory of its own (%s): removed files are deleted in place\n",
                 dir_.c_str(), std::strerror(errno));
  // Leftovers of an earlier instance (a crash, a kill): every name here is garbage.
  const int list_fd = dir_fd_.valid() ? ::dup(dir_fd_.get()) : -1;
  if (DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr) {
    while (const dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") queue_.push_back(std::move(n));
    }
    ::closedir(d);
  } else if (list_fd >= 0) {
    ::close(list_fd);
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

void ReleasedFiles::Release(const std::string& path) { Release(AT_FDCWD, path); }

void ReleasedFiles::Release(int dir_fd, const std::string& name_there) {
  std::string name;
  {
    std::lock_guard lock(mu_);
    name = name_prefix_ + std::to_string(next_name_++);
  }
  if (dir_fd_.valid()) {
    if (::renameat2(dir_fd, name_there.c_str(), dir_fd_.get(), name.c_str(), RENAME_NOREPLACE) == 0) {
      {
        std::lock_guard lock(mu_);
        queue_.push_back(std::move(name));
      }
      work_.notify_one();
      return;
    }
    if (errno == ENOENT) return;  // no data file: the usual case for an inode never written
  }
  ::unlinkat(dir_fd, name_there.c_str(), 0);  // a symlink goes itself, never what it points at
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
    if (::unlinkat(dir_fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT)
      std::fprintf(stderr, "strata: deleting %s/%s: %s\n", dir_.c_str(), name.c_str(), std::strerror(errno));
    lock.lock();
    deleting_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace strata::workspace_internal
