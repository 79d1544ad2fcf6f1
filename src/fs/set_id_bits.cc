// Set-id bits after a change (set_id_bits.h).
#include "fs/set_id_bits.h"

#include <sys/stat.h>

#include <cstdio>

#include "fs/fs_context.h"

namespace strata::fs {

namespace {
bool CallerInGroup(Call& call, gid_t gid) { return call.gid() == gid || call.InSupplementaryGroup(gid); }
}  // namespace

std::optional<uint32_t> ModeAfter(Call& call, SetIdChange change, uint32_t mode, gid_t gid) {
  if (!(mode & (S_ISUID | S_ISGID))) return std::nullopt;
  if (change == SetIdChange::kData ? !S_ISREG(mode) : S_ISDIR(mode)) return std::nullopt;
  uint32_t bits = mode & 07777 & ~S_ISUID;
  if (mode & S_ISGID) {
    const bool outside = !CallerInGroup(call, gid) && (change == SetIdChange::kData || call.uid() != 0);
    if ((mode & S_IXGRP) || outside) bits &= ~S_ISGID;
  }
  if (bits == (mode & 07777)) return std::nullopt;
  return bits;
}

void ClearSetIdAfter(Call& call, SetIdChange change, InodeId ino) {
  Context& ctx = call.ctx();
  auto a = ctx.ws->GetAttr(ino);
  if (!a.ok()) return;
  SetAttrRequest r;
  r.mode = ModeAfter(call, change, a->mode, a->gid);
  if (!r.mode) return;
  if (Status s = ctx.ws->SetAttr(ino, r).status(); !s.ok()) {
    std::fprintf(stderr, "strata: inode %llu keeps its set-id bits after a change: %s\n",
                 static_cast<unsigned long long>(ino), s.ToString().c_str());
    return;
  }
  if (ctx.notifier != nullptr) (void)ctx.notifier->InvalInode(ino, -1, 0);
}

}  // namespace strata::fs
