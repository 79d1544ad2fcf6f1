#include "control/socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata::control {
namespace {

bool SendAll(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads up to the first newline (or the end); false on error or oversize.
bool ReadLine(int fd, std::string* out) {
  char c;
  while (out->size() < (1 << 20)) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return !out->empty();
    if (c == '\n') return true;
    out->push_back(c);
  }
  return false;
}

// The address of the socket file at path. An address holds at most 107
// bytes of path, and a store may live deeper than that: a longer path is
// reached through its directory, opened here and kept open while the address
// is used, as /proc/self/fd/N/NAME.
class SocketAddress {
 public:
  explicit SocketAddress(const std::string& path) {
    addr_.sun_family = AF_UNIX;
    std::string name = path;
    if (path.size() >= sizeof(addr_.sun_path)) {
      const size_t slash = path.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
      dir_fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd_ < 0) {
        error_ = errno;
        return;
      }
      name = "/proc/self/fd/" + std::to_string(dir_fd_) + "/" + path.substr(slash + 1);
      if (name.size() >= sizeof(addr_.sun_path)) {
        error_ = ENAMETOOLONG;
        return;
      }
    }
    std::memcpy(addr_.sun_path, name.c_str(), name.size() + 1);
  }
  ~SocketAddress() {
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }
  SocketAddress(const SocketAddress&) = delete;
  SocketAddress& operator=(const SocketAddress&) = delete;

  int error() const { return error_; }  // 0 when usable
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&addr_); }
  socklen_t size() const { return sizeof(addr_); }

 private:
  sockaddr_un addr_{};
  int dir_fd_ = -1;
  int error_ = 0;
};

}  // namespace

Status ControlSocket::Start() {
  SocketAddress addr(path_);
  if (addr.error() != 0) return Status::IOError("control socket " + path_, addr.error());
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::IOError("control socket", errno);
  ::unlink(path_.c_str());
  if (::bind(fd_, addr.get(), addr.size()) != 0 || ::fchmodat(AT_FDCWD, path_.c_str(), 0600, AT_SYMLINK_NOFOLLOW) != 0 || ::listen(fd_, 8) != 0)
    return Status::IOError("control socket " + path_, errno);
  {
    MutexLock lock(&mu_);
    stopping_ = false;
  }
  serial_thread_ = std::thread([this] { ServeInOrder(); });
  accept_thread_ = std::thread([this] { Accept(); });
  return Status::Ok();
}

void ControlSocket::Stop() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  queued_.NotifyAll();
  if (serial_thread_.joinable()) serial_thread_.join();
  ::close(fd_);
  ::unlink(path_.c_str());
  fd_ = -1;
}

void ControlSocket::Answer(int fd, const Result<DaemonReply>& reply) {
  (void)SendAll(fd, EncodeReply(reply) + "\n");
  ::close(fd);
}

void ControlSocket::Accept() {
  for (;;) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR) continue;
      return;  // shut down
    }
    std::string line;
    if (!ReadLine(c, &line)) {
      Answer(c, Status::InvalidArgument("no request"));
      continue;
    }
    auto request = DecodeRequest(line);
    if (!request.ok()) {
      Answer(c, request.status());
    } else if (IsReadOnly(*request)) {
      Answer(c, handler_(*request));
    } else {
      {
        MutexLock lock(&mu_);
        queue_.push_back(Pending{c, std::move(*request)});
      }
      queued_.NotifyAll();
    }
  }
}

void ControlSocket::ServeInOrder() {
  MutexLock lock(&mu_);
  for (;;) {
    while (queue_.empty() && !stopping_) queued_.Wait(&mu_);
    if (stopping_) break;
    Pending next = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    Answer(next.fd, handler_(next.request));
    lock.Lock();
  }
  // Stopping: what waits is not served; closing the connection tells its command.
  for (const Pending& p : queue_) ::close(p.fd);
  queue_.clear();
}

Result<DaemonReply> ControlRequest(const std::string& socket_path, const DaemonRequest& request) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError("socket", errno);
  SocketAddress addr(socket_path);
  if (addr.error() != 0 || ::connect(fd, addr.get(), addr.size()) != 0) {
    int err = addr.error() != 0 ? addr.error() : errno;
    ::close(fd);
    // A socket file nobody listens on is what a killed daemon leaves.
    if (err == ECONNREFUSED || err == ENOENT)
      return Status::Unavailable("no daemon answers on " + socket_path + " (it has stopped)");
    return Status::IOError("reaching the daemon (" + socket_path + ")", err);
  }
  std::string reply;
  if (SendAll(fd, EncodeRequest(request) + "\n")) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return DecodeReplyOrStop(request, reply);
}

}  // namespace strata::control
