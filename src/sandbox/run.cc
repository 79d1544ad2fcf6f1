#include "sandbox/run.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "util/small_file.h"
#include "util/unique_fd.h"

namespace strata::sandbox {
namespace {

// The signals that end a command from outside: they go to the sandbox
// instead, and the command stays to unmount and report.
sigset_t ForwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
  return set;
}

// In the forked child: only async-signal-safe calls until exec.
[[noreturn]] void ExecChild(const std::vector<char*>& argv, const Limits& limits, const Cgroup* cgroup,
                            const sigset_t& old_mask) {
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  auto die = [](const char* what, int err) {
    const char* msg = ::strerror(err);
    (void)!::write(STDERR_FILENO, "strata: ", 8);
    (void)!::write(STDERR_FILENO, what, ::strlen(what));
    (void)!::write(STDERR_FILENO, ": ", 2);
    (void)!::write(STDERR_FILENO, msg, ::strlen(msg));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(err == ENOENT ? 127 : 126);
  };
  if (cgroup) {
    if (int err = cgroup->AddSelf(); err != 0) die("cannot join the sandbox's cgroup", err);
  } else {
    if (limits.memory_bytes) {
      rlimit r{limits.memory_bytes, limits.memory_bytes};
      if (::setrlimit(RLIMIT_AS, &r) != 0) die("setrlimit(RLIMIT_AS)", errno);
    }
    if (limits.pids) {
      rlimit r{limits.pids, limits.pids};
      if (::setrlimit(RLIMIT_NPROC, &r) != 0) die("setrlimit(RLIMIT_NPROC)", errno);
    }
  }
  ::execvp(argv[0], argv.data());
  die(argv[0], errno);
  ::_exit(127);  // die does not return; the compiler cannot see that through the lambda
}

// Pid file descriptors of pid's children (bwrap's: the sandbox's first
// process). A kill that ends bwrap leaves its sandbox to die a moment later
// (its first process gets SIGKILL when bwrap is gone, and the kernel then
// kills the rest of the PID namespace); waiting on these is waiting for that.
std::vector<UniqueFd> ChildrenOf(pid_t pid) {
  std::vector<UniqueFd> fds;
  std::string text = ReadSmallFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    pid_t child = static_cast<pid_t>(std::atoi(text.substr(pos, end - pos).c_str()));
    if (child > 0) {
      UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
      if (fd.valid()) fds.push_back(std::move(fd));
    }
    pos = end + 1;
  }
  return fds;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<RunOutcome> RunToEnd(const std::vector<std::string>& argv, const Limits& limits, const Cgroup* cgroup,
                            const std::function<void(pid_t)>& on_start) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const sigset_t forwarded = ForwardedSignals();
  sigset_t old_mask;
  ::sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { ::sigprocmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old_mask};
  UniqueFd sigfd(::signalfd(-1, &forwarded, SFD_CLOEXEC));
  if (!sigfd.valid()) return Status::IOError("signalfd", errno);

  const int64_t start = NowMs();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Status::IOError("fork", errno);
  if (pid == 0) ExecChild(cargv, limits, cgroup, old_mask);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid()) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Status::IOError("pidfd_open", err);
  }
  if (on_start) on_start(pid);

  RunOutcome out;
  bool timed_out = false;
  std::vector<UniqueFd> dying;  // sandbox processes killed from here, waited for at the end
  for (;;) {
    int wait_ms = -1;
    if (limits.timeout_ms && !timed_out) {
      int64_t left = start + static_cast<int64_t>(limits.timeout_ms) - NowMs();
      wait_ms = static_cast<int>(std::max<int64_t>(0, left));
    }
    pollfd fds[2] = {{pidfd.get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
    int rc = ::poll(fds, 2, wait_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (fds[0].revents & POLLIN) break;
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info;
      if (::read(sigfd.get(), &info, sizeof(info)) == sizeof(info)) {
        for (UniqueFd& fd : ChildrenOf(pid)) dying.push_back(std::move(fd));
        ::kill(pid, static_cast<int>(info.ssi_signo));
      }
      continue;
    }
    if (rc == 0 && !timed_out) {
      // The sandbox's first process first: its death empties the PID
      // namespace. Then bwrap; the cgroup, when there is one, catches
      // anything that escaped both.
      timed_out = true;
      for (UniqueFd& fd : ChildrenOf(pid)) {
        ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
        dying.push_back(std::move(fd));
      }
      ::kill(pid, SIGKILL);
      if (cgroup) cgroup->KillAll();
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Killed from outside, the sandbox may outlive bwrap by a moment: the
  // command returns only once it is gone (bounded).
  for (UniqueFd& fd : dying) {
    pollfd p{fd.get(), POLLIN, 0};
    while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
    }
  }
  out.wall_ms = static_cast<double>(NowMs() - start);
  if (WIFEXITED(status)) {
    out.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.end = RunOutcome::End::kSignaled;
    out.signal = WTERMSIG(status);
    out.exit_status = 128 + out.signal;
  }
  // bwrap reports its program's death by signal as 128 + the signal.
  if (out.end == RunOutcome::End::kExited && out.exit_status > 128 && out.exit_status < 128 + 65) {
    out.end = RunOutcome::End::kSignaled;
    out.signal = out.exit_status - 128;
  }
  if (timed_out) {
    out.end = RunOutcome::End::kTimeout;
    out.exit_status = kTimeoutExitStatus;
  } else if (out.exit_status != 0 && cgroup && cgroup->MemoryLimitHit()) {
    out.end = RunOutcome::End::kMemoryLimit;
  }
  return out;
}

std::string DescribeOutcome(const RunOutcome& o, const Limits& limits) {
  switch (o.end) {
    case RunOutcome::End::kExited:
      return "exited " + std::to_string(o.exit_status);
    case RunOutcome::End::kSignaled:
      return "killed by signal " + std::to_string(o.signal) + " (" + ::strsignal(o.signal) + ")";
    case RunOutcome::End::kTimeout: {
      uint64_t ms = limits.timeout_ms;
      return "killed: timeout " + (ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms");
    }
    case RunOutcome::End::kMemoryLimit:
      return "killed: memory limit " + FormatSize(limits.memory_bytes);
  }
  return "ended";
}

}  // namespace strata::sandbox
