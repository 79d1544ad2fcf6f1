#!/usr/bin/env bash
# Setuid programs and device nodes in a workspace (`strata mount --suid
# --dev`): by default the mount is nosuid,nodev, so a device node cannot be
# opened (EACCES) and a setuid-root program runs with its caller's uid; with
# the options the node is the device and the program runs as root. Only root
# may ask for them. Committed and mounted again, the node and the bits stay.
source "$(dirname "$0")/lib.sh"
use_mountpoint
chmod 0755 "$WORK"   # uid 65534 runs the setuid program below
command -v setpriv >/dev/null || { echo "SKIP: no setpriv" >&2; exit 77; }

mount_opts() { awk -v mp="$MP" '$2 == mp { print $4 }' /proc/mounts; }
# The effective uid the setuid program gets when uid 65534 runs it.
euid_of_program() { setpriv --reuid 65534 --regid 65534 --clear-groups "$MP/id" -u; }

step "default: nosuid,nodev"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name sd "$MP"
chmod 0755 "$MP"
[[ ,$(mount_opts), == *,nosuid,* && ,$(mount_opts), == *,nodev,* ]] || fail "options: $(mount_opts)"
mknod "$MP/null" c 1 3
chmod 0666 "$MP/null"
cp /usr/bin/id "$MP/id"
chmod 04755 "$MP/id"
if echo hi 2>"$WORK/open.err" >"$MP/null"; then fail "nodev: a write to the device node succeeded"; fi
grep -q "Permission denied" "$WORK/open.err" || fail "nodev: not EACCES: $(cat "$WORK/open.err")"
[[ $(euid_of_program) == 65534 ]] || fail "nosuid: the setuid program ran as $(euid_of_program)"
expect_ok strata commit "$MP" -m nodes --branch main
expect_ok strata umount "$MP"

step "--suid --dev: the device works and the setuid bit takes effect"
expect_ok strata mount --workspace sd --suid --dev "$MP"
[[ ,$(mount_opts), != *,nosuid,* && ,$(mount_opts), != *,nodev,* ]] || fail "options: $(mount_opts)"
echo hi >"$MP/null" || fail "dev: writing to the device node failed"
[[ $(stat -c %s "$MP/null") == 0 && -z $(cat "$MP/null") ]] || fail "dev: the node kept what was written to it"
[[ $(euid_of_program) == 0 ]] || fail "suid: the setuid program ran as $(euid_of_program), expected 0"
expect_ok strata umount "$MP"

step "each alone, and from a commit"
expect_ok strata mount --branch main --name dev-only --dev "$MP"
echo hi >"$MP/null" || fail "--dev alone: writing to the device node failed"
[[ $(euid_of_program) == 65534 ]] || fail "--dev alone: the setuid program ran as $(euid_of_program)"
expect_ok strata umount "$MP"
expect_ok strata mount --read-only main --suid "$MP"
[[ $(euid_of_program) == 0 ]] || fail "--suid on a read-only mount: the program ran as $(euid_of_program)"
if echo hi 2>/dev/null >"$MP/null"; then fail "--suid alone: the device node was opened"; fi
expect_ok strata umount "$MP"

step "only root may ask for them"
mkdir -m 0777 "$WORK/mnt2"
for opt in --suid --dev; do
  run setpriv --reuid 65534 --regid 65534 --clear-groups "$STRATA_BIN" --store "$WORK/other" mount --new $opt "$WORK/mnt2"
  [[ $RC != 0 ]] || { fusermount3 -u -z "$WORK/mnt2" 2>/dev/null; fail "a non-root $opt mount succeeded"; }
  grep -q -- "$opt needs root" "$ERR" || fail "non-root $opt: $(cat "$ERR")"
done
