#include "workspace/released_files.h"

#include <chrono>
#include <cstdio>

namespace strata::workspace_internal {

ReleasedFiles::ReleasedFiles(Directory* parent, const std::string& name) : parent_(parent) {
  if (parent_ != nullptr) {
    auto folder = parent_->OpenSubdirectory(name, true);
    if (folder.ok()) {
      folder_ = std::move(folder).value();
    } else {
      std::fprintf(stderr, "strata: %s/%s is not a directory of its own (%s): removed files are deleted in place\n",
                   parent_->path().c_str(), name.c_str(), folder.status().message().c_str());
    }
  }
  // Leftovers of an earlier instance (a crash, a kill): every name here is garbage.
  if (folder_) {
    auto names = folder_->List();
    if (names.ok())
      for (std::string& n : *names) queue_.push_back(std::move(n));
  }
  // Names of this instance cannot meet those of an earlier one still queued.
  name_prefix_ = std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + ".";
  thread_ = std::thread([this] { DeleteLoop(); });
}

ReleasedFiles::~ReleasedFiles() {
  Drain();
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_.NotifyAll();
  thread_.join();
}

void ReleasedFiles::Release(const std::string& name_there) {
  if (parent_ == nullptr) return;
  std::string name;
  {
    MutexLock lock(&mu_);
    name = name_prefix_ + std::to_string(next_name_++);
  }
  if (folder_) {
    Status moved = parent_->MoveTo(name_there, *folder_, name);
    if (moved.ok()) {
      {
        MutexLock lock(&mu_);
        queue_.push_back(std::move(name));
      }
      work_.NotifyOne();
      return;
    }
    if (moved.IsNotFound()) return;  // no data file: the usual case for an inode never written
  }
  (void)parent_->Remove(name_there);  // a symlink goes itself, never what it points at
}

bool ReleasedFiles::Drain() {
  MutexLock lock(&mu_);
  const bool waited = !queue_.empty() || deleting_;
  while (!queue_.empty() || deleting_) drained_.Wait(&mu_);
  return waited;
}

uint64_t ReleasedFiles::pending() {
  MutexLock lock(&mu_);
  return queue_.size() + (deleting_ ? 1 : 0);
}

void ReleasedFiles::DeleteLoop() {
  MutexLock lock(&mu_);
  for (;;) {
    while (!stopping_ && queue_.empty()) work_.Wait(&mu_);
    if (queue_.empty()) return;  // stopping, nothing left
    std::string name = std::move(queue_.front());
    queue_.pop_front();
    deleting_ = true;
    lock.Unlock();
    if (Status s = folder_->Remove(name); !s.ok() && !s.IsNotFound())
      std::fprintf(stderr, "strata: deleting %s\n", s.message().c_str());
    lock.Lock();
    deleting_ = false;
    if (queue_.empty()) drained_.NotifyAll();
  }
}

}  // namespace strata::workspace_internal
