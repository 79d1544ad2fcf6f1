// Encoders of replies and notifications (reply.h).
#include <cerrno>

#include "fs/kernel/message_writer.h"
#include "fs/kernel/reply.h"
#include "fs/kernel/request.h"

namespace strata::fs::kernel {

namespace {

// The kernel refuses a reply whose error is not in (-512, 0].
constexpr int kMaxErrno = 511;

void SplitTimeout(std::chrono::nanoseconds t, uint64_t* sec, uint32_t* nsec) {
  if (t.count() < 0) t = std::chrono::nanoseconds(0);
  *sec = static_cast<uint64_t>(t.count() / 1'000'000'000);
  *nsec = static_cast<uint32_t>(t.count() % 1'000'000'000);
}

fuse_entry_out ToEntryOut(const EntryParams& e) {
  fuse_entry_out out{};
  out.nodeid = e.nodeid;
  out.generation = e.generation;
  SplitTimeout(e.entry_timeout, &out.entry_valid, &out.entry_valid_nsec);
  SplitTimeout(e.attr_timeout, &out.attr_valid, &out.attr_valid_nsec);
  out.attr = ToFuseAttr(e.attr);
  return out;
}

OpenOut ToOpenOut(const OpenParams& o) { return OpenOut{o.fh, o.open_flags, o.backing_id}; }

Status CheckNotifyName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("not an entry name to invalidate: '" + std::string(name) + "'");
  return Status::Ok();
}

}  // namespace

fuse_attr ToFuseAttr(const struct stat& st) {
  fuse_attr a{};
  a.ino = st.st_ino;
  a.size = static_cast<uint64_t>(st.st_size);
  a.blocks = static_cast<uint64_t>(st.st_blocks);
  a.atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  a.mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  a.ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  a.atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a.mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a.ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  a.mode = st.st_mode;
  a.nlink = static_cast<uint32_t>(st.st_nlink);
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.rdev = static_cast<uint32_t>(st.st_rdev);
  a.blksize = static_cast<uint32_t>(st.st_blksize);
  return a;
}

Message ErrorReply(uint64_t unique, int err) {
  if (err <= 0 || err > kMaxErrno) err = EIO;
  return MessageWriter(unique, -err).Take();
}

Message EmptyReply(uint64_t unique) { return MessageWriter(unique, 0).Take(); }

Message EntryReply(uint64_t unique, const EntryParams& entry) {
  return MessageWriter(unique, 0).Append(ToEntryOut(entry)).Take();
}

Message AttrReply(uint64_t unique, const struct stat& attr, std::chrono::nanoseconds timeout) {
  fuse_attr_out out{};
  SplitTimeout(timeout, &out.attr_valid, &out.attr_valid_nsec);
  out.attr = ToFuseAttr(attr);
  return MessageWriter(unique, 0).Append(out).Take();
}

Message OpenReply(uint64_t unique, const OpenParams& open) {
  return MessageWriter(unique, 0).Append(ToOpenOut(open)).Take();
}

Message CreateReply(uint64_t unique, const EntryParams& entry, const OpenParams& open) {
  return MessageWriter(unique, 0).Append(ToEntryOut(entry)).Append(ToOpenOut(open)).Take();
}

Message WriteReply(uint64_t unique, uint32_t written) {
  fuse_write_out out{};
  out.size = written;
  return MessageWriter(unique, 0).Append(out).Take();
}

Message StatfsReply(uint64_t unique, const struct statvfs& st) {
  fuse_statfs_out out{};
  out.st.blocks = st.f_blocks;
  out.st.bfree = st.f_bfree;
  out.st.bavail = st.f_bavail;
  out.st.files = st.f_files;
  out.st.ffree = st.f_ffree;
  out.st.bsize = static_cast<uint32_t>(st.f_bsize);
  out.st.namelen = static_cast<uint32_t>(st.f_namemax);
  out.st.frsize = static_cast<uint32_t>(st.f_frsize);
  return MessageWriter(unique, 0).Append(out).Take();
}

Message DataReply(uint64_t unique, std::span<const uint8_t> data) {
  return DataReply(unique, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

Message DataReply(uint64_t unique, std::string_view data) { return MessageWriter(unique, 0).Bytes(data).Take(); }

Message XattrSizeReply(uint64_t unique, uint32_t size) {
  fuse_getxattr_out out{};
  out.size = size;
  return MessageWriter(unique, 0).Append(out).Take();
}

Message LseekReply(uint64_t unique, uint64_t offset) {
  fuse_lseek_out out{};
  out.offset = offset;
  return MessageWriter(unique, 0).Append(out).Take();
}

Message NotifyInvalInode(uint64_t ino, int64_t offset, int64_t length) {
  fuse_notify_inval_inode_out out{ino, offset, length};
  return MessageWriter(0, FUSE_NOTIFY_INVAL_INODE).Append(out).Take();
}

Result<Message> NotifyInvalEntry(uint64_t parent, std::string_view name, uint32_t flags) {
  STRATA_RETURN_IF_ERROR(CheckNotifyName(name));
  fuse_notify_inval_entry_out out{parent, static_cast<uint32_t>(name.size()), flags};
  // The kernel reads namelen bytes and then requires a NUL.
  return MessageWriter(0, FUSE_NOTIFY_INVAL_ENTRY).Append(out).Bytes(name).Bytes(std::string_view("\0", 1)).Take();
}

Result<Message> NotifyDelete(uint64_t parent, uint64_t child, std::string_view name) {
  STRATA_RETURN_IF_ERROR(CheckNotifyName(name));
  fuse_notify_delete_out out{parent, child, static_cast<uint32_t>(name.size()), 0};
  return MessageWriter(0, FUSE_NOTIFY_DELETE).Append(out).Bytes(name).Bytes(std::string_view("\0", 1)).Take();
}

}  // namespace strata::fs::kernel
