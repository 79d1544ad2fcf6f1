// A pool of at most a fixed number of worker threads running queued tasks.
// Workers start when tasks first need them, not with the pool: a pool that a
// process may never use (a mount's read-ahead, when nothing is read) costs
// no threads.
//
// Used where work splits into independent pieces (files of an import, packs of
// a verify). The queue is bounded so that a fast producer (a directory walk)
// cannot run arbitrarily far ahead of the workers and hold every file in memory.
//
// Thread-safety: Submit and Wait may be called from any thread; tasks must not
// call Wait on their own pool.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "util/mutex.h"

namespace strata {

class ThreadPool {
 public:
  // threads == 0 means one per hardware thread: the most that run at once.
  explicit ThreadPool(size_t threads = 0, size_t max_queued = 256);
  ~ThreadPool();  // waits for every queued task
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Blocks while the queue is full.
  void Submit(std::function<void()> task);
  // Blocks until every submitted task has finished.
  void Wait();
  size_t size() const { return max_threads_; }

 private:
  void WorkerLoop();

  Mutex mu_;
  CondVar work_ready_;   // a task was queued or stopping_ set
  CondVar space_ready_;  // the queue shrank
  CondVar idle_;         // pending_ dropped to zero
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  size_t pending_ GUARDED_BY(mu_) = 0;  // queued + running
  size_t max_queued_;
  size_t max_threads_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_ GUARDED_BY(mu_);  // started so far
};

}  // namespace strata
