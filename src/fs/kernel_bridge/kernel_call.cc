// A Call over a request of strata's own codec (kernel_call.h).
#include "fs/kernel_bridge/kernel_call.h"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

namespace strata::fs {

namespace {
std::chrono::nanoseconds Seconds(double s) {
  return std::chrono::nanoseconds(static_cast<int64_t>(s * 1e9));
}

// A directory entry's DT_* type from its mode, as readdir(3) reports it.
uint32_t DirentType(mode_t mode) { return (mode & S_IFMT) >> 12; }
}  // namespace

kernel::EntryParams EntryParamsOf(const EntryOut& e) {
  kernel::EntryParams p;
  p.nodeid = e.ino;
  p.entry_timeout = Seconds(e.timeout);
  p.attr_timeout = e.ino == 0 ? std::chrono::nanoseconds(0) : Seconds(e.timeout);
  p.attr = e.attr;
  return p;
}

kernel::OpenParams OpenParamsOf(const OpenOut& o) {
  kernel::OpenParams p;
  p.fh = o.fh;
  if (o.keep_cache) p.open_flags |= FOPEN_KEEP_CACHE;
  if (o.cache_dir) p.open_flags |= FOPEN_CACHE_DIR;
  return p;
}

bool ProcessInGroup(uint32_t pid, uint32_t gid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("Groups:")) continue;
    std::istringstream groups(line.substr(7));
    uint64_t g;
    while (groups >> g)
      if (g == gid) return true;
    return false;
  }
  return false;  // the caller is gone, or /proc says nothing: no extra groups
}

class KernelCall::Sink final : public DirentSink {
 public:
  explicit Sink(size_t max_bytes) : buffer_(max_bytes) {}
  bool Add(std::string_view name, const struct stat& st, off_t next) override {
    return buffer_.Add(st.st_ino, static_cast<uint64_t>(next), DirentType(st.st_mode), name);
  }
  bool AddPlus(std::string_view name, const EntryOut& entry, off_t next) override {
    return buffer_.AddPlus(EntryParamsOf(entry), static_cast<uint64_t>(next), DirentType(entry.attr.st_mode), name);
  }
  size_t used() const override { return buffer_.bytes().size(); }
  void Rewind(size_t mark) override { buffer_.Truncate(mark); }
  const std::string& bytes() const { return buffer_.bytes(); }

 private:
  kernel::DirentBuffer buffer_;
};

KernelCall::KernelCall(Context& ctx, kernel::DevFuseSession& session, const kernel::RequestHeader& header,
                       uint32_t umask)
    : Call(ctx), session_(session), header_(header), umask_(umask) {}

KernelCall::~KernelCall() = default;

bool KernelCall::InSupplementaryGroup(uint32_t gid) { return ProcessInGroup(header_.pid, gid); }

int KernelCall::Send(const kernel::Message& reply) {
  answered_ = true;
  return Delivered(session_.Answer(reply));
}

int KernelCall::Delivered(const Result<bool>& delivered) {
  if (!delivered.ok()) {
    if (write_error_.ok()) write_error_ = delivered.status();
    return -EIO;
  }
  return *delivered ? 0 : -ENOENT;
}

int KernelCall::SendError(int err) {
  return Send(err == 0 ? kernel::EmptyReply(header_.unique) : kernel::ErrorReply(header_.unique, err));
}

int KernelCall::ReplyEntry(const EntryOut& entry) { return Send(kernel::EntryReply(header_.unique, EntryParamsOf(entry))); }

int KernelCall::ReplyAttr(const struct stat& st, double timeout) {
  return Send(kernel::AttrReply(header_.unique, st, Seconds(timeout)));
}

kernel::OpenParams KernelCall::ChooseOpen(uint64_t ino, const OpenOut& open, OpenChoice* choice) {
  kernel::OpenParams p = OpenParamsOf(open);
  if (passthrough_ == nullptr) return p;
  *choice = passthrough_->Open(ino, open_flags_);
  p.fh = static_cast<uint64_t>(choice->kind);  // what its RELEASE ends
  switch (choice->kind) {
    // The kernel takes no other flags with passthrough (not FOPEN_KEEP_CACHE:
    // the inode's own page cache is not used).
    case OpenKind::kPassthroughRead:
    case OpenKind::kPassthroughWrite:
      p.open_flags = kernel::kOpenPassthrough;
      p.backing_id = choice->backing_id;
      break;
    case OpenKind::kDirectIo:
      p.open_flags = kernel::kOpenPassthrough | FOPEN_DIRECT_IO;
      p.backing_id = choice->backing_id;
      break;
    case OpenKind::kCached:
      break;
  }
  return p;
}

int KernelCall::Opened(int sent, uint64_t ino, const OpenChoice& choice) {
  if (sent != 0 && passthrough_ != nullptr) passthrough_->Release(ino, choice.kind);
  return sent;
}

int KernelCall::ReplyOpen(const OpenOut& open) {
  OpenChoice choice;
  const kernel::OpenParams p = ChooseOpen(header_.nodeid, open, &choice);
  return Opened(Send(kernel::OpenReply(header_.unique, p)), header_.nodeid, choice);
}

int KernelCall::ReplyCreate(const EntryOut& entry, const OpenOut& open) {
  OpenChoice choice;
  const kernel::OpenParams p = ChooseOpen(entry.ino, open, &choice);
  return Opened(Send(kernel::CreateReply(header_.unique, EntryParamsOf(entry), p)), entry.ino, choice);
}

int KernelCall::ReplyWrite(size_t written) { return Send(kernel::WriteReply(header_.unique, static_cast<uint32_t>(written))); }

int KernelCall::ReplyData(std::span<const iovec> pieces) {
  answered_ = true;
  return Delivered(session_.AnswerGathered(header_.unique, pieces));
}

int KernelCall::ReplyStatfs(const struct statvfs& st) { return Send(kernel::StatfsReply(header_.unique, st)); }

int KernelCall::ReplyXattrSize(size_t size) {
  return Send(kernel::XattrSizeReply(header_.unique, static_cast<uint32_t>(size)));
}

int KernelCall::ReplyLseek(off_t offset) { return Send(kernel::LseekReply(header_.unique, static_cast<uint64_t>(offset))); }

DirentSink& KernelCall::Dirents(size_t max_bytes) {
  sink_ = std::make_unique<Sink>(max_bytes);
  return *sink_;
}

int KernelCall::ReplyDirents() { return Send(kernel::DataReply(header_.unique, std::string_view(sink_->bytes()))); }

}  // namespace strata::fs
