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

std::string ReleasedFiles::NewName() { return name_prefix_ + std::to_string(next_name_++); }

bool ReleasedFiles::MoveAside(const std::string& name_there, const std::string& name) {
  if (folder_) {
    Status moved = parent_->MoveTo(name_there, *folder_, name);
    if (moved.ok()) return true;
    if (moved.IsNotFound()) return false;  // no such file: the usual case for an inode never written
  }
  (void)parent_->Remove(name_there);  // a symlink goes itself, never what it points at
  return false;
}

void ReleasedFiles::Release(const std::string& name_there) {
  if (parent_ == nullptr) return;
  std::string name;
  {
    MutexLock lock(&mu_);
    later_names_.erase(name_there);  // released now rather than later
    name = NewName();
  }
  if (!MoveAside(name_there, name)) return;
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(name));
  }
  work_.NotifyOne();
}

void ReleasedFiles::ReleaseLater(const std::string& name_there) {
  if (parent_ == nullptr) return;
  {
    MutexLock lock(&mu_);
    if (!later_names_.insert(name_there).second) return;
    later_.push_back(name_there);
  }
  work_.NotifyOne();
}

void ReleasedFiles::Claim(const std::string& name_there) {
  if (parent_ == nullptr) return;
  MutexLock lock(&mu_);
  if (later_names_.erase(name_there) == 0) return;
  // Moved under mu_, as the thread moves these: once Claim returns, no
  // thread still moves a file of that name.
  std::string name = NewName();
  if (MoveAside(name_there, name)) queue_.push_back(std::move(name));
  work_.NotifyOne();
}

bool ReleasedFiles::Drain() {
  MutexLock lock(&mu_);
  const bool waited = !queue_.empty() || !later_names_.empty() || deleting_;
  while (!queue_.empty() || !later_.empty() || deleting_) drained_.Wait(&mu_);
  return waited;
}

uint64_t ReleasedFiles::pending() {
  MutexLock lock(&mu_);
  return queue_.size() + later_names_.size() + (deleting_ ? 1 : 0);
}

void ReleasedFiles::DeleteLoop() {
  MutexLock lock(&mu_);
  for (;;) {
    if (queue_.empty() && later_.empty()) drained_.NotifyAll();
    while (!stopping_ && queue_.empty() && later_.empty()) work_.Wait(&mu_);
    std::string name;
    if (!queue_.empty()) {
      name = std::move(queue_.front());
      queue_.pop_front();
    } else if (!later_.empty()) {
      const std::string there = std::move(later_.front());
      later_.pop_front();
      if (later_names_.erase(there) == 0) continue;  // claimed or released meanwhile
      name = NewName();
      // Under mu_, so that Claim() cannot return while it is being moved.
      if (!MoveAside(there, name)) continue;
    } else {
      return;  // stopping, nothing left
    }
    deleting_ = true;
    lock.Unlock();
    if (Status s = folder_->Remove(name); !s.ok() && !s.IsNotFound())
      std::fprintf(stderr, "strata: deleting %s\n", s.message().c_str());
    lock.Lock();
    deleting_ = false;
  }
}

}  // namespace strata::workspace_internal
