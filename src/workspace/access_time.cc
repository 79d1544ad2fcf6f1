// Access times moved by reads (`strata mount --atime relatime|strictatime`).
//
// The kernel never sets atime on a FUSE file itself (its inodes are
// S_NOATIME); after each READ it marks its cached atime stale and asks for
// the attributes again at the next stat. So the daemon moves atime when a
// READ reaches it. Reads the kernel serves from its page cache never reach
// the daemon and move nothing: atime says when the file's bytes were last
// read from the workspace, at most as often as the page cache lets it see.
//
// A moved atime is written as the row's atime only: ctime and the row's
// "changed" mark stay, since trees record no atime and a file that is only
// read must not become a change to commit.
#include <sys/stat.h>

#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

namespace {
constexpr int64_t kDayNs = int64_t{24} * 3600 * 1000000000;

// The relatime rule of the kernel's own filesystems (relatime_need_update).
bool RelativeNeedsUpdate(const InodeRow& row, int64_t now) {
  return row.atime_ns <= row.mtime_ns || row.atime_ns <= row.ctime_ns || now - row.atime_ns >= kDayNs;
}
}  // namespace

Status SqliteWorkspace::NoteRead(InodeId ino, AtimeRule rule) {
  MutexLock lock(&mu_);
  STRATA_ASSIGN_OR_RETURN(InodeRow row, Inode(ino));
  if (!S_ISREG(row.mode)) return Status::Ok();
  const int64_t now = NowNs();
  if (rule == AtimeRule::kRelative && !RelativeNeedsUpdate(row, now)) return Status::Ok();
  Transaction txn(*db_);
  STRATA_RETURN_IF_ERROR(txn.status());
  row.atime_ns = now;
  STRATA_RETURN_IF_ERROR(db_->UpdateInode(row));
  return txn.Commit();
}

}  // namespace strata::workspace_internal
