#!/usr/bin/env bash
# POSIX ACLs through a mount are what ext4 gives, and survive commit, a
# read-only mount of the commit and export:
#  - `cp -a` of /usr/include and of a tree with real ACLs into a mount keeps
#    every mode, owner, mtime and xattr (an ACL equal to the mode leaves no
#    system.posix_acl_access, as on ext4);
#  - the same commands run on ext4 and in the mount (setfacl with named users
#    and groups, a default ACL on a directory and entries created below it
#    afterwards, by root and by uid 65534 with a umask the default ACL
#    overrides; chmod of a file with an ACL; an ACL equal to the mode; setfacl
#    -b; setfacl by an owner outside the file's group, which drops setgid; the
#    umask where no default ACL is) leave the same modes and the same getfacl
#    output, path by path;
#  - uid 65534 (no supplementary groups) gets the same answers to read,
#    write and search/execute checks on both;
#  - after a commit, a read-only mount of it and an export to ext4 show the
#    same modes, ACLs and answers, also when exported into a directory that
#    has a default ACL of its own (nothing inherited from it stays);
#  - `strata import` of the ext4 tree carries its ACLs to a read-only mount
#    and back out through export.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v setfacl >/dev/null && command -v getfacl >/dev/null || { echo "SKIP: no setfacl/getfacl (package acl)" >&2; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv" >&2; exit 77; }
NOBODY=65534
# The scratch directory must be reachable by uid 65534 (mktemp made it 0700).
chmod 0755 "$WORK"
probe="$WORK/acl-probe"
touch "$probe"
setfacl -m u:$NOBODY:r "$probe" 2>/dev/null || { echo "SKIP: $WORK has no ACL support" >&2; exit 77; }
rm -f "$probe"

as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- "$@"; }

# make_acl_tree DIR: builds the same tree of ACLs wherever it runs.
make_acl_tree() {
  local T=$1
  (
    umask 022
    mkdir -m 0755 "$T"
    printf 'plain\n' >"$T/plain"
    printf '#!/bin/sh\necho run\n' >"$T/script" && chmod 0755 "$T/script"
    printf 'private\n' >"$T/private" && chmod 0600 "$T/private"
    printf 'named\n' >"$T/named" && chmod 0640 "$T/named"
    setfacl -m u:$NOBODY:rx "$T/named"           # readable by 65534 through its entry alone
    printf 'denied\n' >"$T/denied"
    setfacl -m u:$NOBODY:- "$T/denied"           # 0644, yet closed to 65534
    printf 'group\n' >"$T/group" && chmod 0600 "$T/group"
    setfacl -m g:$NOBODY:r "$T/group"            # 65534 reads it as a member of group 65534
    printf 'equal\n' >"$T/equal"
    setfacl -m u::rw,g::r,o::r "$T/equal"        # equal to the mode: no ACL stays
    printf 'stripped\n' >"$T/stripped"
    setfacl -m u:$NOBODY:rw "$T/stripped"
    setfacl -b "$T/stripped"                     # every extended entry removed again
    printf 'chmodded\n' >"$T/chmodded"
    setfacl -m u:$NOBODY:rwx "$T/chmodded"
    chmod 0604 "$T/chmodded"                     # the mask follows the group bits
    printf 'sgid\n' >"$T/sgid" && chown $NOBODY:0 "$T/sgid" && chmod 2775 "$T/sgid"
    as_nobody setfacl -m u:1:r "$T/sgid"         # owner outside group 0: setgid goes
    (umask 027 && printf 'masked\n' >"$T/masked" && mkdir "$T/masked-dir")
    mkdir -m 0750 "$T/shared"
    setfacl -m u:$NOBODY:rx "$T/shared"
    setfacl -d -m u::rwx,u:$NOBODY:rwx,g::rx,o::- "$T/shared"
    # Created after the default ACL: they inherit it, and the umask no longer applies.
    printf 'new\n' >"$T/shared/new"
    mkdir "$T/shared/sub"
    printf 'deep\n' >"$T/shared/sub/deep"
    (umask 077 && printf 'x\n' >"$T/shared/sub/umask077")
    mkfifo "$T/shared/fifo"
    ln -s new "$T/shared/link"
    as_nobody sh -c "umask 077 && printf 'n\n' >'$T/shared/sub/by-nobody' && mkdir '$T/shared/sub/nobody-dir'"
    chmod 0700 "$T/shared/sub/deep"
  )
}

# acl_listing DIR: for every path below DIR (sorted), its type, mode and
# owner, and getfacl's report (not for symlinks, whose ACL is their target's).
acl_listing() {
  (
    cd "$1"
    find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
      stat -c '%n %F %a %u %g' -- "$p"
      [[ -L $p ]] || getfacl -n -- "$p" 2>&1
    done
  )
}

# checks DIR MODES: uid 65534's answers to access(2) for each of MODES
# (r, w, x) on every path of the tree, and reads of its files.
checks() {
  local T=$1 modes=$2 p m
  for p in plain script private named denied group equal stripped chmodded sgid masked masked-dir shared \
           shared/new shared/sub shared/sub/deep shared/sub/umask077 shared/sub/by-nobody shared/sub/nobody-dir; do
    for m in $(grep -o . <<<"$modes"); do
      if as_nobody test -"$m" "$T/$p"; then echo "$m $p yes"; else echo "$m $p no"; fi
    done
    if [[ -f $T/$p ]]; then
      if as_nobody cat "$T/$p" >/dev/null 2>&1; then echo "cat $p ok"; else echo "cat $p denied"; fi
    fi
  done
}

# same_acls REF DIR WHAT: modes, owners and getfacl output of DIR equal REF's.
same_acls() {
  acl_listing "$1" >"$WORK/acls.ref" || fail "cannot list the ACLs of $1"
  acl_listing "$2" >"$WORK/acls.got" || fail "cannot list the ACLs of $2"
  grep -q "^user:$NOBODY:" "$WORK/acls.ref" || fail "the reference tree $1 holds no named-user ACL"
  diff -u "$WORK/acls.ref" "$WORK/acls.got" >&2 || fail "$3: modes or ACLs differ from ext4's"
}

# same_checks REF DIR MODES WHAT
same_checks() {
  checks "$1" "$3" >"$WORK/checks.ref"
  checks "$2" "$3" >"$WORK/checks.got"
  diff -u "$WORK/checks.ref" "$WORK/checks.got" >&2 || fail "$4: uid $NOBODY's permission checks differ from ext4's"
}

NATIVE="$WORK/native"
mkdir -m 0755 "$NATIVE"
step "the tree on ext4"
make_acl_tree "$NATIVE/tree"
# What the comparisons stand on: ext4's own answers.
acl_listing "$NATIVE/tree" >"$WORK/native.acls"
checks "$NATIVE/tree" rwx >"$WORK/native.checks"
for line in './plain regular file 644 0 0' './named regular file 650 0 0' './equal regular file 644 0 0' \
            './stripped regular file 644 0 0' './chmodded regular file 604 0 0' "./sgid regular file 775 $NOBODY 0" \
            './masked regular file 640 0 0' './masked-dir directory 750 0 0' './shared/new regular file 660 0 0' \
            './shared/sub directory 770 0 0' './shared/sub/umask077 regular file 660 0 0' \
            "./shared/sub/by-nobody regular file 660 $NOBODY $NOBODY"; do
  grep -qxF -- "$line" "$WORK/native.acls" || fail "ext4 does not give '$line' (the test's expectations are wrong)"
done
for line in 'cat named ok' 'cat denied denied' 'cat group ok' 'cat private denied' 'w shared/sub yes' \
            'cat shared/sub/by-nobody ok' 'x shared yes' 'w shared no'; do
  grep -qxF -- "$line" "$WORK/native.checks" || fail "ext4 does not give '$line' (the test's expectations are wrong)"
done

expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name acls "$MP"
chmod 0755 "$MP"

step "cp -a of /usr/include into the mount keeps every mode"
cp -a /usr/include "$MP/include" || fail "cp -a /usr/include failed"
assert_same_tree /usr/include "$MP/include"

step "cp -a of a tree with ACLs"
cp -a "$NATIVE/tree" "$MP/copy" || fail "cp -a of the ACL tree failed"
assert_same_tree "$NATIVE/tree" "$MP/copy"
same_acls "$NATIVE/tree" "$MP/copy" "cp -a"

step "the same commands in the mount"
make_acl_tree "$MP/built"
same_acls "$NATIVE/tree" "$MP/built" "built in the mount"
same_checks "$NATIVE/tree" "$MP/built" rwx "built in the mount"
same_checks "$NATIVE/tree" "$MP/copy" rwx "copied into the mount"

step "commit, then the commit mounted read-only"
expect_ok strata commit "$MP" -m acls --branch acl
expect_ok strata umount "$MP"
expect_ok strata mount --read-only acl "$MP"
same_acls "$NATIVE/tree" "$MP/built" "read-only mount, built"
same_acls "$NATIVE/tree" "$MP/copy" "read-only mount, copied"
assert_same_tree "$NATIVE/tree" "$MP/copy"
# Writes are EROFS on a read-only mount; reads and searches are the ACLs' to decide.
same_checks "$NATIVE/tree" "$MP/built" rx "read-only mount, built"
same_checks "$NATIVE/tree" "$MP/copy" rx "read-only mount, copied"
assert_same_metadata /usr/include "$MP/include"
expect_ok strata umount "$MP"

step "export to ext4"
expect_ok strata export acl "$WORK/out"
assert_same_tree "$NATIVE/tree" "$WORK/out/copy"
assert_same_tree /usr/include "$WORK/out/include"
same_acls "$NATIVE/tree" "$WORK/out/built" "exported, built"
same_checks "$NATIVE/tree" "$WORK/out/built" rwx "exported, built"

step "export into a directory with a default ACL: the entries get the commit's ACLs, not inherited ones"
mkdir -m 0755 "$WORK/out2"
setfacl -d -m u:$NOBODY:rwx "$WORK/out2"
expect_ok strata export acl "$WORK/out2"
assert_same_tree "$NATIVE/tree" "$WORK/out2/copy"
same_acls "$NATIVE/tree" "$WORK/out2/built" "exported into a directory with a default ACL"
left=$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$WORK/out2")
[[ $left == "[]" ]] || fail "the export's top directory keeps ACLs the commit does not have: $left"

step "import of the ext4 tree: its ACLs reach a read-only mount and an export"
expect_ok strata import "$NATIVE/tree" --branch imported -m "acl tree"
expect_ok strata mount --read-only imported "$MP"
same_acls "$NATIVE/tree" "$MP" "imported, read-only mount"
same_checks "$NATIVE/tree" "$MP" rx "imported, read-only mount"
expect_ok strata umount "$MP"
expect_ok strata export imported "$WORK/out3"
assert_same_tree "$NATIVE/tree" "$WORK/out3"
same_acls "$NATIVE/tree" "$WORK/out3" "imported, exported"
