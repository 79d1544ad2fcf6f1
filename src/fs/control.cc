#include "fs/control.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace strata::fs {
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

}  // namespace

Status ControlSocket::Start() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof(addr.sun_path)) return Status::InvalidArgument("control socket path too long: " + path_);
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::IOError("control socket", errno);
  ::unlink(path_.c_str());
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::chmod(path_.c_str(), 0600) != 0 ||
      ::listen(fd_, 8) != 0)
    return Status::IOError("control socket " + path_, errno);
  thread_ = std::thread([this] { Serve(); });
  return Status::Ok();
}

void ControlSocket::Stop() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
  ::unlink(path_.c_str());
  fd_ = -1;
}

void ControlSocket::Serve() {
  for (;;) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR) continue;
      return;  // shut down
    }
    std::string line;
    nlohmann::ordered_json reply;
    if (!ReadLine(c, &line)) {
      reply = ErrorReplyJson(Status::InvalidArgument("no request"));
    } else {
      auto request = nlohmann::ordered_json::parse(line, nullptr, false);
      reply = request.is_object() ? handler_(request) : ErrorReplyJson(Status::InvalidArgument("request is not JSON"));
    }
    (void)SendAll(c, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    ::close(c);
  }
}

Result<nlohmann::ordered_json> ControlRequest(const std::string& socket_path, const nlohmann::ordered_json& request) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError("socket", errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    ::close(fd);
    return Status::InvalidArgument("control socket path too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(fd);
    return Status::IOError("reaching the daemon (" + socket_path + ")", err);
  }
  std::string reply;
  if (SendAll(fd, request.dump() + "\n")) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  auto j = nlohmann::ordered_json::parse(reply, nullptr, false);
  if (!j.is_object()) return Status::Corruption("the daemon's reply is not what this strata reads");
  if (j.contains("error")) {
    std::string msg = j["error"].is_string() ? j["error"].get<std::string>() : "unknown error";
    std::string code = j.value("code", "failed");
    if (code == "conflict") return Status::Conflict(msg);
    if (code == "invalid") return Status::InvalidArgument(msg);
    return Status::IOErrorWithMessage(msg, EIO);
  }
  return j;
}

nlohmann::ordered_json CommitReplyJson(const CommitOutcome& outcome) {
  const CommitStats& s = outcome.stats;
  return {{"commit", outcome.commit ? nlohmann::ordered_json(outcome.commit->ToHex()) : nlohmann::ordered_json()},
          {"branch", outcome.branch},
          {"stats",
           {{"changed_inodes", s.changed_inodes},
            {"directories_written", s.directories_written},
            {"files_captured", s.files_captured},
            {"bytes_hashed", s.bytes_hashed},
            {"objects_written", s.objects_written},
            {"cut_ms", s.cut_ms},
            {"capture_ms", s.capture_ms},
            {"trees_ms", s.trees_ms},
            {"publish_ms", s.publish_ms},
            {"rebase_ms", s.rebase_ms}}}};
}

nlohmann::ordered_json RebaseReplyJson(const Hash& onto, const RebaseOutcome& outcome) {
  nlohmann::ordered_json conflicts = nlohmann::ordered_json::array();
  for (const MergeConflict& c : outcome.conflicts) conflicts.push_back({{"path", c.path}, {"reason", c.reason}});
  const bool rebased = !outcome.up_to_date && outcome.conflicts.empty();
  return {{"onto", onto.ToHex()},
          {"up_to_date", outcome.up_to_date},
          {"conflicts", std::move(conflicts)},
          {"root", rebased ? nlohmann::ordered_json(outcome.root.ToHex()) : nlohmann::ordered_json()},
          {"differs", outcome.differs}};
}

namespace {

std::string BytesToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::optional<std::string> HexToBytes(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace

nlohmann::ordered_json SnapshotReplyJson(const WorkspaceSnapshot& snap) {
  nlohmann::ordered_json xattrs = nlohmann::ordered_json::array();
  for (const auto& [name, value] : snap.root_meta.xattrs) xattrs.push_back({BytesToHex(name), BytesToHex(value)});
  const RootMeta& m = snap.root_meta;
  return {{"base", snap.base ? nlohmann::ordered_json(snap.base->ToHex()) : nlohmann::ordered_json()},
          {"root", snap.root.ToHex()},
          {"root_meta",
           {{"mode", m.mode},
            {"uid", m.uid},
            {"gid", m.gid},
            {"mtime_sec", m.mtime_sec},
            {"mtime_nsec", m.mtime_nsec},
            {"xattrs", xattrs}}},
          {"differs", snap.differs}};
}

Result<WorkspaceSnapshot> SnapshotFromJson(const nlohmann::ordered_json& j) {
  const Status bad = Status::Corruption("the daemon's snapshot reply is not what this strata reads");
  try {
    WorkspaceSnapshot snap;
    if (!j.at("base").is_null()) {
      snap.base = Hash::FromHex(j.at("base").get<std::string>());
      if (!snap.base) return bad;
    }
    auto root = Hash::FromHex(j.at("root").get<std::string>());
    if (!root) return bad;
    snap.root = *root;
    const auto& m = j.at("root_meta");
    snap.root_meta.mode = m.at("mode").get<uint32_t>();
    snap.root_meta.uid = m.at("uid").get<uint32_t>();
    snap.root_meta.gid = m.at("gid").get<uint32_t>();
    snap.root_meta.mtime_sec = m.at("mtime_sec").get<int64_t>();
    snap.root_meta.mtime_nsec = m.at("mtime_nsec").get<uint32_t>();
    for (const auto& x : m.at("xattrs")) {
      auto name = HexToBytes(x.at(0).get<std::string>());
      auto value = HexToBytes(x.at(1).get<std::string>());
      if (!name || !value) return bad;
      snap.root_meta.xattrs.emplace_back(*name, *value);
    }
    snap.differs = j.at("differs").get<bool>();
    return snap;
  } catch (const nlohmann::json::exception&) {
    return bad;
  }
}

nlohmann::ordered_json ErrorReplyJson(const Status& s) {
  const char* code = s.IsConflict() ? "conflict"
                     : s.code() == Status::Code::kInvalidArgument ? "invalid"
                                                                  : "failed";
  return {{"error", s.message()}, {"code", code}};
}

}  // namespace strata::fs
