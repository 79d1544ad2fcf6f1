#!/usr/bin/env bash
# tests/bench/folio_orders.sh — bench/tools/folio_orders tells the truth about a
# file's page cache, and reads nothing into it.
#
# On a file of 64 MiB + 1234 bytes under /var/tmp (the disk the benchmarks use;
# the size leaves a partial last page):
#   1. nothing cached (written with fsync, then dropped with
#      dd iflag=nocache, i.e. posix_fadvise(DONTNEED)): fincore says 0 pages,
#      the tool says 0 resident and no folio, and fincore still says 0 after it;
#   2. read whole with one large sequential read: the tool's resident pages equal
#      fincore's and the file's page count;
#   3. dropped, then two ranges read (the start and the middle): the tool's
#      resident pages equal fincore's, and fincore is unchanged by the tool
#      (it touched only cached pages, so readahead was not triggered). The count
#      is taken once it has settled: read-ahead may still be filling the cache
#      just after dd returns.
# In every case the histogram must add up: its pages sum to the resident pages,
# its folios to the folio count, its shares to 1, and the folios' full sizes
# (folios × 2^order) cover the resident pages exactly unless a folio runs past
# the end of the file. Whether large folios appear is not asserted: that depends
# on the filesystem and the kernel.
# Also: a missing file, a directory and a non-root caller are errors (exit != 0).
# Needs root (/proc/kpageflags); exits 77 (skipped) otherwise.
set -euo pipefail

if [[ ${EUID} -ne 0 ]]; then
  echo "SKIP: needs root (/proc/kpageflags)"
  exit 77
fi
TOOL=${FOLIO_ORDERS_BIN:?FOLIO_ORDERS_BIN is not set (run through ctest, or export it)}
PY=${PYTHON:-python3}
[[ -x "${TOOL}" ]] || { echo "FAIL: ${TOOL} is not an executable" >&2; exit 1; }
command -v fincore >/dev/null || { echo "SKIP: fincore (util-linux) is missing"; exit 77; }

T=$(mktemp -d /var/tmp/folio-orders-test.XXXXXX)
trap 'rm -rf -- "${T}"' EXIT
F=${T}/data.bin

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Pages of F in the page cache, according to fincore.
fincore_pages() { fincore --noheadings --raw --output PAGES "${F}"; }
drop() { dd if="${F}" iflag=nocache count=0 status=none; }
# fincore's count once it has stopped changing: on kernel 6.18 the pages of a
# read-ahead window can still be arriving in the cache after the read() that
# started it has returned, so a count taken at once may grow by the next look
# without anyone touching the file. Waits until two counts 0.3 s apart agree
# (at most 10 s).
settled_pages() {
  local before now tries=0
  before=$(fincore_pages)
  while sleep 0.3; now=$(fincore_pages); [[ "${now}" != "${before}" ]]; do
    ((++tries < 33)) || fail "the cached page count did not settle (last ${before}, then ${now})"
    before=${now}
  done
  echo "${now}"
}

# check CASE EXPECTED_RESIDENT: runs the tool with --json and checks its report.
check() {
  local case=$1 expected=$2 json after
  json=$("${TOOL}" --json "${F}") || fail "${case}: the tool failed"
  after=$(fincore_pages)
  [[ "${after}" == "${expected}" ]] || fail "${case}: fincore said ${expected} pages before the tool, ${after} after"
  "${PY}" - "${case}" "${expected}" "${json}" "$(stat -c %s "${F}")" <<'PY' || fail "${case}: ${json}"
import json, sys
case, expected, r, size = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {case}: {what}")
ps = r["page_size"]
check(r["size_bytes"] == size, f"size_bytes {r['size_bytes']} != {size}")
check(r["pages"] == (size + ps - 1) // ps, f"pages {r['pages']} for {size} bytes")
check(r["resident_pages"] == expected, f"resident_pages {r['resident_pages']} != fincore's {expected}")
check(r["mapped_pages"] == r["resident_pages"] and r["unmapped_resident_pages"] == 0,
      "resident pages not all looked at (cache changed during the test?)")
orders = {int(k): v for k, v in r["orders"].items()}
check(sum(v["pages"] for v in orders.values()) == r["resident_pages"], "the orders' pages do not sum to resident")
check(sum(v["folios"] for v in orders.values()) == r["folios"], "the orders' folios do not sum to folios")
check(all(0 <= k <= 13 and v["folios"] >= 1 and v["folios"] <= v["pages"] <= v["folios"] << k
          for k, v in orders.items()), "an order holds more pages than its folios can, or fewer than one each")
if r["resident_pages"]:
    check(abs(sum(v["share"] for v in orders.values()) - 1) < 1e-4, "shares do not sum to 1")
full = sum(v["folios"] << k for k, v in orders.items())
if r["folios_past_end"] == 0 and r["folios_head_unmapped"] == 0:
    check(full == r["resident_pages"], f"folios cover {full} pages, {r['resident_pages']} resident")
else:
    check(full >= r["resident_pages"], f"folios cover {full} pages, fewer than {r['resident_pages']} resident")
print(f"ok: {case}: {r['resident_pages']} resident pages in {r['folios']} folios, orders "
      + ", ".join(f"{k}: {v['folios']}" for k, v in sorted(orders.items())))
PY
}

# The file: random bytes, durable so that dropping it leaves nothing cached.
head -c $((64 * 1024 * 1024 + 1234)) /dev/urandom | dd of="${F}" bs=1M conv=fsync status=none iflag=fullblock
PAGES=$(( ($(stat -c %s "${F}") + 4095) / 4096 ))
[[ "$(getconf PAGESIZE)" == 4096 ]] || PAGES=$(( ($(stat -c %s "${F}") + $(getconf PAGESIZE) - 1) / $(getconf PAGESIZE) ))

# 1. Nothing cached.
drop
[[ "$(fincore_pages)" == 0 ]] || fail "the file is still cached after posix_fadvise(DONTNEED)"
check "nothing cached" 0

# 2. Read whole, sequentially, in large requests.
dd if="${F}" of=/dev/null bs=8M status=none
[[ "$(fincore_pages)" == "${PAGES}" ]] || fail "a full read left $(fincore_pages) of ${PAGES} pages cached"
check "read whole" "${PAGES}"

# 3. Two ranges: the first 4 MiB and 3 MiB from the middle (readahead may add more).
drop
dd if="${F}" of=/dev/null bs=1M count=4 status=none
dd if="${F}" of=/dev/null bs=1M skip=30 count=3 status=none
partial=$(settled_pages)
((partial > 0 && partial < PAGES)) || fail "the two ranges left ${partial} of ${PAGES} pages cached"
check "two ranges" "${partial}"

# Errors: a missing file, a directory, a caller without root.
if "${TOOL}" "${T}/missing" 2>/dev/null; then fail "a missing file did not fail"; fi
if "${TOOL}" "${T}" 2>/dev/null; then fail "a directory did not fail"; fi
chmod 755 "${T}" && chmod 644 "${F}"
if msg=$(setpriv --reuid=65534 --regid=65534 --clear-groups "${TOOL}" "${F}" 2>&1); then
  fail "a caller without root did not fail"
fi
[[ "${msg}" == *root* ]] || fail "the message without root does not say it needs root: ${msg}"
echo "PASS"
