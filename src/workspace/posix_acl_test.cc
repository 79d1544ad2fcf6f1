// POSIX ACLs: the value rules (posix_acl.h) and the workspace applying them
// as ext4 does (acl_ops.cc). The expected modes and errnos are what ext4
// gives for the same calls (tests/cli/acl.sh compares a mount with ext4).
#include "workspace/posix_acl.h"

#include <sys/xattr.h>

#include <random>

#include "testing/workspace_test_util.h"

namespace strata::workspace_testing {
namespace {

constexpr uint32_t U = kAclUndefinedId;

std::string Value(std::initializer_list<AclEntry> entries) {
  PosixAcl acl;
  acl.entries = entries;
  return acl.Encode();
}

// rw-r--r-- as an ACL: what `cp -p` sets on a 0644 file.
const std::string kPlain644 = Value({{kAclUserObj, 6, U}, {kAclGroupObj, 4, U}, {kAclOther, 4, U}});
// user::rwx user:65534:r-x group::r-x mask::r-x other::---
const std::string kNamed = Value({{kAclUserObj, 7, U}, {kAclUser, 5, 65534}, {kAclGroupObj, 5, U},
                                  {kAclMask, 5, U}, {kAclOther, 0, U}});

TEST(PosixAclValue, EncodesAndDecodesTheKernelsFormat) {
  // Header 02 00 00 00, then tag, perm, id little-endian; unnamed ids read -1.
  EXPECT_EQ(kPlain644, std::string("\x02\0\0\0"
                                   "\x01\0\x06\0\xff\xff\xff\xff"
                                   "\x04\0\x04\0\xff\xff\xff\xff"
                                   "\x20\0\x04\0\xff\xff\xff\xff",
                                   28));
  auto acl = PosixAcl::Decode(kNamed);
  ASSERT_TRUE(acl.ok()) << acl.status().ToString();
  ASSERT_EQ(acl->entries.size(), 5u);
  EXPECT_EQ(acl->entries[1], (AclEntry{kAclUser, 5, 65534}));
  EXPECT_EQ(acl->Encode(), kNamed);
  EXPECT_FALSE(acl->EquivalentToMode());
  EXPECT_EQ(acl->ModeBits(), 0750u);  // the group class shows the mask
  auto plain = PosixAcl::Decode(kPlain644);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->EquivalentToMode());
  EXPECT_EQ(plain->ModeBits(), 0644u);
  // An id given to an unnamed entry is dropped, as the kernel drops it.
  auto with_ids = PosixAcl::Decode(Value({{kAclUserObj, 6, 3}, {kAclGroupObj, 4, 3}, {kAclOther, 4, 3}}));
  ASSERT_TRUE(with_ids.ok());
  EXPECT_EQ(with_ids->Encode(), kPlain644);
}

TEST(PosixAclValue, MalformedValuesAreRefusedAsTheKernelRefusesThem) {
  auto err = [](std::string_view v) {
    auto r = PosixAcl::Decode(v);
    return r.ok() ? 0 : r.status().errno_value();
  };
  EXPECT_EQ(err(kPlain644.substr(0, 3)), EINVAL);         // shorter than the header
  EXPECT_EQ(err(kPlain644 + "x"), EINVAL);                // not whole entries
  EXPECT_EQ(err(kPlain644.substr(0, 24)), EINVAL);        // torn entry
  EXPECT_EQ(err("\x01\0\0\0" + kPlain644.substr(4)), EOPNOTSUPP);  // version 1
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclGroupObj, 4, U}})), EINVAL);  // no other
  EXPECT_EQ(err(Value({{kAclGroupObj, 4, U}, {kAclOther, 4, U}})), EINVAL);    // no user_obj
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclOther, 4, U}})), EINVAL);     // no group_obj
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclUser, 4, 5}, {kAclGroupObj, 4, U}, {kAclOther, 4, U}})),
            EINVAL);  // a named entry needs a mask
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclUser, 4, U}, {kAclGroupObj, 4, U}, {kAclMask, 4, U},
                       {kAclOther, 4, U}})),
            EINVAL);  // a named entry without an id
  EXPECT_EQ(err(Value({{kAclUserObj, 8 | 6, U}, {kAclGroupObj, 4, U}, {kAclOther, 4, U}})), EINVAL);  // perm
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {0x40, 4, U}, {kAclGroupObj, 4, U}, {kAclOther, 4, U}})),
            EINVAL);  // unknown tag
  EXPECT_EQ(err(Value({{kAclGroupObj, 4, U}, {kAclUserObj, 6, U}, {kAclOther, 4, U}})), EINVAL);  // order
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclUserObj, 6, U}, {kAclGroupObj, 4, U}, {kAclOther, 4, U}})),
            EINVAL);  // twice
  // Named entries in any order, even repeated, pass: the kernel accepts them too.
  EXPECT_EQ(err(Value({{kAclUserObj, 6, U}, {kAclUser, 4, 7}, {kAclUser, 4, 5}, {kAclUser, 4, 5},
                       {kAclGroupObj, 4, U}, {kAclMask, 7, U}, {kAclOther, 4, U}})),
            0);
  // Empty and header-only values are the empty ACL ("none").
  EXPECT_EQ(err(""), 0);
  auto header_only = PosixAcl::Decode(std::string("\x02\0\0\0", 4));
  ASSERT_TRUE(header_only.ok());
  EXPECT_TRUE(header_only->empty());
}

TEST(PosixAclValue, ChmodAndCreateFollowTheKernelsRules) {
  PosixAcl acl = std::move(PosixAcl::Decode(kNamed)).value();
  acl.Chmod(0640);
  // user_obj, mask and other take the mode; group_obj and named entries stay.
  EXPECT_EQ(acl.Encode(), Value({{kAclUserObj, 6, U}, {kAclUser, 5, 65534}, {kAclGroupObj, 5, U},
                                 {kAclMask, 4, U}, {kAclOther, 0, U}}));
  PosixAcl plain = std::move(PosixAcl::Decode(kPlain644)).value();
  plain.Chmod(0751);  // without a mask, group_obj takes the group bits
  EXPECT_EQ(plain.Encode(), Value({{kAclUserObj, 7, U}, {kAclGroupObj, 5, U}, {kAclOther, 1, U}}));

  // A default ACL user::rwx user:65534:rwx group::r-x mask::rwx other::r-x
  // and a file created 0666: the classes keep what both allow.
  const std::string dflt = Value({{kAclUserObj, 7, U}, {kAclUser, 7, 65534}, {kAclGroupObj, 5, U},
                                  {kAclMask, 7, U}, {kAclOther, 5, U}});
  PosixAcl file = std::move(PosixAcl::Decode(dflt)).value();
  EXPECT_EQ(file.RestrictForCreate(S_IFREG | 0666), static_cast<uint32_t>(S_IFREG | 0664));
  EXPECT_EQ(file.Encode(), Value({{kAclUserObj, 6, U}, {kAclUser, 7, 65534}, {kAclGroupObj, 5, U},
                                  {kAclMask, 6, U}, {kAclOther, 4, U}}));
  PosixAcl dir = std::move(PosixAcl::Decode(dflt)).value();
  EXPECT_EQ(dir.RestrictForCreate(S_IFDIR | 02777), static_cast<uint32_t>(S_IFDIR | 02775));
}

// Random values and random edits of valid ones: Decode never reads past the
// value; what it accepts encodes to one canonical value that decodes to the
// same entries, and chmod and create keep it valid. (Not a fuzz target: a
// few hundred thousand inputs each run.)
TEST(PosixAclValue, RandomValuesDecodeSafelyAndWhatIsAcceptedRoundTrips) {
  std::mt19937_64 rng(20261201);
  const std::vector<std::string> seeds = {kPlain644, kNamed,
                                          Value({{kAclUserObj, 7, U}, {kAclUser, 7, 1}, {kAclUser, 5, 2},
                                                 {kAclGroupObj, 5, U}, {kAclGroup, 1, 3}, {kAclMask, 7, U},
                                                 {kAclOther, 0, U}})};
  int accepted = 0;
  for (int i = 0; i < 300000; i++) {
    std::string v;
    if (i % 3 == 0) {
      v.resize(rng() % 64);
      for (char& c : v) c = static_cast<char>(rng());
      if (v.size() >= 4 && rng() % 2) v.replace(0, 4, std::string("\x02\0\0\0", 4));
    } else {
      v = seeds[rng() % seeds.size()];
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; edits--) {
        size_t at = 4 + rng() % (v.size() - 4);
        switch (rng() % 4) {
          case 0: v[at] = static_cast<char>(rng() % 0x41); break;  // tags and perms in range, mostly
          case 1: v[at] ^= static_cast<char>(1 << (rng() % 8)); break;
          case 2: v.erase(at, 1 + rng() % 8); break;
          default: v.insert(at, v.substr(at, std::min<size_t>(8, v.size() - at))); break;
        }
        if (v.size() <= 4) break;
      }
    }
    auto acl = PosixAcl::Decode(v);
    if (!acl.ok()) {
      EXPECT_TRUE(acl.status().errno_value() == EINVAL || acl.status().errno_value() == EOPNOTSUPP);
      continue;
    }
    accepted++;
    const std::string canonical = acl->Encode();
    auto again = PosixAcl::Decode(canonical);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    if (!acl->empty()) {
      EXPECT_EQ(again->entries, acl->entries);
      EXPECT_EQ(again->Encode(), canonical);
    }
    EXPECT_EQ(acl->ModeBits() & ~0777u, 0u);
    PosixAcl changed = *acl;
    changed.Chmod(static_cast<uint32_t>(rng()) & 07777);
    if (!changed.empty()) {
      EXPECT_TRUE(PosixAcl::Decode(changed.Encode()).ok());
    }
    PosixAcl created = *acl;
    const uint32_t mode = S_IFREG | (static_cast<uint32_t>(rng()) & 07777);
    const uint32_t new_mode = created.RestrictForCreate(mode);
    EXPECT_EQ(new_mode & ~0777u, mode & ~0777u);
    EXPECT_EQ(new_mode & 0777u & ~mode, 0u);  // never more than was asked for
    if (!created.empty()) {
      EXPECT_EQ(created.ModeBits(), new_mode & 0777u);
    }
  }
  EXPECT_GT(accepted, 1000);  // the edits reach valid values, not only refusals
}

class AclWorkspace : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    ws_ = CreateAndOpen(std::nullopt);
    ASSERT_NE(ws_, nullptr);
  }

  std::unique_ptr<Workspace> ws_;

  uint32_t Mode(InodeId ino) { return ws_->GetAttr(ino).value().mode & 07777; }
  int GetErr(InodeId ino, std::string_view name) { return Errno(ws_->GetXattr(ino, name)); }
};

TEST_F(AclWorkspace, AnAccessAclSetsTheModeAndIsStoredOnlyWhenTheModeCannotSayIt) {
  // cp -p: the file is created 0600, then given an ACL equal to 0644.
  Attr f = Mk(*ws_, kRootInode, "f");
  ASSERT_TRUE(ws_->SetAttr(f.ino, SetAttrRequest{.mode = 0600}).ok());
  ASSERT_TRUE(ws_->SetXattr(f.ino, kAclAccessXattr, kPlain644, 0).ok());
  EXPECT_EQ(Mode(f.ino), 0644u);
  EXPECT_EQ(GetErr(f.ino, kAclAccessXattr), ENODATA);
  EXPECT_TRUE(ws_->ListXattrs(f.ino).value().empty());
  // A named user: stored as given, and the group class shows the mask.
  ASSERT_TRUE(ws_->SetXattr(f.ino, kAclAccessXattr, kNamed, XATTR_REPLACE).ok());
  EXPECT_EQ(Mode(f.ino), 0750u);
  EXPECT_EQ(ws_->GetXattr(f.ino, kAclAccessXattr).value(), kNamed);
  // chmod changes user_obj, mask and other of the stored ACL.
  ASSERT_TRUE(ws_->SetAttr(f.ino, SetAttrRequest{.mode = 0604}).ok());
  EXPECT_EQ(ws_->GetXattr(f.ino, kAclAccessXattr).value(),
            Value({{kAclUserObj, 6, U}, {kAclUser, 5, 65534}, {kAclGroupObj, 5, U}, {kAclMask, 0, U},
                   {kAclOther, 4, U}}));
  EXPECT_EQ(Mode(f.ino), 0604u);
  // Removing it leaves the mode; removing it again is no error (ext4).
  ASSERT_TRUE(ws_->RemoveXattr(f.ino, kAclAccessXattr).ok());
  EXPECT_EQ(GetErr(f.ino, kAclAccessXattr), ENODATA);
  EXPECT_EQ(Mode(f.ino), 0604u);
  EXPECT_TRUE(ws_->RemoveXattr(f.ino, kAclAccessXattr).ok());
  // An ordinary xattr that is not there still is ENODATA.
  EXPECT_EQ(Errno(ws_->RemoveXattr(f.ino, "user.none")), ENODATA);
}

TEST_F(AclWorkspace, BadAclsAreRefusedAndChangeNothing) {
  Attr f = Mk(*ws_, kRootInode, "f");
  Attr d = Mkdir(*ws_, kRootInode, "d");
  ASSERT_TRUE(ws_->MakeSymlink(kRootInode, "l", "f", kWho).ok());
  InodeId l = L(*ws_, kRootInode, "l").ino;
  EXPECT_EQ(Errno(ws_->SetXattr(f.ino, kAclAccessXattr, kNamed.substr(0, 20), 0)), EINVAL);
  EXPECT_EQ(Errno(ws_->SetXattr(f.ino, kAclAccessXattr, "\x01\0\0\0" + kNamed.substr(4), 0)), EOPNOTSUPP);
  EXPECT_EQ(Errno(ws_->SetXattr(f.ino, kAclDefaultXattr, kNamed, 0)), EACCES);  // not a directory
  EXPECT_TRUE(ws_->RemoveXattr(f.ino, kAclDefaultXattr).ok());
  EXPECT_EQ(Errno(ws_->SetXattr(l, kAclAccessXattr, kPlain644, 0)), EOPNOTSUPP);
  EXPECT_EQ(Errno(ws_->RemoveXattr(l, kAclAccessXattr)), EOPNOTSUPP);
  EXPECT_EQ(Mode(f.ino), 0644u);
  EXPECT_TRUE(ws_->ListXattrs(f.ino).value().empty());
  EXPECT_TRUE(ws_->ListXattrs(d.ino).value().empty());
}

TEST_F(AclWorkspace, NewEntriesTakeTheDirectorysDefaultAclOrElseTheUmask) {
  const Credentials who{1000, 1000, 022};
  // Without a default ACL the umask applies (the kernel passes it on).
  auto plain = ws_->MakeNode(kRootInode, "plain", S_IFREG | 0666, 0, who);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->mode & 07777, 0644u);
  auto plain_dir = ws_->MakeDirectory(kRootInode, "plain_dir", 0777, who);
  ASSERT_TRUE(plain_dir.ok());
  EXPECT_EQ(plain_dir->mode & 07777, 0755u);

  // setfacl -d -m u:65534:rwx d: the umask no longer applies below d.
  Attr d = Mkdir(*ws_, kRootInode, "d");
  const std::string dflt = Value({{kAclUserObj, 7, U}, {kAclUser, 7, 65534}, {kAclGroupObj, 5, U},
                                  {kAclMask, 7, U}, {kAclOther, 5, U}});
  ASSERT_TRUE(ws_->SetXattr(d.ino, kAclDefaultXattr, dflt, 0).ok());
  EXPECT_EQ(Mode(d.ino), 0755u);  // a default ACL leaves the mode alone
  auto f = ws_->MakeNode(d.ino, "f", S_IFREG | 0666, 0, who);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->mode & 07777, 0664u);
  EXPECT_EQ(ws_->GetXattr(f->ino, kAclAccessXattr).value(),
            Value({{kAclUserObj, 6, U}, {kAclUser, 7, 65534}, {kAclGroupObj, 5, U}, {kAclMask, 6, U},
                   {kAclOther, 4, U}}));
  EXPECT_EQ(GetErr(f->ino, kAclDefaultXattr), ENODATA);
  auto sub = ws_->MakeDirectory(d.ino, "sub", 0777, who);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->mode & 07777, 0775u);
  EXPECT_EQ(ws_->GetXattr(sub->ino, kAclDefaultXattr).value(), dflt);
  EXPECT_EQ(ws_->GetXattr(sub->ino, kAclAccessXattr).value(), dflt);  // rwx everywhere: nothing restricted
  // And on down: a file in sub inherits sub's default ACL.
  auto deep = ws_->MakeNode(sub->ino, "deep", S_IFREG | 0600, 0, who);
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->mode & 07777, 0600u);
  // Symlinks take no ACL and no umask.
  ASSERT_TRUE(ws_->MakeSymlink(d.ino, "l", "f", who).ok());
  InodeId l = L(*ws_, d.ino, "l").ino;
  EXPECT_TRUE(ws_->ListXattrs(l).value().empty());
  EXPECT_EQ(Mode(l), 0777u);

  // A default ACL equal to a mode: the new file's access ACL is not stored.
  Attr e = Mkdir(*ws_, kRootInode, "e");
  ASSERT_TRUE(ws_->SetXattr(e.ino, kAclDefaultXattr, kPlain644, 0).ok());
  EXPECT_EQ(ws_->GetXattr(e.ino, kAclDefaultXattr).value(), kPlain644);  // a default ACL is kept as set
  auto g = ws_->MakeNode(e.ino, "g", S_IFREG | 0666, 0, who);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->mode & 07777, 0644u);
  EXPECT_TRUE(ws_->ListXattrs(g->ino).value().empty());
}

TEST_F(AclWorkspace, SettingAnAccessAclOutsideTheGroupClearsSetgid) {
  Attr f = Mk(*ws_, kRootInode, "f");
  ASSERT_TRUE(ws_->SetAttr(f.ino, SetAttrRequest{.mode = 02755}).ok());
  ASSERT_TRUE(ws_->SetXattr(f.ino, kAclAccessXattr, kNamed, 0).ok());
  EXPECT_EQ(Mode(f.ino), 02750u);
  ASSERT_TRUE(ws_->SetXattr(f.ino, kAclAccessXattr, kNamed, kSetAclKillSgid).ok());
  EXPECT_EQ(Mode(f.ino), 0750u);
}

TEST_F(AclWorkspace, AclsAreCommittedAndComeBackInAWorkspaceOnTheCommit) {
  Attr d = Mkdir(*ws_, kRootInode, "d");
  ASSERT_TRUE(ws_->SetXattr(d.ino, kAclDefaultXattr, kNamed, 0).ok());
  auto f = ws_->MakeNode(d.ino, "f", S_IFREG | 0640, 0, kWho);
  ASSERT_TRUE(f.ok());
  auto outcome = ws_->Commit(CommitRequest{"acls", "t", ""});
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_TRUE(outcome->commit);
  auto again = CreateAndOpen(*outcome->commit, "again");
  ASSERT_NE(again, nullptr);
  Attr d2 = L(*again, kRootInode, "d");
  Attr f2 = L(*again, d2.ino, "f");
  EXPECT_EQ(again->GetXattr(d2.ino, kAclDefaultXattr).value(), kNamed);
  EXPECT_EQ(f2.mode & 07777, 0640u);
  EXPECT_EQ(again->GetXattr(f2.ino, kAclAccessXattr).value(),
            Value({{kAclUserObj, 6, U}, {kAclUser, 5, 65534}, {kAclGroupObj, 5, U}, {kAclMask, 4, U},
                   {kAclOther, 0, U}}));
  // chmod of a base file with an ACL updates the ACL too.
  ASSERT_TRUE(again->SetAttr(f2.ino, SetAttrRequest{.mode = 0600}).ok());
  EXPECT_EQ(again->GetXattr(f2.ino, kAclAccessXattr).value(),
            Value({{kAclUserObj, 6, U}, {kAclUser, 5, 65534}, {kAclGroupObj, 5, U}, {kAclMask, 0, U},
                   {kAclOther, 0, U}}));
}

}  // namespace
}  // namespace strata::workspace_testing
