#include "util/thread_pool.h"

namespace strata {

ThreadPool::ThreadPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < threads; i++) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  Wait();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(mu_);
  space_ready_.wait(lock, [this] { return queue_.size() < max_queued_; });
  queue_.push_back(std::move(task));
  pending_++;
  lock.unlock();
  work_ready_.notify_one();
}

void ThreadPool::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    space_ready_.notify_one();
    task();
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) idle_.notify_all();
  }
}

}  // namespace strata
