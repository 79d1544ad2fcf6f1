#!/usr/bin/env bash
# Access times through a mount (`strata mount --atime`): by default (noatime)
# reads leave atime alone and the kernel mount says noatime; relatime (shown
# as such in /proc/mounts, the kernel's default) moves it
# when it is not newer than mtime or ctime; strictatime on every read that
# reaches the daemon. Moving atime changes nothing a commit sees: a workspace
# that was only read has nothing to commit, and a commit records no atime
# (a file from a commit shows its mtime as atime).
source "$(dirname "$0")/lib.sh"
use_mountpoint

atime() { stat -c %X -- "$1"; }
# A direct read always reaches the daemon (the page cache is bypassed).
read_direct() { dd if="$1" of=/dev/null bs=4096 iflag=direct status=none; }
mount_opts() { awk -v mp="$MP" '$2 == mp { print $4 }' /proc/mounts; }
old=$(date -d 2020-01-01 +%s)

step "default: noatime, reads leave atime where it was"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name at "$MP"
[[ ,$(mount_opts), == *,noatime,* ]] || fail "the default mount is not noatime: $(mount_opts)"
head -c 8192 /dev/urandom >"$MP/f"
touch -a -d @"$old" "$MP/f"
read_direct "$MP/f"
cat "$MP/f" >/dev/null
[[ $(atime "$MP/f") == "$old" ]] || fail "noatime: a read moved atime to $(atime "$MP/f")"
expect_ok strata commit "$MP" -m base --branch main
expect_ok strata umount "$MP"

step "relatime: the first read after a change moves atime, a second does not"
expect_ok strata mount --workspace at --atime relatime "$MP"
[[ ,$(mount_opts), == *,relatime,* ]] || fail "not a relatime mount: $(mount_opts)"
[[ $(atime "$MP/f") == "$old" ]] || fail "relatime: atime moved before any read"
before=$(date +%s)
read_direct "$MP/f"
a1=$(atime "$MP/f")
((a1 >= before)) || fail "relatime: a read left atime at $a1 (2020 is $old)"
sleep 1.1
read_direct "$MP/f"
[[ $(atime "$MP/f") == "$a1" ]] || fail "relatime: a second read moved atime from $a1 to $(atime "$MP/f")"
sleep 1.1
echo more >>"$MP/f"
read_direct "$MP/f"
(($(atime "$MP/f") > a1)) || fail "relatime: a read after a write left atime at $a1"

step "reads that move atime leave nothing to commit"
expect_ok strata commit "$MP" -m appended
expect_ok strata umount "$MP"
expect_ok strata mount --branch main --name reader --atime relatime "$MP"
mtime=$(stat -c %Y "$MP/f")
[[ $(atime "$MP/f") == "$mtime" ]] || fail "a committed file shows atime $(atime "$MP/f"), not its mtime $mtime"
# The append, commit and mount can all fall in one second: wait for the next,
# so that a moved atime is visibly newer than mtime.
sleep 1.1
read_direct "$MP/f"
(($(atime "$MP/f") > mtime)) || fail "relatime: reading a committed file left atime at its mtime"
expect_ok strata commit "$MP" -m only-read
expect_output_matches "nothing to commit"
expect_ok strata umount "$MP"

step "strictatime: every read moves atime"
expect_ok strata mount --workspace reader --atime strictatime "$MP"
# (libfuse 3.14 cannot tell the kernel strictatime: /proc/mounts says relatime)
[[ ,$(mount_opts), != *,noatime,* ]] || fail "a strictatime mount says noatime: $(mount_opts)"
read_direct "$MP/f"
a1=$(atime "$MP/f")
sleep 1.1
read_direct "$MP/f"
(($(atime "$MP/f") > a1)) || fail "strictatime: a second read left atime at $a1"
expect_ok strata umount "$MP"

step "a bad --atime value is refused"
expect_fail strata mount --workspace reader --atime sometimes "$MP"
