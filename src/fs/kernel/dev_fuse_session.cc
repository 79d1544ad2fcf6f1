// The classic /dev/fuse loop (dev_fuse_session.h).
#include "fs/kernel/dev_fuse_session.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "fs/kernel/fusermount.h"

namespace strata::fs::kernel {

namespace {

// The entry a RunUring thread serves, so that a handler's Answer on that
// thread goes into it rather than to /dev/fuse.
thread_local UringEntry* serving_entry = nullptr;

// Whether the reply (a whole message) answers the request the entry holds.
bool Answers(const UringEntry* entry, uint64_t unique) {
  return entry != nullptr && !entry->staged() && entry->unique() == unique;
}
// An option value as fusermount3 reads it: ',' and '\\' escaped with '\\'.
std::string EscapedOption(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

uint64_t UniqueOf(const Message& reply) {
  fuse_out_header header{};
  if (reply.size() >= sizeof(header)) std::memcpy(&header, reply.data(), sizeof(header));
  return header.unique;
}

// A buffer for any request the wants allow, before INIT says what was agreed
// (the agreement can only be smaller: max_write and max_pages are ours).
size_t BufferBytes(const InitWants& w) {
  constexpr size_t kFixed = 4096;  // more than any header and fixed struct
  return std::max<size_t>(8192, kFixed + std::max<size_t>(w.max_write, size_t{w.max_pages} * w.page_size));
}

}  // namespace

DevFuseSession::DevFuseSession(UniqueFd fd, std::string mountpoint, SessionOptions options, bool via_fusermount)
    : fd_(std::move(fd)),
      mountpoint_(std::move(mountpoint)),
      options_(std::move(options)),
      via_fusermount_(via_fusermount) {
  if (options_.wants.io_uring) MakeUringEntries();
}

void DevFuseSession::MakeUringEntries() {
  auto queues = PossibleCpus();
  Status failed = queues.status();
  if (queues.ok()) {
    const size_t per_queue = std::max(1u, options_.uring_entries_per_queue);
    for (unsigned q = 0; q < *queues && failed.ok(); q++) {
      for (size_t i = 0; i < per_queue; i++) {
        auto entry = UringEntry::Create(fd_.get(), static_cast<uint16_t>(q), BufferBytes(options_.wants));
        if (!entry.ok()) {
          failed = entry.status();
          break;
        }
        uring_entries_.push_back(std::move(*entry));
      }
    }
  }
  if (failed.ok()) return;
  // INIT then does not offer io_uring: a connection that agreed it would
  // wait for every queue to register, which these entries could not.
  std::fprintf(stderr, "strata: FUSE over io_uring not used: %s\n", failed.message().c_str());
  uring_entries_.clear();
}

DevFuseSession::~DevFuseSession() {
  // Nothing to report to from a destructor; a mount still there is detached.
  if (mounted_) Unmount().IgnoreError();
}

Result<std::unique_ptr<DevFuseSession>> DevFuseSession::Mount(const std::string& mountpoint,
                                                              const SessionOptions& options) {
  struct stat st {};
  if (::stat(mountpoint.c_str(), &st) != 0) return Status::IOError(mountpoint, errno);
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(mountpoint + ": not a directory to mount on");
  // The subtype ends up in fusermount3's comma-separated option list as it
  // is; the source name goes there escaped (and to mount(2) apart from the
  // options), so any non-empty one will do, commas and all.
  if (options.fs_name.empty()) return Status::InvalidArgument("a FUSE mount needs a source name");
  if (options.subtype.empty() || options.subtype.find_first_of(",\\") != std::string::npos)
    return Status::InvalidArgument("'" + options.subtype + "' cannot name a FUSE mount type (empty, or a ',' or '\\' in it)");
  std::string flags;
  if (options.default_permissions) flags += ",default_permissions";
  if (options.allow_other) flags += ",allow_other";
  unsigned long mount_flags = (options.suid ? 0 : MS_NOSUID) | (options.dev ? 0 : MS_NODEV) |
                              (options.read_only ? MS_RDONLY : 0) | (options.noatime ? MS_NOATIME : 0);
  // fusermount3 takes the same as options.
  std::string fusermount_flags = flags + (options.read_only ? ",ro" : "") + (options.suid ? ",suid" : "") +
                                 (options.dev ? ",dev" : "") + (options.noatime ? ",noatime" : "");
  if (!options.use_fusermount) {
    UniqueFd fd(::open("/dev/fuse", O_RDWR | O_CLOEXEC));
    if (fd.get() < 0) return Status::IOError("/dev/fuse", errno);
    // rootmode is octal in the kernel's parser.
    char mode[16];
    std::snprintf(mode, sizeof(mode), "%o", st.st_mode & S_IFMT);
    std::string data = "fd=" + std::to_string(fd.get()) + ",rootmode=" + mode +
                       ",user_id=" + std::to_string(::geteuid()) + ",group_id=" + std::to_string(::getegid()) + flags;
    std::string type = "fuse." + options.subtype;
    if (::mount(options.fs_name.c_str(), mountpoint.c_str(), type.c_str(), mount_flags, data.c_str()) == 0)
      return std::unique_ptr<DevFuseSession>(new DevFuseSession(std::move(fd), mountpoint, options, false));
    if (errno != EPERM) return Status::IOError("cannot mount on " + mountpoint, errno);
  }
  STRATA_ASSIGN_OR_RETURN(UniqueFd fd,
                          FusermountMount(mountpoint, "fsname=" + EscapedOption(options.fs_name) + ",subtype=" +
                                                          options.subtype + fusermount_flags));
  return std::unique_ptr<DevFuseSession>(new DevFuseSession(std::move(fd), mountpoint, options, true));
}

Status DevFuseSession::Unmount() {
  {
    MutexLock lock(&mu_);
    ended_ = true;
  }
  init_answered_.NotifyAll();
  if (!mounted_.exchange(false)) return Status::Ok();
  // Detached: the connection ends when the last open file on it closes, and
  // then the kernel ends Run's read with ENODEV.
  if (::umount2(mountpoint_.c_str(), MNT_DETACH) == 0 || errno == EINVAL) return Status::Ok();
  // Not allowed: the mount was fusermount3's, made for a user without root.
  if (errno == EPERM && via_fusermount_) return FusermountUnmount(mountpoint_);
  return Status::IOError("unmount " + mountpoint_, errno);
}

Status DevFuseSession::Write(const Message& message) {
  ssize_t n = ::write(fd_.get(), message.data(), message.size());
  if (n < 0) {
    // The request was interrupted and is gone, or (for a notification)
    // there was nothing cached: the kernel has no use for this reply.
    if (errno == ENOENT) return Status::Ok();
    return Status::IOError("writing to /dev/fuse", errno);
  }
  if (static_cast<size_t>(n) != message.size()) return Status::IOErrorWithMessage("short write to /dev/fuse", EIO);
  return Status::Ok();
}

Status DevFuseSession::Notify(const Message& message) { return Write(message); }

namespace {
// What a write of `expected` bytes that returned n says: delivered, gone, or broken.
Result<bool> Delivered(ssize_t n, size_t expected) {
  if (n < 0) {
    if (errno == ENOENT) return false;
    return Status::IOError("writing to /dev/fuse", errno);
  }
  if (static_cast<size_t>(n) != expected) return Status::IOErrorWithMessage("short write to /dev/fuse", EIO);
  return true;
}
}  // namespace

Result<bool> DevFuseSession::Answer(const Message& reply) {
  if (Answers(serving_entry, UniqueOf(reply))) return serving_entry->Stage(reply);
  return Delivered(::write(fd_.get(), reply.data(), reply.size()), reply.size());
}

Result<bool> DevFuseSession::AnswerGathered(uint64_t unique, std::span<const iovec> body) {
  if (Answers(serving_entry, unique)) return serving_entry->StageGathered(body);
  std::vector<iovec> pieces;
  pieces.reserve(body.size() + 1);
  fuse_out_header header{static_cast<uint32_t>(sizeof(fuse_out_header)), 0, unique};
  pieces.push_back({&header, sizeof(header)});
  for (const iovec& p : body) {
    header.len += static_cast<uint32_t>(p.iov_len);
    pieces.push_back(p);
  }
  return Delivered(::writev(fd_.get(), pieces.data(), static_cast<int>(pieces.size())), header.len);
}

Result<int32_t> DevFuseSession::OpenBacking(int fd) {
  auto agreed = settings();
  if (!agreed || !agreed->passthrough) return Status::InvalidArgument("passthrough was not agreed at INIT");
  BackingMap map{fd, 0, 0};
  int id = ::ioctl(fd_.get(), kDevIocBackingOpen, &map);
  if (id < 0) return Status::IOError("registering a passthrough backing file", errno);
  return static_cast<int32_t>(id);
}

Status DevFuseSession::CloseBacking(int32_t backing_id) {
  uint32_t id = static_cast<uint32_t>(backing_id);
  if (::ioctl(fd_.get(), kDevIocBackingClose, &id) != 0)
    return Status::IOError("releasing passthrough backing file " + std::to_string(backing_id), errno);
  return Status::Ok();
}

Status DevFuseSession::HandleInit(const Request& request) {
  InitWants wants = options_.wants;
  wants.io_uring = wants.io_uring && !uring_entries_.empty();  // only with entries to register
  auto outcome = NegotiateInit(request.header.unique, std::get<InitArgs>(request.args), wants);
  if (!outcome.ok()) {
    // Tell the kernel (its mount fails) and the caller (why).
    Write(ErrorReply(request.header.unique, EPROTO)).IgnoreError();
    return outcome.status();
  }
  {
    MutexLock lock(&mu_);
    settings_ = outcome->settings;
  }
  Status written = Write(outcome->reply);
  // The kernel has taken the reply when the write returns: ring entries may
  // register from now on (before, it refuses them with EAGAIN).
  if (outcome->settings) init_answered_.NotifyAll();
  return written;
}

std::optional<SessionSettings> DevFuseSession::WaitForInit() const {
  MutexLock lock(&mu_);
  while (!settings_ && !ended_) init_answered_.Wait(&mu_);
  return settings_;
}

bool DevFuseSession::ServingRingEntry() { return serving_entry != nullptr; }

bool DevFuseSession::serving_over_uring() const {
  auto agreed = settings();
  return agreed && agreed->io_uring && !uring_refused_.load();
}

std::optional<SessionSettings> DevFuseSession::settings() const {
  MutexLock lock(&mu_);
  return settings_;
}

void DevFuseSession::HandleInterrupt(const Request& request) {
  const auto& args = std::get<InterruptArgs>(request.args);
  if (interrupts_.Interrupt(args.unique) == InterruptTracker::Target::kNotSeen) {
    // Another reader has it but has not begun it: the kernel asks again.
    Write(ErrorReply(request.header.unique, EAGAIN)).IgnoreError();
  }
}

Status DevFuseSession::Refuse(std::span<const uint8_t> bytes, const Status& why) {
  std::fprintf(stderr, "strata: refused a FUSE request: %s\n", why.message().c_str());
  // One bad request does not end the session: if its id can be read, it
  // fails with EIO (a wrong id is refused by the kernel, harmlessly).
  if (bytes.size() < sizeof(fuse_in_header)) return Status::Ok();
  fuse_in_header raw;
  std::memcpy(&raw, bytes.data(), sizeof(raw));
  if (raw.unique == 0 || !OpcodeExpectsReply(raw.opcode)) return Status::Ok();
  return Write(ErrorReply(raw.unique, EIO));
}

Status DevFuseSession::Run(RequestHandler& handler) {
  std::vector<uint8_t> buffer(BufferBytes(options_.wants));
  DecodeOptions decode_options;  // none agreed until INIT
  for (;;) {
    ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
    if (n < 0) {
      int err = errno;
      // EINTR: a signal; ENOENT: the request was withdrawn before we read it.
      if (err == EINTR || err == EAGAIN || err == ENOENT) continue;
      if (err == ENODEV) return Status::Ok();  // unmounted
      return Status::IOError("reading /dev/fuse", err);
    }
    std::span<const uint8_t> bytes(buffer.data(), static_cast<size_t>(n));
    device_requests_.fetch_add(1, std::memory_order_relaxed);
    // Another thread's Run may have answered INIT.
    if (decode_options.minor == 0) {
      if (auto agreed = settings()) decode_options = agreed->decode_options();
    }
    auto request = DecodeRequest(bytes, decode_options);
    if (!request.ok()) {
      STRATA_RETURN_IF_ERROR(Refuse(bytes, request.status()));
      continue;
    }
    const RequestHeader& header = request->header;
    switch (header.opcode) {
      case FUSE_INIT:
        STRATA_RETURN_IF_ERROR(HandleInit(*request));
        // A newer major's INIT agrees nothing; the kernel's next INIT will.
        if (auto agreed = settings()) decode_options = agreed->decode_options();
        continue;
      case FUSE_INTERRUPT: HandleInterrupt(*request); continue;
      default: break;
    }
    Message reply = Serve(*request, handler);
    if (!reply.empty()) STRATA_RETURN_IF_ERROR(Write(reply));
  }
}

Message DevFuseSession::Serve(const Request& request, RequestHandler& handler) {
  const RequestHeader& header = request.header;
  if (header.opcode == FUSE_DESTROY) return EmptyReply(header.unique);
  if (std::holds_alternative<UnsupportedArgs>(request.args)) return ErrorReply(header.unique, ENOSYS);
  if (!interrupts_.Begin(header.unique)) return ErrorReply(header.unique, EINVAL);
  Message reply = handler.Handle(request, interrupts_);
  // Finished before the reply is sent: an INTERRUPT read meanwhile finds the
  // id among the answered ones and is dropped, as it should be.
  interrupts_.Finish(header.unique);
  return reply;
}

Status DevFuseSession::RunUring(RequestHandler& handler, size_t index) {
  UringEntry& entry = *uring_entries_.at(index);
  std::optional<SessionSettings> agreed = WaitForInit();
  if (!agreed || !agreed->io_uring) return Status::Ok();  // the classic loop serves everything
  cpu_set_t cpu;
  CPU_ZERO(&cpu);
  CPU_SET(entry.qid(), &cpu);
  // Best effort: the CPU may be offline; the entry serves from any.
  (void)::sched_setaffinity(0, sizeof(cpu), &cpu);
  const DecodeOptions decode_options = agreed->decode_options();
  Result<std::span<const uint8_t>> next = entry.Register();
  if (!next.ok() && !next.status().IsInvalidArgument()) {
    // Registration refused: the kernel turns io_uring off for this
    // connection, and /dev/fuse carries the requests.
    uring_refused_.store(true);
    std::fprintf(stderr, "strata: FUSE over io_uring refused (%s); serving /dev/fuse\n", next.status().message().c_str());
    return Status::Ok();
  }
  for (;;) {
    if (next.ok() && next->empty()) return Status::Ok();  // the connection ended
    // A failed command ends the session, as a failed read of /dev/fuse does.
    if (!next.ok() && !next.status().IsInvalidArgument()) return next.status();
    if (!next.ok()) {
      // A request that does not lay out: answer it, so the entry comes back.
      std::fprintf(stderr, "strata: refused a FUSE request: %s\n", next.status().message().c_str());
      entry.Stage(ErrorReply(entry.unique(), EIO));
    } else {
      uring_requests_.fetch_add(1, std::memory_order_relaxed);
      auto request = DecodeRequest(*next, decode_options);
      if (!request.ok()) {
        std::fprintf(stderr, "strata: refused a FUSE request: %s\n", request.status().message().c_str());
      } else if (request->header.opcode == FUSE_INIT || request->header.opcode == FUSE_INTERRUPT) {
        std::fprintf(stderr, "strata: %s came over io_uring, where the kernel never sends it\n",
                     OpcodeName(request->header.opcode).c_str());
      } else {
        serving_entry = &entry;
        Message reply = Serve(*request, handler);
        serving_entry = nullptr;
        if (!reply.empty()) entry.Stage(reply);
      }
      // Every ring request is committed, or its entry is lost to the kernel.
      if (!entry.staged()) entry.Stage(ErrorReply(entry.unique(), EIO));
    }
    next = entry.CommitAndFetch();
  }
}

}  // namespace strata::fs::kernel
