# Shared helpers for the strata command-level tests. Each test script sources
# this file first:
#
#   source "$(dirname "$0")/lib.sh"
#
# It gives the script a private scratch directory ($WORK, removed on exit unless
# KEEP_WORK=1), a store path inside it ($STORE, not created), and helpers that run
# the binary named by $STRATA_BIN and check what it did.
#
# Every helper that checks something ends the test with "FAIL: ..." on stderr
# and exit 1. A test that cannot run here (not root) exits 77, which CTest
# reports as skipped.

set -Eeuo pipefail
shopt -s inherit_errexit 2>/dev/null || true
# A command that fails outside the helpers says where it was.
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: exit $?: $BASH_COMMAND" >&2' ERR

if [[ -z "${STRATA_BIN:-}" ]]; then
  echo "FAIL: STRATA_BIN is not set (run through ctest, or export it)" >&2
  exit 1
fi
if [[ ! -x "$STRATA_BIN" ]]; then
  echo "FAIL: STRATA_BIN=$STRATA_BIN is not an executable" >&2
  exit 1
fi

TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-${TEST_NAME}.XXXXXX")
STORE="$WORK/store"
OUT="$WORK/last.out"   # stdout of the last run/expect_* command
ERR="$WORK/last.err"   # stderr of the last run/expect_* command
RC=0                   # exit status of the last run/expect_* command
BG_PIDS=()             # background processes to end on exit
# No store may leak in from the caller's environment.
unset STRATA_STORE STRATA_AUTHOR_NAME STRATA_AUTHOR_EMAIL
# Nor may a command that falls back to the default store location touch the
# caller's: that default lives under XDG_DATA_HOME.
export XDG_DATA_HOME="$WORK/xdg"
export XDG_CACHE_HOME="$WORK/xdg-cache"   # the import cache, kept out of the real home
export XDG_CONFIG_HOME="$WORK/xdg-config"  # the author identity and trust lists, too
export LC_ALL=C.UTF-8

_cleanup() {
  local rc=$?
  local pid
  for pid in "${BG_PIDS[@]}"; do
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ "${KEEP_WORK:-0}" == 1 ]]; then
    echo "(KEEP_WORK=1: scratch kept in $WORK)" >&2
  else
    rm -rf "$WORK" 2>/dev/null || { chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"; }
  fi
  if [[ $rc == 0 ]]; then
    echo "PASS: $TEST_NAME"
  fi
  return $rc
}
trap _cleanup EXIT

# Progress line on stderr, so a failing test shows how far it got.
step() { echo "--- $*" >&2; }

_show_last() {
  if [[ -s "$OUT" ]]; then
    echo "    stdout (first 40 lines):" >&2
    head -n 40 "$OUT" | sed 's/^/      /' >&2
  fi
  if [[ -s "$ERR" ]]; then
    echo "    stderr (first 40 lines):" >&2
    head -n 40 "$ERR" | sed 's/^/      /' >&2
  fi
}

# _die: ends the test as failed, once, without the ERR trap adding a line.
_die() {
  trap - ERR
  exit 1
}

fail() {
  echo "FAIL: $*" >&2
  _die
}

require_root() {
  if [[ $(id -u) != 0 ]]; then
    echo "SKIP: $TEST_NAME needs root" >&2
    exit 77
  fi
}

# strata ARGS...: the binary on this test's store.
strata() { "$STRATA_BIN" --store "$STORE" "$@"; }

# run CMD...: runs CMD with stdout in $OUT, stderr in $ERR, status in $RC;
# never fails by itself.
run() {
  RC=0
  "$@" >"$OUT" 2>"$ERR" </dev/null || RC=$?
}

_cmdline() { printf '%q ' "$@"; }

# expect_exit CODE CMD...: CMD must exit with exactly CODE.
expect_exit() {
  local want=$1
  shift
  run "$@"
  if [[ $RC != "$want" ]]; then
    echo "FAIL: expected exit $want, got $RC: $(_cmdline "$@")" >&2
    _show_last
    _die
  fi
}

# expect_ok CMD...: CMD must exit 0.
expect_ok() { expect_exit 0 "$@"; }

# expect_fail CMD...: CMD must fail cleanly: a non-zero status that is not a
# crash (no signal, no 126/127 from the shell).
expect_fail() {
  run "$@"
  if [[ $RC == 0 ]]; then
    echo "FAIL: expected failure, got exit 0: $(_cmdline "$@")" >&2
    _show_last
    _die
  fi
  if (( RC >= 126 )); then
    echo "FAIL: crashed or could not run (exit $RC): $(_cmdline "$@")" >&2
    _show_last
    _die
  fi
}

# expect_stderr_matches REGEX [WHAT]: the last command's stderr matches the
# (grep -E, case-insensitive) regex.
expect_stderr_matches() {
  if ! grep -Eqi -- "$1" "$ERR"; then
    echo "FAIL: stderr does not match /$1/${2:+ ($2)}" >&2
    _show_last
    _die
  fi
}

# expect_output_matches REGEX: stdout or stderr of the last command matches.
# grep reads both files itself: in a pipeline under pipefail, grep -q quitting
# early would kill the writer with SIGPIPE and turn a match into a failure.
expect_output_matches() {
  if ! grep -Eqi -- "$1" "$OUT" "$ERR"; then
    echo "FAIL: output does not match /$1/" >&2
    _show_last
    _die
  fi
}

# expect_stdout_empty: nothing on stdout from the last command.
expect_stdout_empty() {
  if [[ -s "$OUT" ]]; then
    echo "FAIL: expected empty stdout" >&2
    _show_last
    _die
  fi
}

# json EXPR [FILE]: evaluates the Python expression EXPR with `d` bound to the
# JSON document in FILE (default: $OUT) and prints the result. Fails the test
# when the file is not JSON or the expression raises.
json() {
  local expr=$1 file=${2:-$OUT}
  python3 - "$file" "$expr" <<'EOF' || fail "json: cannot evaluate '$expr' on $file"
import json, sys
with open(sys.argv[1], "rb") as f:
    d = json.load(f)
r = eval(sys.argv[2])
if isinstance(r, (dict, list)):
    print(json.dumps(r, sort_keys=True))
elif isinstance(r, bool):
    print("true" if r else "false")
else:
    print(r)
EOF
}

# json_true EXPR [FILE]: the expression must be true.
json_true() {
  local r
  r=$(json "$@")
  if [[ $r != true ]]; then
    echo "FAIL: JSON check is false: $1" >&2
    head -c 2000 "${2:-$OUT}" | sed 's/^/      /' >&2
    echo >&2
    _die
  fi
}

# expect_transport MOUNTPOINT: the mount's stats name the transport
# $STRATA_FUSE_TRANSPORT asks for (libfuse when unset; strata-uring over
# io_uring when the kernel's switch is on), so that a test run for a
# transport is surely served by it.
expect_transport() {
  local want=${STRATA_FUSE_TRANSPORT:-libfuse}
  if [[ $want == strata-uring ]]; then
    want="strata (classic; io_uring not offered)"
    [[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]] && want="strata (io_uring)"
  fi
  expect_ok strata stats --json "$1"
  json_true "d['transport'] == '$want'"
}

# commit_of_output [FILE]: the id from a human import output's first line,
# which must read "commit <64 hex>".
commit_of_output() {
  local file=${1:-$OUT} first
  first=$(head -n 1 "$file")
  if [[ ! $first =~ ^commit\ ([0-9a-f]{64})$ ]]; then
    echo "FAIL: first line of import output is not 'commit <64-hex>': '$first'" >&2
    _show_last
    _die
  fi
  echo "${BASH_REMATCH[1]}"
}

# known_secrets: sets what an encrypted store must never show, fresh for
# each test: $marker (file content), $name (a file name), $branch, $message.
known_secrets() {
  marker="strata-known-plaintext-$RANDOM$RANDOM"
  name="strata-known-name-$RANDOM$RANDOM.txt"
  branch="strata-known-branch-$RANDOM"
  message="strata-known-message-$RANDOM"
}

# sealed_generations STORE: "GENERATION COUNT" lines, one per object-seal key
# generation named in the 4-byte headers of an encrypted store's sealed objects.
sealed_generations() {
  python3 - "$1" <<'PY'
import collections, sqlite3, struct, sys
store = sys.argv[1]
db = sqlite3.connect("file:" + store + "/index.db?mode=ro", uri=True)
count = collections.Counter()
for name, offset in db.execute("SELECT packs.name, objects.offset FROM objects JOIN packs ON objects.pack = packs.id"):
    with open(store + "/packs/" + name, "rb") as f:
        f.seek(offset)
        count[struct.unpack("<I", f.read(4))[0]] += 1
for g in sorted(count): print(g, count[g])
PY
}

# assert_disjoint_generations STORE...: each store (a store directory, or a
# remote's local side) owns some key generations, and no two own one alike.
assert_disjoint_generations() {
  python3 - "$@" <<'PY' || fail "the stores' key generations are not disjoint"
import sqlite3, sys
ranges = []
for store in sys.argv[1:]:
    db = sqlite3.connect("file:%s/index.db?mode=ro" % store, uri=True)
    c = dict(db.execute("SELECT name, value FROM counters WHERE name LIKE 'seal_generation%'"))
    first, end = c.get("seal_generation", 0), 2**32 - c.get("seal_generations_given", 0)
    if first >= end: sys.exit("FAIL: %s owns no generation [%d, %d)" % (store, first, end))
    ranges.append((first, end, store))
ranges.sort()
for (a0, a1, pa), (b0, b1, pb) in zip(ranges, ranges[1:]):
    if b0 < a1: sys.exit("FAIL: generations of %s [%d, %d) and %s [%d, %d) overlap" % (pa, a0, a1, pb, b0, b1))
PY
}

# until_true SECONDS COMMAND...: polls COMMAND until it succeeds; fails after SECONDS.
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || fail "still not true after the deadline: $*"
    sleep 0.1
  done
}

# import_dir DIR BRANCH [MSG]: imports and prints the new commit id.
import_dir() {
  expect_ok strata import "$1" --branch "$2" -m "${3:-import of $1}"
  commit_of_output
}

# metadata_listing DIR: one line per path below DIR (DIR itself excluded),
# sorted by path bytes: path (Python bytes repr, so newlines and odd bytes are
# visible), type (f d l p s c b), octal permission bits, uid, gid, size (not for
# directories, whose size depends on the filesystem), mtime in nanoseconds,
# link count (not for directories), device numbers, symlink target, and every
# extended attribute with its value.
metadata_listing() {
  python3 - "$1" <<'EOF'
import os, stat, sys

root = os.fsencode(sys.argv[1])
rows = []

def type_char(m):
    for test, c in ((stat.S_ISREG, "f"), (stat.S_ISDIR, "d"), (stat.S_ISLNK, "l"),
                    (stat.S_ISFIFO, "p"), (stat.S_ISSOCK, "s"), (stat.S_ISCHR, "c"),
                    (stat.S_ISBLK, "b")):
        if test(m):
            return c
    return "?"

def walk(rel):
    full = os.path.join(root, rel) if rel else root
    for name in os.listdir(full):
        r = os.path.join(rel, name) if rel else name
        p = os.path.join(root, r)
        st = os.lstat(p)
        t = type_char(st.st_mode)
        f = [repr(r), t, "%o" % stat.S_IMODE(st.st_mode), str(st.st_uid), str(st.st_gid)]
        if t != "d":
            f.append("size=%d" % st.st_size)
        f.append("mtime=%d" % st.st_mtime_ns)
        if t != "d":
            f.append("nlink=%d" % st.st_nlink)
        if t in "cb":
            f.append("rdev=%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
        if t == "l":
            f.append("target=%r" % os.readlink(p))
        try:
            names = sorted(os.listxattr(p, follow_symlinks=False))
        except OSError:
            names = []
        for n in names:
            f.append("xattr:%s=%r" % (n, os.getxattr(p, n, follow_symlinks=False)))
        rows.append((r, " ".join(f)))
        if t == "d":
            walk(r)

walk(b"")
rows.sort()
for _, line in rows:
    print(line)
EOF
}

# assert_same_metadata A B: metadata listings of the two trees are equal.
assert_same_metadata() {
  metadata_listing "$1" >"$WORK/meta.a" || fail "cannot list $1"
  metadata_listing "$2" >"$WORK/meta.b" || fail "cannot list $2"
  if [[ ! -s "$WORK/meta.a" ]]; then
    fail "metadata listing of $1 is empty"
  fi
  if ! diff -u "$WORK/meta.a" "$WORK/meta.b" >"$WORK/meta.diff"; then
    echo "FAIL: metadata differs between $1 and $2 (first 60 lines of diff):" >&2
    head -n 60 "$WORK/meta.diff" >&2
    _die
  fi
}

# assert_same_content A B: diff -r --no-dereference finds nothing. diff always
# calls two fifos (sockets, devices) different; those lines are dropped when
# both sides are of the same kind (the metadata listing compares them).
assert_same_content() {
  local rc=0
  diff -r --no-dereference "$1" "$2" >"$WORK/diff.out" 2>&1 || rc=$?
  if (( rc > 1 )); then
    echo "FAIL: diff -r could not compare $1 and $2:" >&2
    head -n 40 "$WORK/diff.out" >&2
    _die
  fi
  grep -Ev '^File .* is a (fifo|socket|character special file|block special file) while file .* is a \1$' \
    "$WORK/diff.out" >"$WORK/diff.real" || true
  if [[ -s "$WORK/diff.real" ]]; then
    echo "FAIL: contents differ between $1 and $2 (first 40 lines):" >&2
    head -n 40 "$WORK/diff.real" >&2
    _die
  fi
}

# assert_same_tree A B: same contents and same metadata.
assert_same_tree() {
  assert_same_content "$1" "$2"
  assert_same_metadata "$1" "$2"
}

# assert_store_tmp_empty: STORE/tmp holds nothing.
assert_store_tmp_empty() {
  if [[ ! -d "$STORE/tmp" ]]; then
    fail "$STORE/tmp is missing"
  fi
  local left
  left=$(find "$STORE/tmp" -mindepth 1 | head -n 20)
  if [[ -n $left ]]; then
    echo "FAIL: leftover files in $STORE/tmp:" >&2
    echo "$left" >&2
    _die
  fi
}

# file_size PATH
file_size() { stat -c %s -- "$1"; }

# flip_middle_byte FILE: flips bits of the byte in the middle of FILE, keeping its size.
flip_middle_byte() {
  python3 - "$1" <<'EOF'
import os, sys
p = sys.argv[1]
off = os.path.getsize(p) // 2
with open(p, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x5A]))
EOF
}

# start_fake_s3 DIR: starts the test's own S3 server (fake_s3.py, on
# 127.0.0.1) with its port, request log and fault controls in DIR (port,
# requests.log, control.json), ended with the test; sets $EP to its endpoint
# and the credentials it takes.
start_fake_s3() {
  mkdir -p "$1"
  python3 "$(dirname "${BASH_SOURCE[0]}")/fake_s3.py" "$1/port" "$1/requests.log" "$1/control.json" &
  BG_PIDS+=($!)
  for _ in $(seq 100); do [[ -s "$1/port" ]] && break; sleep 0.1; done
  [[ -s "$1/port" ]] || fail "the fake S3 server did not start"
  EP="http://127.0.0.1:$(cat "$1/port")"
  export AWS_ACCESS_KEY_ID=fakekey AWS_SECRET_ACCESS_KEY=fakesecret
}

# use_mountpoint: for tests on a real FUSE mount. Needs root and /dev/fuse
# (else the test is skipped); sets $MP to an empty directory and makes sure no
# mount there outlives the test, whatever way it ends.
use_mountpoint() {
  require_root
  [[ -e /dev/fuse ]] || { echo "SKIP: no /dev/fuse" >&2; exit 77; }
  MP="$WORK/mnt"
  mkdir -p "$MP"
  # set +e: under errexit, the (exit $rc) that hands a failure's status on to
  # _cleanup would end the trap there and leave the scratch directory behind.
  trap 'rc=$?; set +e; fusermount3 -u -z "$MP" 2>/dev/null || true; (exit $rc); _cleanup' EXIT
}

# use_two_mountpoints: as use_mountpoint, with $MP2 a second empty directory
# beside $MP; on exit neither stays mounted. The current directory is left
# first, so that a test that ends inside a mount can still unmount it.
use_two_mountpoints() {
  use_mountpoint
  MP2="$WORK/mnt2"
  mkdir -p "$MP2"
  trap 'rc=$?; set +e; cd /; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT
}

# use_sandbox: for the strata exec tests. As use_mountpoint, and skipped
# without bwrap; on exit, however the test ends, every mount below $WORK is
# detached and $EXTRA_SCRATCH (a scratch directory outside $WORK, if the test
# sets one) is removed.
EXTRA_SCRATCH=
use_sandbox() {
  use_mountpoint
  command -v bwrap >/dev/null || { echo "SKIP: no bwrap" >&2; exit 77; }
  trap 'rc=$?; set +e
        for m in $(awk -v w="$WORK/" "index(\$2, w) == 1 {print \$2}" /proc/mounts); do fusermount3 -u -z "$m"; done
        [[ -z $EXTRA_SCRATCH ]] || rm -rf "$EXTRA_SCRATCH"
        (exit $rc); _cleanup' EXIT
}
