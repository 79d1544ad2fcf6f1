#!/usr/bin/env bash
# Identical content is stored once; re-importing an unchanged tree adds only a
# commit; revisions resolve by branch, BRANCH~N, full id and unique prefix.
source "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
SRC="$WORK/src"
mkdir -p "$SRC/sub"
head -c $((3 * MiB)) /dev/urandom >"$SRC/a"
cp "$SRC/a" "$SRC/sub/b"      # same bytes, another inode: dedup, not a hard link
printf 'x\n' >"$SRC/small"

step "init, first import"
expect_ok "$STRATA_BIN" init "$STORE"
# --store after the subcommand works as well as before it.
expect_ok "$STRATA_BIN" import "$SRC" --branch main -m first --json --store "$STORE"
cp "$OUT" "$WORK/import1.json"
c1=$(json 'd["commit"]')
[[ $c1 =~ ^[0-9a-f]{64}$ ]] || fail "import --json commit is not 64 hex: $c1"
json_true 'd["files"] == 3'
json_true "d['bytes'] == $((6 * MiB + 2))"
# Each 3 MiB copy is cut the same way: at most half the chunks are new
# (plus the one for 'small').
if [[ $(json '"chunks" in d') == true ]]; then
  json_true 'd["new_chunks"] <= d["chunks"] // 2 + 1'
fi
json_true '2 <= d["new_chunks"] <= 3 * 1024 * 1024 // (128 * 1024) + 1'

step "stats after the first import"
expect_ok strata stats --json
cp "$OUT" "$WORK/stats1.json"
# One copy of the data: raw bytes about 3 MiB, not 6.
json_true "$((3 * MiB)) <= d['raw_bytes'] <= $((3 * MiB + 64 * 1024))"
json_true "d['logical_bytes'] >= $((6 * MiB))"
json_true '1.9 <= d["dedup_ratio"] <= 2.1'
json_true 'd["objects"]["commit"] == 1'
json_true 'd["objects"]["tree"] == 2'
json_true '2 <= d["objects"]["chunk"] <= 25'
json_true 'd["packs"] >= 1'
# Random data does not compress: what is stored is about what came in.
json_true 'd["payload_bytes"] >= 3 * 1024 * 1024'
json_true 'd["stored_bytes"] >= d["payload_bytes"]'
json_true '0.9 <= d["compression_ratio"] <= 1.1'
npacks=$(ls "$STORE/packs" | grep -cE '^[0-9a-f]{64}\.pack$' || true)
[[ $npacks == $(json 'd["packs"]') ]] || fail "stats says $(json 'd["packs"]') packs, packs/ holds $npacks"
stored1=$(json 'd["stored_bytes"]')
chunks1=$(json 'd["objects"]["chunk"]')
trees1=$(json 'd["objects"]["tree"]')

step "second import of the same tree"
sleep 1.1   # a commit a second later has another time, so another id for sure
expect_ok strata import "$SRC" --branch main -m second --json
c2=$(json 'd["commit"]')
[[ $c2 =~ ^[0-9a-f]{64}$ && $c2 != "$c1" ]] || fail "second import gave no new commit: $c2"
json_true 'd["new_chunks"] == 0'
expect_ok strata stats --json
json_true "d['objects']['chunk'] == $chunks1"
json_true "d['objects']['tree'] == $trees1"
json_true 'd["objects"]["commit"] == 2'
growth=$(( $(json 'd["stored_bytes"]') - stored1 ))
(( growth > 0 )) || fail "stored_bytes did not grow for a new commit (growth $growth)"
(( growth < 16384 )) || fail "re-importing an unchanged tree grew the store by $growth bytes"
json_true "d['logical_bytes'] >= $((12 * MiB))"
json_true '3.8 <= d["dedup_ratio"] <= 4.2'

step "log"
expect_ok strata log --json
json_true 'isinstance(d, list) and len(d) == 2'
json_true "[c['id'] for c in d] == ['$c2', '$c1']"
json_true "d[0]['parents'] == ['$c1'] and d[1]['parents'] == []"
json_true "[c['message'] for c in d] == ['second', 'first']"
json_true 'd[0]["root"] == d[1]["root"] and len(d[0]["root"]) == 64'
json_true 'all(k in c for c in d for k in ("author", "time"))'
expect_ok strata log main
grep -q "$c1" "$OUT" || fail "human log does not show the first commit"
grep -q "$c2" "$OUT" || fail "human log does not show the second commit"
grep -q first "$OUT" && grep -q second "$OUT" || fail "human log does not show the messages"

step "revisions"
expect_ok strata log 'main~1' --json
json_true "d[0]['id'] == '$c1' and len(d) == 1"
expect_ok strata log 'main~0' --json
json_true "d[0]['id'] == '$c2'"
expect_ok strata log "$c1" --json
json_true "[c['id'] for c in d] == ['$c1']"
expect_ok strata log "${c2:0:10}" --json
json_true "d[0]['id'] == '$c2'"
if [[ ${c1:0:4} != "${c2:0:4}" ]]; then
  expect_ok strata log "${c1:0:4}" --json
  json_true "d[0]['id'] == '$c1'"
fi
expect_ok strata cat "main~1:sub/b"
cmp -s "$OUT" "$SRC/a" || fail "cat main~1:sub/b differs"
expect_ok strata cat "${c1:0:8}:small"
cmp -s "$OUT" "$SRC/small" || fail "cat PREFIX:small differs"
expect_ok strata ls "${c2:0:8}" --json
json_true 'sorted(e["name"] for e in d) == ["a", "small", "sub"]'

step "unknown and invalid revisions"
expect_exit 1 strata log 'main~2'
expect_exit 1 strata log nosuchbranch
expect_exit 1 strata cat 'nosuchbranch:a'
# An id that is not in the store (flip the last hex digit of c1).
last=${c1:63:1}
other=$([[ $last == 0 ]] && echo 1 || echo 0)
expect_exit 1 strata log "${c1:0:63}$other"
# A prefix of 3 hex digits is too short to name a commit.
expect_exit 1 strata log "${c1:0:3}"
# A prefix that matches nothing.
p=${c1:0:6}
for cand in 0000 1111 2222 3333 4444 5555 6666 7777 8888 9999 aaaa bbbb cccc dddd eeee ffff; do
  if [[ ${c1:0:4} != "$cand" && ${c2:0:4} != "$cand" ]]; then p=$cand; break; fi
done
expect_exit 1 strata log "$p"

step "files changed in place between imports are read again"
# strata may skip reading files whose stat is unchanged since the last import;
# a file rewritten with the same size and its old mtime put back must still
# be read (its ctime changed).
CH="$WORK/changing"
mkdir "$CH"
printf 'version one\n' >"$CH/f"
head -c 300000 /dev/urandom >"$CH/big"
touch -d '2020-02-02 02:02:02.5' "$CH/f" "$CH/big"
cp "$CH/big" "$WORK/big.v1"
sleep 2.2   # so that even the ctimes are a while in the past
expect_ok strata import "$CH" --branch changing -m v1 --json
expect_ok strata import "$CH" --branch changing -m v1-again --json
if [[ $(json '"cached_files" in d') == true ]]; then
  json_true 'd["cached_files"] == 2 and d["bytes_read"] == 0'
fi
printf 'version two\n' >"$CH/f"
python3 - "$CH/big" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(150000)
    old = f.read(64)
    f.seek(150000)
    f.write(bytes(b ^ 0xFF for b in old))
PY
touch -d '2020-02-02 02:02:02.5' "$CH/f" "$CH/big"
expect_ok strata import "$CH" --branch changing -m v2 --json
if [[ $(json '"cached_files" in d') == true ]]; then
  json_true 'd["cached_files"] == 0'
fi
json_true 'd["new_chunks"] >= 2'
expect_ok strata cat changing:f
[[ $(cat "$OUT") == 'version two' ]] || fail "re-import kept the old content of a rewritten file: $(cat "$OUT")"
expect_ok strata cat changing:big
cmp -s "$OUT" "$CH/big" || fail "re-import kept the old content of a file changed in the middle"
expect_ok strata cat 'changing~1:big'
cmp -s "$OUT" "$WORK/big.v1" || fail "changing~1:big is not the first version"
expect_ok strata cat 'changing~2:f'
[[ $(cat "$OUT") == 'version one' ]] || fail "changing~2:f is not the first version"
# A file replaced by another (new inode) of the same size and mtime.
printf 'version six\n' >"$WORK/f.new"
touch -d '2020-02-02 02:02:02.5' "$WORK/f.new"
mv "$WORK/f.new" "$CH/f"
expect_ok strata import "$CH" --branch changing -m v3
expect_ok strata cat changing:f
[[ $(cat "$OUT") == 'version six' ]] || fail "re-import kept the content of a replaced file: $(cat "$OUT")"

step "ambiguous prefix"
# Commit a tiny tree until two commit ids share their first 4 hex digits.
# With 65536 four-digit prefixes a repeat is expected after ~320 commits; by
# 700 the chance of none is 2.4%, and then this part is skipped (with a note)
# rather than fail on bad luck.
TINY="$WORK/tiny"
mkdir "$TINY"
printf 't\n' >"$TINY/t"
declare -A seen=(["${c1:0:4}"]=$c1 ["${c2:0:4}"]=$c2)
amb=""
for ((n = 1; n <= 700; n++)); do
  run strata import "$TINY" --branch amb -m "tiny $n"
  [[ $RC == 0 ]] || { _show_last; fail "tiny import $n failed with exit $RC"; }
  id=$(commit_of_output)
  if [[ -n ${seen[${id:0:4}]:-} ]]; then
    amb=${id:0:4}
    break
  fi
  seen[${id:0:4}]=$id
done
if [[ -z $amb ]]; then
  echo "NOTE: no two of $n commit ids share a 4-digit prefix; ambiguity not checked this run" >&2
  exit 0
fi
step "prefix $amb is shared by ${seen[$amb]} and $id (after $n imports)"
expect_exit 1 strata log "$amb"
expect_output_matches 'ambiguous'
expect_exit 1 strata cat "$amb:t"
expect_output_matches 'ambiguous'
# One more digit (where they differ) picks one of them.
for ((k = 5; k <= 64; k++)); do
  [[ ${id:0:k} != "${seen[$amb]:0:k}" ]] && break
done
expect_ok strata log "${id:0:k}" --json
json_true "d[0]['id'] == '$id'"
