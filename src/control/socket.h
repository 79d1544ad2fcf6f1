// The control socket: how strata commands reach the daemon serving a mount.
//
// A Unix stream socket at <state_dir>/control.sock (mode 0600) that carries
// one request and one reply per connection (control/protocol.h). The daemon
// serves it on two threads of its own: one accepts connections and answers
// read-only requests (IsReadOnly) at once; the other serves the rest one at a
// time in the order they arrive, so that a long commit does not keep a
// command from asking how far it is. A client connects, asks and reads the
// reply.
// Thread-safety: a ControlSocket is started and stopped by one thread; its
// handler runs on both of the socket's threads, a read-only request beside
// another one. ControlRequest may be called from any.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "control/protocol.h"
#include "util/mutex.h"
#include "util/status.h"

namespace strata::control {

class ControlSocket {
 public:
  // handler answers each decoded request, with the alternative of
  // DaemonReply that answers it (ReplyTo) or an error; bytes that decode to
  // no request get an "invalid" error reply without reaching it.
  using Handler = std::function<Result<DaemonReply>(const DaemonRequest& request)>;
  ControlSocket(std::string path, Handler handler) : path_(std::move(path)), handler_(std::move(handler)) {}
  ~ControlSocket() { Stop(); }
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  Status Start();  // binds and serves on threads of its own
  // Waits for the request being served; those still waiting get no reply
  // (their command says the daemon stopped). May be called again.
  void Stop();

 private:
  // A connection and the request read from it, for the serial thread.
  struct Pending {
    int fd;
    DaemonRequest request;
  };
  void Accept();
  void ServeInOrder();
  void Answer(int fd, const Result<DaemonReply>& reply);
  std::string path_;
  Handler handler_;
  int fd_ = -1;
  std::thread accept_thread_, serial_thread_;
  Mutex mu_;
  CondVar queued_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
};

// Client side: sends request to the daemon at socket_path and returns its
// reply (DecodeReplyOrStop): the alternative answering request, or the
// error it carried as a Status (Conflict for "conflict"). Unavailable when no
// daemon listens there any more, or when the daemon stopped before its reply
// was complete: the caller then says what the request may have done.
Result<DaemonReply> ControlRequest(const std::string& socket_path, const DaemonRequest& request);

// The reply to a request of a known type, typed.
template <typename Request>
Result<ReplyTo<Request>> Ask(const std::string& socket_path, const Request& request) {
  STRATA_ASSIGN_OR_RETURN(DaemonReply reply, ControlRequest(socket_path, request));
  return std::get<ReplyTo<Request>>(std::move(reply));  // DecodeReply gives no other alternative
}

}  // namespace strata::control
