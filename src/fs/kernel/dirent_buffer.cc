// READDIR and READDIRPLUS bodies (dirent_buffer.h).
#include "fs/kernel/dirent_buffer.h"

#include <cstddef>

#include "fs/kernel/request.h"

namespace strata::fs::kernel {

namespace {

constexpr size_t kDirentFixed = offsetof(fuse_dirent, name);
constexpr size_t kDirentPlusFixed = sizeof(fuse_entry_out) + kDirentFixed;
static_assert(kDirentFixed == 24 && kDirentPlusFixed == 152);

bool ValidName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameBytes && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

void DirentBuffer::AppendDirent(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name) {
  fuse_dirent d{};
  d.ino = ino;
  d.off = offset;
  d.namelen = static_cast<uint32_t>(name.size());
  d.type = type;
  size_t start = bytes_.size();
  bytes_.append(reinterpret_cast<const char*>(&d), kDirentFixed);
  bytes_.append(name);
  // Zero padding: the kernel copies whole records to user space's getdents.
  bytes_.resize(start + DirentRecordBytes(kDirentFixed, name.size()), '\0');
}

bool DirentBuffer::Add(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name) {
  if (!ValidName(name) || !Fits(DirentRecordBytes(kDirentFixed, name.size()))) return false;
  AppendDirent(ino, offset, type, name);
  return true;
}

bool DirentBuffer::AddPlus(const EntryParams& entry, uint64_t offset, uint32_t type, std::string_view name) {
  if (!ValidName(name) || !Fits(DirentRecordBytes(kDirentPlusFixed, name.size()))) return false;
  // The entry part is the same bytes an EntryReply carries after its header.
  Message reply = EntryReply(0, entry);
  bytes_.append(reply, sizeof(fuse_out_header), sizeof(fuse_entry_out));
  AppendDirent(entry.attr.st_ino, offset, type, name);
  return true;
}

}  // namespace strata::fs::kernel
