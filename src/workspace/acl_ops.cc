// POSIX ACLs in the workspace: what the kernel leaves to a FUSE daemon that
// negotiated ACL support, done as ext4 does it (the rules are posix_acl.h's).
//
//   setxattr system.posix_acl_access   the mode's permission bits come from the
//                                      ACL; an ACL the mode says in full is not
//                                      stored (getxattr then gives ENODATA)
//   setxattr system.posix_acl_default  directories only (EACCES otherwise)
//   chmod                              a stored access ACL follows the mode
//   create, mkdir, mknod               a directory's default ACL restricts the
//                                      new mode and becomes its access ACL (and
//                                      a new directory's default ACL); without
//                                      one, the caller's umask applies
// Symlinks have no ACLs (EOPNOTSUPP). Both xattrs are stored and committed
// like any other, so a commit, its mounts and its export carry them.
#include <sys/stat.h>

#include <cerrno>

#include "workspace/posix_acl.h"
#include "workspace/sqlite_workspace.h"

namespace strata::workspace_internal {

Status SqliteWorkspace::SetAcl(InodeRow& row, std::string_view name, std::string_view value, bool kill_sgid) {
  if (S_ISLNK(row.mode)) return Errno(EOPNOTSUPP, "symlinks have no ACLs");
  STRATA_ASSIGN_OR_RETURN(PosixAcl acl, PosixAcl::Decode(value));
  if (name == kAclDefaultXattr) {
    if (!S_ISDIR(row.mode)) {
      if (!acl.empty()) return Errno(EACCES, "a default ACL on a non-directory");
      return Status::Ok();  // removing what cannot be there
    }
    if (acl.empty()) return db_->DeleteXattr(row.ino, name).status();
    return db_->PutXattr(row.ino, name, acl.Encode());
  }
  if (acl.empty()) return db_->DeleteXattr(row.ino, name).status();
  row.mode = (row.mode & ~0777u) | acl.ModeBits();
  // The kernel's rule for setting an access ACL: a caller outside the file's
  // group without CAP_FSETID loses the setgid bit.
  if (kill_sgid) row.mode &= ~static_cast<uint32_t>(S_ISGID);
  if (acl.EquivalentToMode()) return db_->DeleteXattr(row.ino, name).status();
  return db_->PutXattr(row.ino, name, acl.Encode());
}

Status SqliteWorkspace::RemoveAcl(const InodeRow& row, std::string_view name) {
  if (S_ISLNK(row.mode)) return Errno(EOPNOTSUPP, "symlinks have no ACLs");
  // As on ext4, removing an ACL that is not there succeeds.
  return db_->DeleteXattr(row.ino, name).status();
}

Status SqliteWorkspace::ChmodAcl(const InodeRow& row) {
  if (S_ISLNK(row.mode)) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(auto stored, db_->GetXattr(row.ino, kAclAccessXattr));
  if (!stored) return Status::Ok();
  Result<PosixAcl> acl = PosixAcl::Decode(*stored);
  // A value no kernel would have given us (a hand-made commit): left as it is,
  // the chmod still succeeds.
  if (!acl.ok() || acl->empty()) return Status::Ok();
  acl->Chmod(row.mode);
  return db_->PutXattr(row.ino, kAclAccessXattr, acl->Encode());
}

Result<std::vector<std::pair<std::string, std::string>>> SqliteWorkspace::InheritAcls(const InodeRow& dir,
                                                                                       InodeRow& proto,
                                                                                       uint32_t umask) {
  std::vector<std::pair<std::string, std::string>> acls;
  if (S_ISLNK(proto.mode)) return acls;
  STRATA_ASSIGN_OR_RETURN(auto stored, db_->GetXattr(dir.ino, kAclDefaultXattr));
  Result<PosixAcl> inherited = stored ? PosixAcl::Decode(*stored) : Result<PosixAcl>(PosixAcl());
  if (!inherited.ok() || inherited->empty()) {
    // No default ACL (or one no kernel would have set): the umask decides.
    proto.mode &= ~(umask & 0777u);
    return acls;
  }
  if (S_ISDIR(proto.mode)) acls.emplace_back(kAclDefaultXattr, inherited->Encode());
  proto.mode = inherited->RestrictForCreate(proto.mode);
  if (!inherited->EquivalentToMode()) acls.emplace_back(kAclAccessXattr, inherited->Encode());
  return acls;
}

}  // namespace strata::workspace_internal
