#!/usr/bin/env bash
# History commands: branch create/list/delete, fork, log --graph, show, diff
# (--name-status, --stat, -- PATH, REV:PATH), and mount --read-only (a commit
# byte for byte, every write refused with EROFS, nothing left behind by an
# unmount or by a killed daemon).
source "$(dirname "$0")/lib.sh"
use_mountpoint

v1="$WORK/v1"
src="$WORK/src"
mkdir -p "$src/dir/sub"
printf 'alpha\n' >"$src/a.txt"
printf 'bee\n' >"$src/dir/b.txt"
printf 'sea\n' >"$src/dir/sub/c.txt"
printf 'doomed\n' >"$src/del.txt"
head -c 200000 /dev/urandom >"$src/big.bin"
ln -s a.txt "$src/link"
setfattr -n user.note -v one "$src/a.txt"
cp -a "$src" "$v1"

step "two imports of a changing tree on main, one on feature"
expect_ok "$STRATA_BIN" init "$STORE"
c1=$(import_dir "$src" main first)
printf 'alpha, longer\n' >"$src/a.txt"
printf 'new\n' >"$src/new.txt"
rm "$src/del.txt"
chmod 600 "$src/dir/b.txt"
c2=$(import_dir "$src" main second)
s1=${c1:0:12}
s2=${c2:0:12}

step "branch create: new names only, valid names only, known revisions only"
expect_ok strata branch create feature "$c1"
expect_output_matches "feature"
expect_fail strata branch create feature main
expect_stderr_matches "branch 'feature' exists"
for bad in -x a..b a:b 'a b' 'x~1' .hidden trailing/ ''; do
  expect_exit 1 strata branch create -- "$bad" main
  expect_stderr_matches "not a valid branch name"
done
expect_exit 1 strata branch create other nosuchrev
expect_stderr_matches "unknown revision"
expect_exit 2 strata branch create onlyname

step "branch list: name, commit, subject"
expect_ok strata branch list --json
json_true "d == [{'name': 'feature', 'commit': '$c1', 'subject': 'first'}, {'name': 'main', 'commit': '$c2', 'subject': 'second'}]"
expect_ok strata branch list
grep -Eq "^feature +$s1 +first$" "$OUT" || fail "branch list: no line for feature: $(cat "$OUT")"
grep -Eq "^main +$s2 +second$" "$OUT" || fail "branch list: no line for main: $(cat "$OUT")"

step "fork: a new branch at a revision, never over an existing one"
expect_ok strata fork topic --from main~1
expect_ok strata branch list --json
json_true "[b['commit'] for b in d if b['name'] == 'topic'] == ['$c1']"
expect_fail strata fork topic --from main
expect_stderr_matches "branch 'topic' exists"
expect_exit 2 strata fork other
expect_exit 1 strata fork 'bad name' --from main

step "branch delete: known branches only"
expect_exit 1 strata branch delete nosuch
expect_stderr_matches "no branch 'nosuch'"
expect_exit 1 strata branch delete 'a..b'
expect_ok strata branch delete topic
expect_ok strata branch list --json
json_true "[b['name'] for b in d] == ['feature', 'main']"
expect_exit 1 strata branch delete topic
# Its commit stays.
expect_ok strata show "$c1" --json

step "log --graph: a chain, then two branches"
expect_ok strata log --graph main
printf '* %s (main) second\n* %s (feature) first\n' "$s2" "$s1" >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "log --graph main"
printf 'feature work\n' >"$src/feature.txt"
c3=$(import_dir "$src" feature "feature work")
s3=${c3:0:12}
expect_ok strata log --graph
printf '* %s (feature) feature work\n| * %s (main) second\n|/\n* %s first\n' "$s3" "$s2" "$s1" >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "log --graph of two branches"
expect_ok strata log --graph --json
json_true "[(c['id'], c['graph']['line'], c['graph']['after']) for c in d] == [('$c3', '* ', []), ('$c2', '| * ', ['|/']), ('$c1', '* ', [])]"
step "log without --graph is as before"
expect_ok strata log --json
json_true "[c['id'] for c in d] == ['$c3', '$c2', '$c1'] and d[2]['parents'] == [] and d[0]['branches'] == ['feature']"
expect_ok strata log main
grep -q "^commit $c2 (main)$" "$OUT" || fail "log main: no commit line"
grep -q "^    second$" "$OUT" || fail "log main: no message"

step "show: metadata, and the changes against the first parent"
expect_ok strata show main
grep -q "^commit $c2 (main)$" "$OUT" || fail "show: commit line"
grep -q "^Parent: $c1$" "$OUT" || fail "show: parent line"
grep -q "^Author: " "$OUT" || fail "show: author"
grep -q "^Date: " "$OUT" || fail "show: date"
grep -q "^    second$" "$OUT" || fail "show: message"
grep -P '^[ADMT]\t' "$OUT" >"$WORK/got"
# The top directory's mtime changed with its entries (new.txt, del.txt).
printf 'M\t.\nM\ta.txt\nD\tdel.txt\nM\tdir/b.txt\nA\tnew.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$WORK/got" || fail "show: changes"
expect_ok strata show main --json
json_true "d['id'] == '$c2' and d['parents'] == ['$c1'] and d['message'] == 'second' and d['branches'] == ['main']"
json_true "{c['path']: c['status'] for c in d['changes']} == {'.': 'M', 'a.txt': 'M', 'del.txt': 'D', 'dir/b.txt': 'M', 'new.txt': 'A'}"
json_true "[c['changed'] for c in d['changes'] if c['path'] == 'dir/b.txt'] == [['mode']]"
json_true "[sorted(c['changed']) for c in d['changes'] if c['path'] == 'a.txt'] == [['content', 'mtime']]"
step "show of a first commit: everything is added"
expect_ok strata show "$c1"
grep -q "^Parent" "$OUT" && fail "a first commit shows a parent"
grep -P '^[ADMT]\t' "$OUT" >"$WORK/got"
printf 'A\ta.txt\nA\tbig.bin\nA\tdel.txt\nA\tdir/\nA\tdir/b.txt\nA\tdir/sub/\nA\tdir/sub/c.txt\nA\tlink\n' >"$WORK/want"
diff -u "$WORK/want" "$WORK/got" || fail "show of the first commit"
expect_exit 1 strata show nosuchrev

step "diff: name-status (default), --stat, -- PATH, REV:PATH"
expect_ok strata diff "$c1" "$c2"
cp "$OUT" "$WORK/default"
printf 'M\t.\nM\ta.txt\nD\tdel.txt\nM\tdir/b.txt\nA\tnew.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$WORK/default" || fail "diff"
expect_ok strata diff --name-status main~1 main
diff -u "$WORK/default" "$OUT" || fail "--name-status differs from the default"
expect_ok strata diff main main~1
printf 'M\t.\nM\ta.txt\nA\tdel.txt\nM\tdir/b.txt\nD\tnew.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "diff backwards"
expect_ok strata diff "$c1" "$c2" --stat
grep -Eq '^ M a\.txt +\| 6 -> 14 bytes \(\+8\)$' "$OUT" || fail "--stat line for a.txt"
grep -Eq '^ D del\.txt +\| 7 -> 0 bytes \(-7\)$' "$OUT" || fail "--stat line for del.txt"
grep -Eq '^ A new\.txt +\| 0 -> 4 bytes \(\+4\)$' "$OUT" || fail "--stat line for new.txt"
grep -Eq '^ M dir/b\.txt +\| 4 -> 4 bytes$' "$OUT" || fail "--stat line for dir/b.txt"
grep -q '^ 5 paths changed (1 added, 1 deleted, 3 modified), 12 bytes added, 7 bytes removed$' "$OUT" ||
  fail "--stat summary"
expect_ok strata diff "$c1" "$c2" -- dir
printf 'M\tdir/b.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "diff -- dir"
expect_ok strata diff "$c1" "$c2" -- dir/sub
expect_stdout_empty
expect_ok strata diff "$c1" "$c2" -- new.txt dir/b.txt dir
printf 'M\tdir/b.txt\nA\tnew.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "diff with several paths"
expect_exit 1 strata diff "$c1" "$c2" -- nosuch
expect_stderr_matches "no path 'nosuch'"
expect_exit 1 strata diff "$c1" "$c2" -- ../x
expect_ok strata diff "$c1:dir" "$c2:dir"
printf 'M\tb.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "diff REV:dir REV:dir"
expect_ok strata diff "$c1:a.txt" "$c2:a.txt"
printf 'M\ta.txt\n' >"$WORK/want"
diff -u "$WORK/want" "$OUT" || fail "diff REV:file REV:file"
expect_ok strata diff main main
expect_stdout_empty
expect_ok strata diff main feature --json
json_true "d['from'] == '$c2' and d['to'] == '$c3'"
json_true "d['changes'] == [{'status': 'M', 'path': '.', 'kind': 'dir', 'changed': ['mtime'], 'old_size': 0, 'new_size': 0}, {'status': 'A', 'path': 'feature.txt', 'kind': 'file', 'old_size': 0, 'new_size': 13}]"
expect_exit 2 strata diff main feature --stat --name-status
expect_exit 2 strata diff main
expect_exit 1 strata diff main nosuchrev

step "mount --read-only: a commit, byte for byte"
expect_ok strata mount --read-only "$c1" "$MP"
expect_output_matches "read-only"
grep -Eq " $MP fuse\.strata ro[, ]" /proc/mounts || fail "not an 'ro' mount: $(grep " $MP " /proc/mounts)"
assert_same_content "$v1" "$MP"
assert_same_metadata "$v1" "$MP"
expect_ok strata workspace list --json
json_true 'd == []'

step "every kind of write fails with EROFS"
python3 - "$MP" <<'EOF' || fail "a write to the read-only mount did not fail with EROFS"
import errno, os, sys
mp = sys.argv[1]
p = lambda n: os.path.join(mp, n)
writes = {
    "create": lambda: os.open(p("new"), os.O_CREAT | os.O_WRONLY, 0o644),
    "open for writing": lambda: os.open(p("a.txt"), os.O_WRONLY),
    "open with O_TRUNC": lambda: os.open(p("a.txt"), os.O_RDONLY | os.O_TRUNC),
    "truncate": lambda: os.truncate(p("a.txt"), 0),
    "mkdir": lambda: os.mkdir(p("newdir")),
    "rmdir": lambda: os.rmdir(p("dir/sub")),
    "rename": lambda: os.rename(p("a.txt"), p("renamed")),
    "unlink": lambda: os.unlink(p("del.txt")),
    "symlink": lambda: os.symlink("a.txt", p("newlink")),
    "link": lambda: os.link(p("a.txt"), p("hardlink")),
    "mknod": lambda: os.mkfifo(p("fifo")),
    "chmod": lambda: os.chmod(p("a.txt"), 0o600),
    "chown": lambda: os.chown(p("a.txt"), 1, 1),
    "utime": lambda: os.utime(p("a.txt"), (1, 1)),
    "setxattr": lambda: os.setxattr(p("a.txt"), "user.x", b"1"),
    "removexattr": lambda: os.removexattr(p("a.txt"), "user.note"),
}
bad = []
for what, op in writes.items():
    try:
        op()
        bad.append(what + ": succeeded")
    except OSError as e:
        if e.errno != errno.EROFS:
            bad.append("%s: %s instead of EROFS" % (what, errno.errorcode.get(e.errno, e.errno)))
# Reading is fine, xattrs included.
assert os.getxattr(p("a.txt"), "user.note") == b"one"
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
assert_same_content "$v1" "$MP"
assert_same_metadata "$v1" "$MP"
expect_fail strata commit "$MP" -m "nothing to see"
expect_stderr_matches "read-only mount"

step "two read-only mounts at once; unmount removes their workspaces"
mkdir -p "$WORK/mnt2"
expect_ok strata mount --read-only main "$WORK/mnt2"
cmp "$src/a.txt" "$WORK/mnt2/a.txt" || fail "the second mount shows the wrong commit"
expect_ok strata umount "$WORK/mnt2"
expect_ok strata umount "$MP"
grep -q " $MP fuse" /proc/mounts && fail "still mounted after umount"
left=$(ls "$STORE/workspaces" 2>/dev/null || true)
[[ -z $left ]] || fail "workspaces left after unmounting: $left"

step "bad input"
expect_exit 1 strata mount --read-only nosuchrev "$MP"
expect_stderr_matches "unknown revision"
expect_exit 2 strata mount --read-only main --name x "$MP"
expect_exit 2 strata mount --read-only main --new "$MP"
expect_exit 1 strata mount --new --name read-only/1 "$MP"
expect_stderr_matches "reserved"
left=$(ls "$STORE/workspaces" 2>/dev/null || true)
[[ -z $left ]] || fail "workspaces left by failed mounts: $left"

step "a killed read-only daemon leaves nothing that breaks the next mount"
expect_ok strata mount --read-only main "$MP"
record=$(ls "$STORE"/workspaces/*/mounted)
pid=$(head -n 1 "$record")
kill -9 "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
expect_ok strata mount --read-only feature "$MP"
cmp "$src/feature.txt" "$MP/feature.txt" || fail "the new mount does not show feature"
n=$(ls "$STORE/workspaces" | wc -l)
[[ $n == 1 ]] || fail "the killed mount's workspace was not removed: $(ls "$STORE/workspaces")"
expect_ok strata umount "$MP"
left=$(ls "$STORE/workspaces" 2>/dev/null || true)
[[ -z $left ]] || fail "workspaces left: $left"
step "and a writable workspace mounts there too"
expect_ok strata mount --branch main --name rw "$MP"
printf 'x' >"$MP/written" || fail "cannot write to a writable workspace"
expect_ok strata workspace end rw --discard
