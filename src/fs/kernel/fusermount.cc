// Mounts through fusermount3 (fusermount.h).
#include "fs/kernel/fusermount.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

extern char** environ;

namespace strata::fs::kernel {

namespace {

// Runs fusermount3 with args, giving it env_extra on top of our environment,
// and waits for it. Its exit status, or an error if it could not start.
Result<int> RunFusermount(std::vector<std::string> args, const std::string& env_extra) {
  std::vector<char*> argv;
  args.insert(args.begin(), "fusermount3");
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; e++) env_strings.emplace_back(*e);
  if (!env_extra.empty()) env_strings.push_back(env_extra);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  int err = ::posix_spawnp(&pid, "fusermount3", nullptr, nullptr, argv.data(), envp.data());
  if (err != 0) return Status::IOError("starting fusermount3 (install fuse3)", err);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::IOError("waiting for fusermount3", errno);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The fd fusermount3 sends over the socket, with SCM_RIGHTS.
Result<UniqueFd> ReceiveFd(int sock) {
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::IOError("receiving /dev/fuse from fusermount3", errno);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (n == 0 || c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int)))
    return Status::IOErrorWithMessage("fusermount3 sent no /dev/fuse descriptor", EIO);
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(fd));
  return UniqueFd(fd);
}

}  // namespace

Result<UniqueFd> FusermountMount(const std::string& mountpoint, const std::string& options) {
  int sv[2];
  // Our end is close-on-exec; fusermount3's end must survive its exec.
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return Status::IOError("socketpair for fusermount3", errno);
  UniqueFd ours(sv[0]);
  UniqueFd theirs(sv[1]);
  if (::fcntl(ours.get(), F_SETFD, FD_CLOEXEC) != 0) return Status::IOError("socketpair for fusermount3", errno);
  auto status = RunFusermount({"-o", options, "--", mountpoint}, "_FUSE_COMMFD=" + std::to_string(theirs.get()));
  theirs = UniqueFd();
  if (!status.ok()) return status.status();
  if (*status != 0)
    return Status::IOErrorWithMessage("fusermount3 could not mount " + mountpoint + " (exit " + std::to_string(*status) +
                                          "; its message is above)",
                                      EIO);
  return ReceiveFd(ours.get());
}

Status FusermountUnmount(const std::string& mountpoint) {
  STRATA_ASSIGN_OR_RETURN(int status, RunFusermount({"-u", "-z", "--", mountpoint}, ""));
  if (status != 0)
    return Status::IOErrorWithMessage("fusermount3 could not unmount " + mountpoint + " (exit " +
                                          std::to_string(status) + ")",
                                      EIO);
  return Status::Ok();
}

}  // namespace strata::fs::kernel
