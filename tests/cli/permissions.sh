#!/usr/bin/env bash
# Permissions, as root with two unprivileged users (numeric ids, run with
# setpriv; nothing is added to /etc/passwd):
#  - nothing under a store is readable, writable or searchable by other users,
#    whatever the umask, after init (also of a directory made beforehand),
#    import, mount, writes, commit and umount: packs, index, config, the
#    workspace database and its WAL, data files, logs and the control socket;
#    another user's strata command on the store fails with "permission denied";
#  - through a mount made by root (allow_other + default_permissions), the
#    kernel's rules hold between two non-root users, compared operation by
#    operation with a plain directory on the local disk: a 0600 file of one is
#    unreadable by the other, a 0755 directory of one is closed to the other's
#    entries (EACCES) and open to its owner's; setuid and setgid bits are
#    cleared by the writes, truncate(2) calls, chowns and chmods that clear
#    them on ext4; a setgid directory passes
#    its group on, also to a member that is not the owner; a sticky directory
#    keeps one user from deleting, renaming or replacing the other's entries
#    (EPERM) while its owner may; and all of this holds again for the same
#    files after a commit, mounted from the branch.
# tests/mount's conformance suite covers root's files against uid 65534; this
# covers two users, the set-id rules it does not, and the store itself.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v setpriv >/dev/null || { echo "SKIP: no setpriv" >&2; exit 77; }

UA=61001    # user A, in the shared group
UB=61002    # user B, in the shared group
UC=61003    # user C, in no group but its own
SHARED=61100
# The test users need a Python they can run (not one under root's home).
PY=/usr/bin/python3
[[ -x $PY ]] || { echo "SKIP: no /usr/bin/python3" >&2; exit 77; }

# as USER CMD...: CMD as that user (its own group, plus the shared group for A and B).
as() {
  local uid=$1
  shift
  local groups=$SHARED
  [[ $uid == "$UC" ]] && groups=$uid
  setpriv --reuid="$uid" --regid="$uid" --groups="$groups" -- "$@"
}

# The scratch directory must be reachable by the test users (mktemp made it 0700).
chmod 0755 "$WORK"

# assert_private DIR WHEN: no path under DIR (nor DIR) has any group or other
# permission bit.
assert_private() {
  local open
  open=$(find "$1" -perm /077 -printf '%m %y %p\n' | head -n 20)
  [[ -z $open ]] || fail "$2: paths under the store open to other users:"$'\n'"$open"
}

step "a store is private to its owner, whatever the umask"
mkdir -m 0755 "$WORK/premade"
(umask 000 && "$STRATA_BIN" init "$WORK/premade" >/dev/null) || fail "init of an empty directory failed"
assert_private "$WORK/premade" "init of a directory made beforehand (umask 000)"
(umask 022 && "$STRATA_BIN" init "$STORE" >/dev/null) || fail "init failed"
assert_private "$STORE" "after init"
SRC="$WORK/src"
mkdir -p "$SRC/sub"
printf 'secret data\n' >"$SRC/sub/file"
head -c 300000 /dev/urandom >"$SRC/big"
(umask 000 && "$STRATA_BIN" --store "$STORE" import "$SRC" --branch main -m first >/dev/null) || fail "import failed"
assert_private "$STORE" "after import (umask 000)"

step "the workspace's state, while mounted and after"
(umask 000 && "$STRATA_BIN" --store "$STORE" mount --branch main --name priv "$MP" >/dev/null) || fail "mount failed"
printf 'new file\n' >"$MP/new"
head -c 200000 /dev/urandom >>"$MP/big"
sync -f "$MP/new"
[[ -n $(find "$STORE/workspaces" -type s) ]] || fail "no control socket under $STORE/workspaces while mounted"
assert_private "$STORE" "while mounted, after writes (umask 000)"
(umask 000 && "$STRATA_BIN" --store "$STORE" commit "$MP" -m second >/dev/null) || fail "commit failed"
assert_private "$STORE" "after a commit through the mount"
# Another user can neither read the store nor talk to the daemon.
chmod 0755 "$MP"
expect_exit 1 as "$UA" "$STRATA_BIN" --store "$STORE" log
expect_stderr_matches 'permission denied'
expect_exit 1 as "$UA" "$STRATA_BIN" --store "$STORE" commit priv -m stolen
expect_exit 1 as "$UA" "$STRATA_BIN" --store "$STORE" workspace end priv --discard
run as "$UA" cat "$(find "$STORE/packs" -name '*.pack' | head -n 1)"
(( RC != 0 )) || fail "user $UA read a pack file"
for sock in $(find "$STORE/workspaces" -type s); do
  run as "$UA" "$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$sock"
  (( RC != 0 )) || fail "user $UA connected to the control socket $sock"
done
expect_ok strata umount "$MP"
assert_private "$STORE" "after umount"
expect_ok strata workspace end priv --discard   # (the chmod of its top directory)
expect_ok strata log main --json
json_true '[c["message"] for c in d] == ["second", "first"]'

# ---------------------------------------------------------------------------
# The mount against a native directory. perm_sequence ROOT runs the same
# operations below ROOT (as root, A, B and C) and prints one line per
# operation: what it was and its result (ok, an errno name, or the mode/owner
# it left). The caller compares the two runs line by line.
perm_sequence() {
  local R=$1
  # op NAME USER PYTHON: runs a Python statement as USER with os, errno and p
  # (a path below R) at hand; prints NAME and ok or the errno name.
  op() {
    local name=$1 user=$2 code=$3
    local py='
import errno, os, sys
R = sys.argv[1]
p = lambda n: os.path.join(R, n)
def w(path, data=b"x", flags=os.O_WRONLY):
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
def r(path):
    with open(path, "rb") as f:
        return f.read()
try:
    exec(sys.argv[2])
    print(sys.argv[3], "ok")
except OSError as e:
    print(sys.argv[3], errno.errorcode[e.errno])'
    if [[ $user == root ]]; then
      "$PY" -c "$py" "$R" "$code" "$name"
    else
      as "$user" "$PY" -c "$py" "$R" "$code" "$name"
    fi
  }
  st() {  # st NAME PATH: mode, owner and group left on PATH
    echo "$1 $(stat -c '%04a %u %g' "$R/$2" 2>/dev/null || echo missing)"
  }
  mkdir -m 01777 "$R/top"
  chmod 01777 "$R/top"

  # Private files and directories between two users.
  op a-home     "$UA" 'os.mkdir(p("top/a"), 0o755)'
  op a-secret   "$UA" 'w(p("top/a/secret"), b"a only", os.O_WRONLY | os.O_CREAT)'
  op a-chmod    "$UA" 'os.chmod(p("top/a/secret"), 0o600)'
  op a-pub      "$UA" 'w(p("top/a/pub"), b"public", os.O_WRONLY | os.O_CREAT)'
  op b-read-sec "$UB" 'r(p("top/a/secret"))'
  op b-write-sec "$UB" 'w(p("top/a/secret"))'
  op b-read-pub "$UB" 'r(p("top/a/pub"))'
  op b-create-in-a "$UB" 'w(p("top/a/b-file"), b"b", os.O_WRONLY | os.O_CREAT)'
  op b-mkdir-in-a  "$UB" 'os.mkdir(p("top/a/b-dir"))'
  op b-unlink-in-a "$UB" 'os.unlink(p("top/a/pub"))'
  op b-rename-in-a "$UB" 'os.rename(p("top/a/pub"), p("top/a/pub2"))'
  op b-link-in-a   "$UB" 'os.link(p("top/a/pub"), p("top/a/pub-link"))'
  op b-symlink-in-a "$UB" 'os.symlink("pub", p("top/a/pub-sym"))'
  op b-chmod-a     "$UB" 'os.chmod(p("top/a/pub"), 0o666)'
  op b-home     "$UB" 'os.mkdir(p("top/b"), 0o755)'
  op b-own-file "$UB" 'w(p("top/b/f"), b"b", os.O_WRONLY | os.O_CREAT)'
  op a-create-in-b "$UA" 'w(p("top/b/a-file"), b"a", os.O_WRONLY | os.O_CREAT)'
  op a-own-file "$UA" 'w(p("top/a/g"), b"a", os.O_WRONLY | os.O_CREAT)'
  st a-secret-mode top/a/secret

  # Set-id bits, cleared as the kernel's rules say (should_remove_suid,
  # setattr_prepare): a write or truncate by anyone without CAP_FSETID clears
  # setuid, and setgid when group-exec is set; a chown clears both, even by
  # root; a chmod g+s by an owner outside the file's group drops the setgid bit.
  # Not here, because the mount differs from ext4 (docs/guarantees.md, "Not
  # guaranteed yet"): a write to a setgid file without group exec by a user
  # outside the file's group (the kernel's FUSE code clears setgid on a write
  # only when group-exec is set).
  op mk-suid    "$UA" 'w(p("top/a/suid"), b"1", os.O_WRONLY | os.O_CREAT); os.chmod(p("top/a/suid"), 0o6777)'
  op owner-write "$UA" 'w(p("top/a/suid"))'
  st suid-after-owner-write top/a/suid
  op mk-suid2   "$UA" 'os.chmod(p("top/a/suid"), 0o6777)'
  op other-write "$UB" 'w(p("top/a/suid"))'
  st suid-after-other-write top/a/suid
  op mk-suid3   "$UA" 'os.chmod(p("top/a/suid"), 0o6777)'
  op other-trunc "$UB" 'os.truncate(p("top/a/suid"), 0)'
  st suid-after-truncate top/a/suid
  op mk-suid4   "$UA" 'os.chmod(p("top/a/suid"), 0o6777)'
  op other-open-trunc "$UB" 'os.close(os.open(p("top/a/suid"), os.O_WRONLY | os.O_TRUNC))'
  st suid-after-open-trunc top/a/suid
  op mk-suid6   "$UA" 'os.chmod(p("top/a/suid"), 0o6757)'
  op other-open-trunc-nox "$UB" 'os.close(os.open(p("top/a/suid"), os.O_WRONLY | os.O_TRUNC))'
  st suid-after-open-trunc-nox top/a/suid
  op mk-suid7   "$UA" 'os.chmod(p("top/a/suid"), 0o6777)'
  op root-open-trunc root 'os.close(os.open(p("top/a/suid"), os.O_WRONLY | os.O_TRUNC))'
  st suid-after-root-open-trunc top/a/suid
  op mk-suid5   "$UA" 'os.chmod(p("top/a/suid"), 0o6755)'
  op root-write root 'w(p("top/a/suid"))'
  st suid-after-root-write top/a/suid
  op root-chown root "os.chown(p('top/a/suid'), $UB, -1)"
  st suid-after-root-chown top/a/suid
  op a-sgid-foreign-group "$UA" 'w(p("top/a/sg"), b"1", os.O_WRONLY | os.O_CREAT)'
  op root-chgrp root "os.chown(p('top/a/sg'), -1, $UC)"
  op a-chmod-gs "$UA" 'os.chmod(p("top/a/sg"), 0o2755)'
  st sgid-by-owner-outside-group top/a/sg

  # Setgid directories pass their group on, also to a member that is not the owner.
  op a-sgdir    "$UA" 'os.mkdir(p("top/sgd"), 0o775)'
  op root-sgdir root "os.chown(p('top/sgd'), -1, $SHARED); os.chmod(p('top/sgd'), 0o2775)"
  op b-in-sgdir "$UB" 'w(p("top/sgd/bf"), b"b", os.O_WRONLY | os.O_CREAT)'
  op b-dir-in-sgdir "$UB" 'os.mkdir(p("top/sgd/bd"), 0o755)'
  st sgdir-file top/sgd/bf
  st sgdir-subdir top/sgd/bd
  op root-open-sgdir root 'os.chmod(p("top/sgd"), 0o2777)'
  op c-in-sgdir "$UC" 'os.close(os.open(p("top/sgd/cf"), os.O_WRONLY | os.O_CREAT, 0o2755))'
  st sgdir-file-by-nonmember top/sgd/cf
  op c-mkdir-in-sgdir "$UC" 'os.mkdir(p("top/sgd/cd"), 0o2755)'
  st sgdir-subdir-by-nonmember top/sgd/cd

  # A sticky directory (top, 01777, root's): only an entry's owner, the
  # directory's owner or root may remove or rename it.
  op a-in-top   "$UA" 'w(p("top/a-entry"), b"a", os.O_WRONLY | os.O_CREAT)'
  op b-in-top   "$UB" 'w(p("top/b-entry"), b"b", os.O_WRONLY | os.O_CREAT)'
  op b-unlink-a-entry "$UB" 'os.unlink(p("top/a-entry"))'
  op b-rename-a-entry "$UB" 'os.rename(p("top/a-entry"), p("top/moved"))'
  op b-replace-a-entry "$UB" 'os.rename(p("top/b-entry"), p("top/a-entry"))'
  op b-rename-a-home "$UB" 'os.rename(p("top/a"), p("top/a-moved"))'
  op a-rename-own "$UA" 'os.rename(p("top/a-entry"), p("top/a-renamed"))'
  op b-unlink-own "$UB" 'os.unlink(p("top/b-entry"))'
  # A sticky directory owned by A: A may remove B's entry there.
  op a-sticky   "$UA" 'os.mkdir(p("top/st"), 0o1777); os.chmod(p("top/st"), 0o1777)'
  op b-in-st    "$UB" 'w(p("top/st/b"), b"b", os.O_WRONLY | os.O_CREAT)'
  op c-unlink-b-in-st "$UC" 'os.unlink(p("top/st/b"))'
  op a-unlink-b-in-st "$UA" 'os.unlink(p("top/st/b"))'
  st sticky-dir-mode top/st
}

# Read-side checks on a tree the sequence left (run again after a remount).
perm_reads() {
  local R=$1
  for spec in "$UB:top/a/secret" "$UC:top/a/secret" "$UA:top/a/secret" "$UB:top/a/pub" "$UC:top/b/f"; do
    local user=${spec%%:*} path=${spec#*:}
    if as "$user" cat "$R/$path" >/dev/null 2>&1; then echo "read $user $path ok"; else echo "read $user $path denied"; fi
  done
  if as "$UB" touch "$R/top/a/late" 2>/dev/null; then echo "create-late ok"; else echo "create-late denied"; fi
  if as "$UB" rm -f "$R/top/st/gone" "$R/top/a-renamed" 2>/dev/null && [[ ! -e "$R/top/a-renamed" ]]; then
    echo "sticky-unlink ok"
  else
    echo "sticky-unlink denied"
  fi
  stat -c '%n %04a %u %g' "$R"/top/a/secret "$R"/top/a/suid "$R"/top/sgd/bd "$R"/top/st | sed "s|$R/||"
}

step "permission checks through a mount made by root, against a native directory"
NATIVE="$WORK/native"
mkdir -m 0755 "$NATIVE"
expect_ok strata mount --new --name perms "$MP"
expect_transport "$MP"
chmod 0755 "$MP"
perm_sequence "$NATIVE" >"$WORK/seq.native" 2>&1 || fail "the sequence failed on the native directory"
perm_sequence "$MP" >"$WORK/seq.mount" 2>&1 || fail "the sequence failed on the mount"
diff -u "$WORK/seq.native" "$WORK/seq.mount" >&2 || fail "the mount's permission checks differ from a native directory's"
# And what the comparison stands on: the kernel's rules, as ext4 applies them.
expect_line() { grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "expected '$2' in $1"; }; }
for line in 'b-read-sec EACCES' 'b-write-sec EACCES' 'b-read-pub ok' 'b-create-in-a EACCES' \
            'b-mkdir-in-a EACCES' 'b-unlink-in-a EACCES' 'b-rename-in-a EACCES' 'b-chmod-a EPERM' \
            'b-own-file ok' 'a-create-in-b EACCES' 'a-own-file ok' \
            'suid-after-owner-write 0777 61001 61001' 'suid-after-other-write 0777 61001 61001' \
            'suid-after-truncate 0777 61001 61001' 'suid-after-root-write 6755 61001 61001' \
            'suid-after-root-chown 0755 61002 61001' 'sgid-by-owner-outside-group 0755 61001 61003' \
            'sgdir-file 0644 61002 61100' 'sgdir-subdir 2755 61002 61100' \
            'b-unlink-a-entry EPERM' 'b-rename-a-entry EPERM' 'b-replace-a-entry EPERM' \
            'b-rename-a-home EPERM' 'a-rename-own ok' 'b-unlink-own ok' \
            'c-unlink-b-in-st EPERM' 'a-unlink-b-in-st ok'; do
  expect_line "$WORK/seq.mount" "$line"
done

step "the same checks on the committed files, mounted from the branch"
expect_ok strata commit "$MP" -m perms --branch perms
expect_ok strata umount "$MP"
expect_ok strata mount --branch perms --name perms2 "$MP"
chmod 0755 "$MP"
perm_reads "$NATIVE" >"$WORK/reads.native" 2>&1
perm_reads "$MP" >"$WORK/reads.mount" 2>&1
diff -u "$WORK/reads.native" "$WORK/reads.mount" >&2 || fail "after a commit and a remount, permissions differ from native"
for line in "read $UB top/a/secret denied" "read $UC top/a/secret denied" "read $UA top/a/secret ok" \
            "read $UB top/a/pub ok" 'create-late denied'; do
  expect_line "$WORK/reads.mount" "$line"
done
expect_ok strata umount "$MP"
assert_private "$STORE" "at the end"
