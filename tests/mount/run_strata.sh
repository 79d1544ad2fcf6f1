#!/usr/bin/env bash
# Runs the conformance binary ($2, further arguments passed on) against a
# strata workspace mounted by the strata binary ($1): a new store and an empty
# workspace under ${CONFORMANCE_BASE:-/var/tmp}, unmounted and removed
# afterwards. Everything is 0755 so the permission tests' uid 65534 child can
# reach the mount (which allows other users in when run as root).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 STRATA_BIN CONFORMANCE_TEST_BINARY [gtest args...]" >&2
  exit 2
fi
strata=$1
bin=$2
shift 2
[[ -e /dev/fuse ]] || { echo "SKIP: no /dev/fuse"; exit 77; }
dir=$(mktemp -d "${CONFORMANCE_BASE:-/var/tmp}/strata-conformance.XXXXXX")
chmod 0755 "$dir"
mkdir -m 0755 "$dir/mnt"
cleanup() {
  "$strata" --store "$dir/store" umount "$dir/mnt" >/dev/null 2>&1 || fusermount3 -u -z "$dir/mnt" 2>/dev/null || true
  rm -rf -- "$dir"
}
trap cleanup EXIT
"$strata" --store "$dir/store" init >/dev/null
# STRATA_MOUNT_OPTIONS: extra mount flags, e.g. --writeback-cache
# shellcheck disable=SC2086 # a list of flags
"$strata" --store "$dir/store" mount ${STRATA_MOUNT_OPTIONS:-} --new --name conformance "$dir/mnt"
# STRATA_FUSE_TRANSPORT: the transport the mount must use (mount --transport's
# default); STRATA_EXPECT_TRANSPORT: what stats must then say, if not its name.
if [[ -n ${STRATA_FUSE_TRANSPORT:-} ]]; then
  expected=${STRATA_EXPECT_TRANSPORT:-$STRATA_FUSE_TRANSPORT}
  used=$("$strata" --store "$dir/store" stats --json "$dir/mnt" | python3 -c 'import json, sys; print(json.load(sys.stdin)["transport"])')
  [[ $used == "$expected" ]] || { echo "FAIL: the mount uses transport '$used', not '$expected'" >&2; exit 1; }
fi
rc=0
CONFORMANCE_DIR=$dir/mnt "$bin" "$@" || rc=$?
# STRATA_EXPECT_PASSTHROUGH=1: the kernel must have served opens itself
# (FUSE passthrough), for writing too.
if [[ $rc == 0 && ${STRATA_EXPECT_PASSTHROUGH:-} == 1 ]]; then
  "$strata" --store "$dir/store" stats --json "$dir/mnt" | python3 -c '
import json, sys
p = json.load(sys.stdin)["passthrough"]
sys.exit(0 if p["on"] and p["write_opens"] > 0 else "FAIL: no passthrough opens: %s" % p)' || rc=1
fi
if [[ $rc != 0 && -f $dir/store/workspaces/conformance/daemon.log ]]; then
  echo "--- daemon log (last 20 lines)" >&2
  tail -n 20 "$dir/store/workspaces/conformance/daemon.log" >&2
fi
exit "$rc"
