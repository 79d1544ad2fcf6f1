#include "util/thread_pool.h"

namespace strata {

ThreadPool::ThreadPool(size_t threads, size_t max_queued)
    : max_queued_(max_queued), max_threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())) {}

ThreadPool::~ThreadPool() {
  Wait();
  std::vector<std::thread> workers;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    workers.swap(workers_);  // no task runs now, so none starts another
  }
  work_ready_.NotifyAll();
  for (auto& t : workers) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  MutexLock lock(&mu_);
  while (queue_.size() >= max_queued_) space_ready_.Wait(&mu_);
  queue_.push_back(std::move(task));
  pending_++;
  // More tasks queued or running than workers: one more, up to the most.
  if (pending_ > workers_.size() && workers_.size() < max_threads_) workers_.emplace_back([this] { WorkerLoop(); });
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
