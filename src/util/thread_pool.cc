#include "util/thread_pool.h"

namespace strata {

ThreadPool::ThreadPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < threads; i++) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  Wait();
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_ready_.NotifyAll();
  for (auto& t : workers_) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  MutexLock lock(&mu_);
  while (queue_.size() >= max_queued_) space_ready_.Wait(&mu_);
  queue_.push_back(std::move(task));
  pending_++;
  lock.Unlock();
  work_ready_.NotifyOne();
}

void ThreadPool::Wait() {
  MutexLock lock(&mu_);
  while (pending_ != 0) idle_.Wait(&mu_);
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) work_ready_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    space_ready_.NotifyOne();
    task();
    MutexLock lock(&mu_);
    if (--pending_ == 0) idle_.NotifyAll();
  }
}

}  // namespace strata
