#!/usr/bin/env bash
# Every kind of file, mode, owner, timestamp, xattr and awkward name survives
# import followed by export, byte for byte and bit for bit.
source "$(dirname "$0")/lib.sh"
require_root

SRC="$WORK/src"
DST="$WORK/dst"

step "building the source tree"
mkdir -p "$SRC"
cd "$SRC"

# Regular files.
: >empty
printf 'hello, strata\n' >small
head -c $((5 * 1024 * 1024)) /dev/urandom >random5m
truncate -s $((10 * 1024 * 1024)) sparse_all_hole
printf 'start' >sparse_mixed
truncate -s $((3 * 1024 * 1024)) sparse_mixed
printf 'middle' | dd of=sparse_mixed bs=1 seek=$((6 * 1024 * 1024)) conv=notrunc status=none
truncate -s $((8 * 1024 * 1024)) sparse_mixed
# Compressible and repetitive data, larger than one chunk.
python3 -c 'import sys; sys.stdout.write(("the same line over and over again\n" * 100000)[:3 << 20])' >repetitive

# Nested directories.
mkdir -p deep/a/b/c/d/e
printf 'deep file\n' >deep/a/b/c/d/e/leaf
printf 'mid file\n' >deep/a/b/mid

# A read-only directory holding a file.
mkdir ro_dir
printf 'inside a read-only dir\n' >ro_dir/inner
chmod 0444 ro_dir/inner

# Modes and owners (chown before chmod: chown clears set-id bits).
printf 'private\n' >mode0600 && chmod 0600 mode0600
printf '#!/bin/sh\n' >mode0755 && chmod 0755 mode0755
printf 'suid\n' >mode4755 && chown 1234:5678 mode4755 && chmod 4755 mode4755
printf 'sgid\n' >mode2755 && chmod 2755 mode2755
printf 'nothing\n' >mode0000 && chmod 0000 mode0000
mkdir sticky_dir && chmod 1777 sticky_dir
printf 'in sticky\n' >sticky_dir/file
mkdir owned_dir
printf 'owned\n' >owned_dir/file
chown -R 1234:5678 owned_dir
chown 4321:8765 small
printf 'big ids\n' >bigids && chown 4000000000:4000000001 bigids

# Symlinks.
ln -s small rel_link
ln -s ../small deep/a/up_link
ln -s /etc/hostname abs_link
ln -s does/not/exist dangling_link
ln -s deep dir_link
ln -s "$(printf 'x%.0s' {1..200})" long_target_link
ln -s small owned_link && chown -h 1234:5678 owned_link

# Hard links: three names for one inode across two directories.
mkdir -p hl/one hl/two
printf 'linked content\n' >hl/one/first
ln hl/one/first hl/one/second
ln hl/one/first hl/two/third
# Names that sort around a directory's: 'lk-' and 'lk.b' come before 'lk/z'
# as strings, after it in a depth-first walk.
mkdir lk
printf 'linked across the sort order\n' >lk/z
ln lk/z lk.b
ln lk/z lk-

# Special files.
mkfifo fifo && chmod 0640 fifo
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock
mknod chardev c 1 3
mknod blockdev b 7 200
mknod bigdev c 4095 1048575   # the largest major and minor Linux has
chown 1234:5678 chardev
chmod 0600 blockdev
# Hard links to things other than regular files: they must stay one inode.
mkdir hlspecial
mkfifo hlspecial/fifo && ln hlspecial/fifo hlspecial/fifo2
mknod hlspecial/dev c 1 5 && ln hlspecial/dev hlspecial/dev2
ln -s ../small hlspecial/sym && ln -P hlspecial/sym hlspecial/sym2

# Extended attributes on files and directories.
# (Python's os.setxattr rather than setfattr: no dependency on the attr package.)
python3 - <<'PY'
import os
x = os.setxattr
x("small", "user.comment", b"a file comment")
x("small", "user.empty", b"")
x("small", "user.binary", bytes([0, 255, 0, 254, 10, 13]))
x("random5m", "user.big", b"z" * 1500)
x("deep/a", "user.dir", b"a directory comment")
x("deep/a", "user.two", b"2")
# trusted.* (root only) can sit on a symlink too.
x("rel_link", "trusted.on_link", b"link attr", follow_symlinks=False)
x("deep", "trusted.on_dir", b"dir attr")
x("hl/one/first", "user.linked", b"yes")
PY

# Names.
printf 'spaces\n' >'name with  spaces '
printf 'unicode\n' >'ünïcødé-日本語-🙂'
printf 'newline\n' >$'new\nline'
printf 'tab\n' >$'tab\there'
printf 'dash\n' >'-leading-dash'
printf 'colon\n' >'colon:in:name'
printf 'glob\n' >'star*?[x]'
printf 'back\n' >'back\slash'
printf 'dots\n' >'..dotdot-prefix'
printf 'hidden\n' >.hidden
long255=$(printf 'x%.0s' {1..255})
printf 'long\n' >"$long255"
long_utf8="$(printf 'é%.0s' {1..127})x"   # 127 * 2 + 1 = 255 bytes
printf 'long utf8\n' >"$long_utf8"
printf 'not utf-8\n' >$'bad\xff\xfe-name'
mkdir emptydir
mkdir "dir with space"
printf 'in spaced dir\n' >"dir with space/f"

[[ $(printf '%s' "$long255" | wc -c) == 255 ]] || fail "long name is not 255 bytes"
[[ $(printf '%s' "$long_utf8" | wc -c) == 255 ]] || fail "long utf8 name is not 255 bytes"

# Nanosecond mtimes, set last and deepest first: creating entries changes the
# mtime of their directory. Every path gets its own time so that a time
# attached to the wrong path shows.
i=0
while IFS= read -r -d '' p; do
  i=$((i + 1))
  touch -h -d "2021-03-04 05:06:07.$(printf '%09d' $((123456789 + i * 1000003)))" -- "$p"
done < <(find . -mindepth 1 -depth -print0)
chmod 0555 ro_dir
# Times before 1970 and far after 2038, with nanoseconds.
printf 'old\n' >old && touch -d '1960-05-06 07:08:09.987654321' old
printf 'future\n' >future && touch -d '2200-01-02 03:04:05.000000001' future
touch -h -d '1969-12-31 23:59:59.999999999' abs_link
touch -h -d '2020-01-01 00:00:00.5' .   # (the root's own time is not compared)
cd "$WORK"

# One fixed, well-known time, to be sure of the exact value.
[[ $(stat -c %y "$SRC/small") == 2021-03-04\ 05:06:07.* ]] || fail "touch did not set the mtime"
[[ $(stat -c %h "$SRC/hl/one/first") == 3 ]] || fail "source hard links not set up"

step "init, import"
expect_ok "$STRATA_BIN" init "$STORE"
[[ -f "$STORE/config.json" ]] || fail "init did not write config.json"
[[ -f "$STORE/index.db" ]] || fail "init did not write index.db"
[[ -d "$STORE/packs" ]] || fail "init did not create packs/"
# The walk must not change the source (atime aside).
metadata_listing "$SRC" >"$WORK/src.before"
# The listing sees what the comparison relies on.
for want in "xattr:user.comment=b'a file comment'" "xattr:trusted.on_link=b'link attr'" \
            "nlink=3" "rdev=4095:1048575" "target=b'does/not/exist'" " 4755 1234 5678 " \
            "mtime=1614834367" "mtime=-304707110012345679" ; do
  grep -qF -- "$want" "$WORK/src.before" || fail "source listing lacks '$want'"
done
commit=$(import_dir "$SRC" main "all the types")
metadata_listing "$SRC" >"$WORK/src.after"
diff -u "$WORK/src.before" "$WORK/src.after" || fail "import changed the source tree"

step "export and compare"
expect_ok strata export main "$DST"
assert_same_tree "$SRC" "$DST"

# Hard links: the three exported names are one inode.
ino1=$(stat -c %i "$DST/hl/one/first")
ino2=$(stat -c %i "$DST/hl/one/second")
ino3=$(stat -c %i "$DST/hl/two/third")
[[ $ino1 == "$ino2" && $ino1 == "$ino3" ]] || fail "hard links not restored: inodes $ino1 $ino2 $ino3"
[[ $(stat -c %i "$DST/lk/z") == "$(stat -c %i "$DST/lk.b")" && $(stat -c %i "$DST/lk/z") == "$(stat -c %i "$DST/lk-")" ]] ||
  fail "hard links lk/z, lk.b, lk- not restored as one inode"
[[ $ino1 != "$(stat -c %i "$DST/lk/z")" ]] || fail "two different linked inodes were merged"
[[ $(stat -c %h "$DST/hl/one/first") == 3 ]] || fail "exported hard link count is not 3"
# Files that were not linked are not linked now.
[[ $(stat -c %h "$DST/small") == 1 ]] || fail "small has a link count other than 1"

step "export by full id and by prefix"
expect_ok strata export "$commit" "$WORK/dst_id"
assert_same_tree "$SRC" "$WORK/dst_id"
# An empty existing directory is an acceptable destination.
mkdir "$WORK/dst_prefix"
expect_ok strata export "${commit:0:12}" "$WORK/dst_prefix"
assert_same_tree "$SRC" "$WORK/dst_prefix"

step "cat and ls on awkward paths"
expect_ok strata cat main:small
cmp -s "$OUT" "$SRC/small" || fail "cat main:small differs"
expect_ok strata cat "main:deep/a/b/c/d/e/leaf"
cmp -s "$OUT" "$SRC/deep/a/b/c/d/e/leaf" || fail "cat of deep leaf differs"
expect_ok strata cat main:random5m
cmp -s "$OUT" "$SRC/random5m" || fail "cat main:random5m differs"
expect_ok strata cat main:sparse_mixed
cmp -s "$OUT" "$SRC/sparse_mixed" || fail "cat main:sparse_mixed differs"
expect_ok strata cat "main:name with  spaces "
cmp -s "$OUT" "$SRC/name with  spaces " || fail "cat of spaced name differs"
expect_ok strata cat "main:ünïcødé-日本語-🙂"
cmp -s "$OUT" "$SRC/ünïcødé-日本語-🙂" || fail "cat of unicode name differs"
expect_ok strata cat "main:colon:in:name"
cmp -s "$OUT" "$SRC/colon:in:name" || fail "cat of a name with colons differs"
expect_ok strata cat "main:hl/two/third"
cmp -s "$OUT" "$SRC/hl/one/first" || fail "cat of a hard link differs"
expect_ok strata cat "main:empty"
[[ ! -s "$OUT" ]] || fail "cat of an empty file printed something"

expect_ok strata ls main --json
json_true 'isinstance(d, list) and len(d) > 20'
json_true 'all(k in e for e in d for k in ("name", "kind", "mode", "size"))'
# The names come back exactly, newline and all, in the listing.
json_true '"new\nline" in [e["name"] for e in d]'
json_true '"ünïcødé-日本語-🙂" in [e["name"] for e in d]'
json_true '("x" * 255) in [e["name"] for e in d]'
json_true '[e["size"] for e in d if e["name"] == "random5m"] == [5 * 1024 * 1024]'
json_true '[e["mode"] for e in d if e["name"] == "mode4755"] in ([0o4755], ["4755"], ["04755"])'
names=$(json 'sorted(e["kind"] for e in d if e["name"] in ("small", "deep", "rel_link", "fifo", "sock", "chardev", "blockdev"))')
# Seven different kinds: file, directory, symlink, fifo, socket, char and block device.
json_true 'len(set(e["kind"] for e in d if e["name"] in ("small", "deep", "rel_link", "fifo", "sock", "chardev", "blockdev"))) == 7'
expect_ok strata ls "main:deep/a" --json
json_true 'sorted(e["name"] for e in d) == ["b", "up_link"]'
echo "kinds seen: $names" >&2

step "verify"
expect_ok strata verify
