#!/usr/bin/env bash
# tests/bench/workload_quick.sh — bench/workload/run.sh --quick on native and strata:
# it exits 0, times every phase on both arms (restic and borg beside native),
# records the strata daemon's CPU, and counts the FUSE requests strata's phases
# sent (untar must create files and write them).
# Needs root and, the first time, the network (apt-get source, then cached):
# exits 77 (skipped) without them.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ ${EUID} -ne 0 ]]; then
  echo "SKIP: needs root"
  exit 77
fi
[[ -x "${STRATA_BIN:-}" ]] || { echo "FAIL: STRATA_BIN is not set to the strata binary" >&2; exit 1; }

T=$(mktemp -d /var/tmp/bench-workload-test.XXXXXX)
trap 'rm -rf -- "${T}"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if ! "${REPO}/bench/workload/run.sh" --quick --arms native,strata --out "${T}/out" >"${T}/log" 2>&1; then
  if grep -q 'apt-get source .* failed' "${T}/log"; then
    echo "SKIP: the Debian source could not be fetched (no network?)"
    exit 77
  fi
  tail -n 30 "${T}/log" >&2
  fail "bench/workload/run.sh --quick failed"
fi

phases=(untar git-status-first git-status-warm git-status-cold git-clone git-checkout-other git-checkout-back
  build-configure build-make find du-cold cp-tree dd-sync tar-xjf cp-etc rm-all)
for arm in native strata; do
  for phase in "${phases[@]}" ; do
    awk -F'\t' -v a="${arm}" -v p="${phase}" '$3 == a && $4 == p && $5 > 0 { found = 1 } END { exit !found }' \
      "${T}/out/raw.tsv" || fail "no time for ${arm} ${phase} in raw.tsv"
  done
done
for arm in strata restic borg; do
  awk -F'\t' -v a="${arm}" '$3 == a && $4 == "snapshot" && $5 > 0 { found = 1 } END { exit !found }' \
    "${T}/out/raw.tsv" || fail "no snapshot time for ${arm}"
done
awk -F'\t' '$3 == "strata" && $4 == "untar" && $7 > 0 { found = 1 } END { exit !found }' "${T}/out/raw.tsv" ||
  fail "no daemon CPU seconds for strata's untar"
for op in mknod write; do
  awk -F'\t' -v o="${op}" '$2 == "strata" && $3 == "untar" && $4 == o && $5 > 0 { found = 1 } END { exit !found }' \
    "${T}/out/requests.tsv" || fail "no ${op} requests counted for strata's untar"
done
grep -q '^| rm-all |' "${T}/out/table.md" || fail "table.md has no rm-all row"
echo "PASS"
