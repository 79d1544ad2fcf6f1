#!/usr/bin/env bash
# A flipped byte inside a pack is found by verify (exit 3, naming the object and
# the pack), and reading the damaged file fails with exit 3 instead of giving
# wrong bytes; the undamaged files still read back exactly.
source "$(dirname "$0")/lib.sh"

SRC="$WORK/src"
mkdir -p "$SRC"
# Incompressible data, so the pack is almost all chunk payload.
for i in 1 2 3 4 5 6 7 8; do
  head -c $((1024 * 1024 + i * 1000)) /dev/urandom >"$SRC/file$i"
done
printf 'a small text file\n' >"$SRC/note.txt"

step "init, import"
expect_ok "$STRATA_BIN" init "$STORE"
import_dir "$SRC" main "data" >/dev/null
expect_ok strata verify
expect_ok strata ls main --json
cp "$OUT" "$WORK/ls.json"
json_true 'sorted(e["name"] for e in d) == ["file%d" % i for i in range(1, 9)] + ["note.txt"]'

step "flip one byte in the middle of the largest pack"
pack=$(ls -S "$STORE"/packs/*.pack | head -n 1)
[[ -f $pack ]] || fail "no pack file in $STORE/packs"
packname=$(basename "$pack" .pack)
[[ $packname =~ ^[0-9a-f]{64}$ ]] || fail "pack name is not 64 hex: $packname"
size=$(file_size "$pack")
(( size > 8 * 1024 * 1024 )) || fail "largest pack is only $size bytes; expected the 8 MiB of data in it"
cp "$pack" "$WORK/pack.orig"
flip_middle_byte "$pack"
cmp -s "$pack" "$WORK/pack.orig" && fail "the pack did not change"

step "verify finds it"
expect_exit 3 strata verify
expect_output_matches "$packname"
# The damaged object is named by its id (another 64-hex string than the pack's).
ids=$(cat "$OUT" "$ERR" | grep -oE '[0-9a-f]{64}' | grep -v "$packname" | sort -u)
[[ -n $ids ]] || { _show_last; fail "verify output names no damaged object id"; }
expect_exit 3 strata verify --json
# The JSON report has an entry naming the damaged object and its pack
# (searched for anywhere in the document, whatever the schema).
python3 - "$OUT" "$packname" $ids <<'EOF2' || fail "verify --json names no damaged object together with its pack"
import json, sys
doc = json.load(open(sys.argv[1]))
pack, ids = sys.argv[2], set(sys.argv[3:])
def objs(x):
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from objs(v)
    elif isinstance(x, list):
        for v in x:
            yield from objs(v)
ok = any(any(isinstance(v, str) and v in ids for v in o.values()) and
         any(isinstance(v, str) and pack in v for v in o.values()) for o in objs(doc))
sys.exit(0 if ok else 1)
EOF2
step "verify named: $(echo $ids)"

step "cat: exactly one file is damaged, the others read back exactly"
damaged=()
for i in 1 2 3 4 5 6 7 8; do
  run strata cat "main:file$i"
  case $RC in
    0) cmp -s "$OUT" "$SRC/file$i" || fail "cat main:file$i exited 0 with wrong bytes" ;;
    3) damaged+=("file$i")
       expect_stderr_matches 'damaged|corrupt' "message for a damaged object"
       # ... naming the object that verify found, and its pack.
       grep -qF -f <(echo "$ids") "$ERR" || { _show_last; fail "cat main:file$i names none of the damaged objects: $ids"; }
       expect_stderr_matches "$packname"
       # What was printed before the damage was found must be a true prefix.
       if [[ -s $OUT ]]; then
         cmp -s -n "$(file_size "$OUT")" "$OUT" "$SRC/file$i" || fail "cat main:file$i printed wrong bytes before failing"
         (( $(file_size "$OUT") < $(file_size "$SRC/file$i") )) || fail "cat main:file$i printed the whole size and still failed"
       fi ;;
    *) _show_last; fail "cat main:file$i exited $RC (want 0, or 3 when damaged)" ;;
  esac
done
(( ${#damaged[@]} == 1 )) || fail "expected exactly one damaged file, got: ${damaged[*]:-none}"
expect_ok strata cat main:note.txt
cmp -s "$OUT" "$SRC/note.txt" || fail "cat main:note.txt differs"
step "damaged: ${damaged[0]}"

step "export fails and writes no wrong bytes"
expect_fail strata export main "$WORK/out"
[[ $RC == 3 ]] || { _show_last; fail "export of a damaged tree exited $RC, want 3"; }
expect_output_matches 'damaged|corrupt'
if [[ -d "$WORK/out" ]]; then
  while IFS= read -r -d '' f; do
    rel=${f#"$WORK/out/"}
    [[ -f "$SRC/$rel" ]] || fail "export wrote $rel, which is not in the source"
    n=$(file_size "$f")
    (( n <= $(file_size "$SRC/$rel") )) || fail "exported $rel is larger than the original"
    cmp -s -n "$n" "$f" "$SRC/$rel" || fail "export wrote wrong bytes into $rel"
    if [[ $rel == "${damaged[0]}" ]] && (( n == $(file_size "$SRC/$rel") )); then
      fail "export wrote the damaged file $rel in full"
    fi
  done < <(find "$WORK/out" -type f -print0)
fi

step "restoring the pack makes the store whole again"
cp "$WORK/pack.orig" "$pack"
expect_ok strata verify
expect_ok strata export main "$WORK/out2"
assert_same_content "$SRC" "$WORK/out2"

step "a truncated pack is damage too"
truncate -s $((size / 2)) "$pack"
expect_exit 3 strata verify
expect_output_matches "$packname"
run strata cat "main:${damaged[0]}"
[[ $RC == 0 ]] && fail "cat from a truncated pack succeeded"
(( RC == 3 )) || { _show_last; fail "cat from a truncated pack exited $RC, want 3"; }

step "a pack missing from the store is damage too"
rm -f "$pack"
expect_exit 3 strata verify
expect_output_matches "$packname"
run strata cat "main:${damaged[0]}"
(( RC == 3 )) || { _show_last; fail "cat with its pack missing exited $RC, want 3"; }
