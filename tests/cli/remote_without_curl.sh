#!/usr/bin/env bash
# strata without libcurl: libcurl is loaded only when a remote store is used,
# so on a system whose libcurl.so.4 cannot be loaded every local command works
# and a remote command fails at once with a message that says to install
# libcurl4 (not a dynamic loader error before main, not a hang).
# The library is hidden in a private mount namespace (/dev/null bound over the
# file the loader would open), so the system is the same before and after.
# Needs root.
source "$(dirname "$0")/lib.sh"
require_root
command -v unshare >/dev/null || { echo "SKIP: unshare is not installed"; exit 77; }
lib=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64|x32|AArch64/ { print $NF; exit }')
[[ -n "$lib" ]] || lib=$(ldconfig -p | awk '$1 == "libcurl.so.4" { print $NF; exit }')
[[ -n "$lib" ]] || { echo "SKIP: no libcurl.so.4 to hide"; exit 77; }
real=$(readlink -f "$lib")

mkdir -p "$WORK/src"
printf 'local data\n' >"$WORK/src/file"
cat >"$WORK/inner.sh" <<'INNER'
set -uo pipefail
bin=$1 store=$2 work=$3 real=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
mount --bind /dev/null "$real" || fail "cannot hide $real"
"$bin" --version >/dev/null || fail "strata --version without libcurl"
"$bin" --store "$store" init >/dev/null || fail "init without libcurl"
"$bin" --store "$store" import "$work/src" --branch main -m one >/dev/null || fail "import without libcurl"
[ "$("$bin" --store "$store" cat main:file)" = "local data" ] || fail "cat without libcurl"
export AWS_ACCESS_KEY_ID=key AWS_SECRET_ACCESS_KEY=secret
# Nothing listens on the discard port: with libcurl loaded this would fail
# with a connection error instead.
rc=0
timeout 30 "$bin" --store "$store" remote add r s3://bkt/p --endpoint http://127.0.0.1:9 --timeout 2 \
  >"$work/remote.out" 2>"$work/remote.err" || rc=$?
[ "$rc" != 0 ] || fail "remote add succeeded without libcurl"
[ "$rc" != 124 ] || fail "remote add hung without libcurl"
grep -q 'libcurl\.so\.4' "$work/remote.err" || fail "the error does not name libcurl.so.4: $(cat "$work/remote.err")"
grep -q 'install libcurl4' "$work/remote.err" || fail "the error does not say to install libcurl4: $(cat "$work/remote.err")"
echo "hidden checks passed"
INNER
step "libcurl hidden: local commands work, a remote command says to install libcurl4"
run unshare --mount --propagation private bash "$WORK/inner.sh" "$STRATA_BIN" "$STORE" "$WORK" "$real"
[[ $RC == 0 ]] || fail "$(cat "$ERR") $(cat "$OUT")"
grep -q "hidden checks passed" "$OUT" || fail "the checks did not finish"
grep -q "$real" /proc/mounts && fail "the bind mount leaked out of the namespace"

step "libcurl present: the same remote command gets as far as the network"
export AWS_ACCESS_KEY_ID=key AWS_SECRET_ACCESS_KEY=secret
expect_fail timeout 30 "$STRATA_BIN" --store "$STORE" remote add r s3://bkt/p --endpoint http://127.0.0.1:9 --timeout 2
grep -q 'install libcurl4' "$ERR" && fail "libcurl is installed, yet: $(cat "$ERR")"
true
