// Holding passthrough writes off for a cut (passthrough_hold.h).
#include "fs/passthrough_hold.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "fs/kernel/fuse_abi.h"

namespace strata::fs {

PassthroughHold::PassthroughHold(std::string mountpoint, unsigned limit_per_cpu, AnswerLater answer_later)
    : mountpoint_(std::move(mountpoint)), limit_per_cpu_(limit_per_cpu), answer_later_(std::move(answer_later)) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &allowed)) cpus_.push_back(c);
}

std::vector<InodeId> PassthroughHold::Hold(const std::vector<File>& files) {
  MutexLock lock(&mu_);
  if (!slots_.empty()) return {};  // another cut's (cuts come one at a time: not expected)
  released_ = false;
  const size_t room = cpus_.empty() ? limit_per_cpu_ : limit_per_cpu_ * cpus_.size();
  for (size_t i = 0; i < files.size() && i < room; i++) {
    auto slot = std::make_unique<Slot>();
    slot->ino = files[i].ino;
    slot->path = mountpoint_ + "/" + files[i].path;
    if (!cpus_.empty()) slot->cpu = cpus_[i % cpus_.size()];
    Slot* s = slot.get();
    slots_.push_back(std::move(slot));
    s->thread = std::thread([this, s] { RunSlot(s); });
  }
  // Each slot ends held or failed; one the kernel is slow to bring here
  // within the wait counts as not held (its writer is waited for instead)
  // and is let go with the others at Release.
  const auto deadline = std::chrono::steady_clock::now() + DirectAccess::kDirectWriterWait;
  auto settled = [this]() REQUIRES(mu_) {
    for (const auto& s : slots_)
      if (s->state == State::kOpening || s->state == State::kWaiting) return false;
    return true;
  };
  while (!settled() && changed_.WaitUntil(&mu_, deadline)) {
  }
  std::vector<InodeId> held;
  for (const auto& s : slots_) {
    if (s->state == State::kHeld) held.push_back(s->ino);
    // Too late: its FSYNC, should it still come, is served as any other.
    if (s->state == State::kOpening || s->state == State::kWaiting) s->state = State::kFailed;
  }
  if (held.empty()) {
    lock.Unlock();
    Release();  // nothing for the caller to let go
  }
  return held;
}

void PassthroughHold::RunSlot(Slot* slot) {
  if (slot->cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(slot->cpu, &one);
    (void)::sched_setaffinity(0, sizeof(one), &one);  // this thread only
  }
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "strata: holding writes to %s for a cut: %s\n", slot->path.c_str(), what);
    MutexLock lock(&mu_);
    slot->state = State::kFailed;
    changed_.NotifyAll();
  };
  const int fd = ::open(slot->path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open it");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != slot->ino) {
    ::close(fd);
    return fail("the name is another file's now");
  }
  {
    MutexLock lock(&mu_);
    if (slot->state == State::kFailed) {  // Hold gave up on it
      ::close(fd);
      return;
    }
    slot->tid = ::gettid();
    slot->state = State::kWaiting;
  }
  // Returns once Intercept let its FSYNC go (or at once, had it not come).
  (void)::fsync(fd);
  {
    MutexLock lock(&mu_);
    if (slot->state != State::kHeld) slot->state = State::kFailed;
    changed_.NotifyAll();
  }
  ::close(fd);
}

PassthroughHold::Intercepted PassthroughHold::Intercept(uint32_t opcode, uint32_t pid, uint64_t nodeid,
                                                       uint64_t unique, bool can_hand_over) {
  if (opcode != FUSE_FSYNC) return Intercepted::kNotHeld;
  MutexLock lock(&mu_);
  Slot* mine = nullptr;
  for (const auto& s : slots_)
    if (s->state == State::kWaiting && static_cast<uint32_t>(s->tid) == pid && s->ino == nodeid) mine = s.get();
  if (mine == nullptr) return Intercepted::kNotHeld;
  mine->state = State::kHeld;
  changed_.NotifyAll();
  if (can_hand_over) {
    mine->handed_over = unique;
    return Intercepted::kHandedOver;
  }
  while (!released_) changed_.Wait(&mu_);
  return Intercepted::kReleased;
}

void PassthroughHold::Release() {
  std::vector<std::unique_ptr<Slot>> ending;
  {
    MutexLock lock(&mu_);
    released_ = true;
    ending.swap(slots_);
  }
  changed_.NotifyAll();
  // Each thread's fsync is answered now (by the request thread that kept
  // it, or here), and its close reaches the daemon's other threads.
  for (auto& s : ending)
    if (s->handed_over) answer_later_(*s->handed_over);
  for (auto& s : ending) s->thread.join();
}

}  // namespace strata::fs
