// Which opens the kernel serves itself (passthrough.h).
#include "fs/passthrough.h"

#include <fcntl.h>

#include <cstdio>

namespace strata::fs {

std::optional<OpenChoice> PassthroughFiles::StartPassthrough(uint64_t ino, bool write, bool synced, Node& node,
                                                             bool* held) {
  if (backing_refused_) return std::nullopt;
  auto fd = ws_.OpenDirect(ino, write, synced);
  if (!fd.ok()) {
    *held = write && fd.status().errno_value() == EBUSY;
    if (*held) counters_.held.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  auto id = backing_.OpenBacking(*fd);
  if (!id.ok()) {
    ws_.CloseDirect(ino, write);
    // Without CAP_SYS_ADMIN every registration fails alike: stop asking.
    if (id.status().errno_value() == EPERM) {
      backing_refused_ = true;
      counters_.on.store(false);
      std::fprintf(stderr, "strata: FUSE passthrough off: %s\n", id.status().ToString().c_str());
    }
    return std::nullopt;
  }
  node.backing_id = *id;
  return OpenChoice{write ? OpenKind::kPassthroughWrite : OpenKind::kPassthroughRead, *id};
}

OpenChoice PassthroughFiles::Open(uint64_t ino, int flags) {
  const bool write = (flags & O_ACCMODE) != O_RDONLY;
  // Each write durable when it returns (O_SYNC includes O_DSYNC's bit).
  const bool synced = write && (flags & O_DSYNC) != 0;
  MutexLock lock(&mu_);
  Node& node = nodes_[ino];
  std::optional<OpenChoice> choice;
  bool held_out = false;  // counted as held, not as declined
  if (node.cached == 0 && node.passthrough > 0) {
    // The inode is in passthrough mode: this open must not be a cached one.
    auto fd = ws_.OpenDirect(ino, write, synced);
    if (fd.ok()) {
      choice = OpenChoice{write ? OpenKind::kPassthroughWrite : OpenKind::kPassthroughRead, node.backing_id};
    } else {
      // A cut holds writes (or the file's set-id bits need the daemon's
      // writes): this one's reads and writes go to the daemon, while the
      // inode stays in passthrough mode.
      (fd.status().errno_value() == EBUSY ? counters_.held : counters_.declined).fetch_add(1, std::memory_order_relaxed);
      node.passthrough++;
      return OpenChoice{OpenKind::kDirectIo, node.backing_id};
    }
  } else if (node.cached == 0) {
    choice = StartPassthrough(ino, write, synced, node, &held_out);
  }
  if (!choice) {
    node.cached++;
    if (!held_out) counters_.declined.fetch_add(1, std::memory_order_relaxed);
    return OpenChoice{OpenKind::kCached};
  }
  node.passthrough++;
  node.written |= write;
  counters_.opens.fetch_add(1, std::memory_order_relaxed);
  if (write) counters_.write_opens.fetch_add(1, std::memory_order_relaxed);
  return *choice;
}

void PassthroughFiles::Release(uint64_t ino, OpenKind kind) {
  bool drop_pages = false;
  {
    MutexLock lock(&mu_);
    auto it = nodes_.find(ino);
    if (it == nodes_.end()) return;
    Node& node = it->second;
    switch (kind) {
      case OpenKind::kCached:
        if (node.cached > 0) node.cached--;
        break;
      case OpenKind::kPassthroughRead:
      case OpenKind::kPassthroughWrite:
      case OpenKind::kDirectIo:
        if (node.passthrough == 0) break;
        if (kind != OpenKind::kDirectIo) ws_.CloseDirect(ino, kind == OpenKind::kPassthroughWrite);
        if (--node.passthrough == 0) {
          backing_.CloseBacking(node.backing_id);
          node.backing_id = -1;
          drop_pages = node.written;
          node.written = false;
        }
        break;
    }
    if (node.cached == 0 && node.passthrough == 0) nodes_.erase(it);
  }
  if (drop_pages && notifier_ != nullptr) (void)notifier_->InvalInode(ino, 0, 0);
}

}  // namespace strata::fs
