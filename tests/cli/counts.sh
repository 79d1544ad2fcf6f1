#!/usr/bin/env bash
# Numbers the commands print about a workspace, on real mounts: a fresh
# `--new` workspace has no changes in `workspace list`, `stats`, `status` and
# `diff`; `status`, `diff` and `commit` count the same changed paths (a hard
# link once: its one new name); the commit line says how many files and how
# many objects were new; data committed through a mount counts as logical
# bytes of the store, so its dedup ratio is right; and HEAD run from inside
# a mount is that workspace's base; `workspace list`, `stats` and the refusal
# of `workspace end` count changed paths as `diff` lists them, through
# writes, hard links, deletions and renames.
source "$(dirname "$0")/lib.sh"
use_two_mountpoints

# diff, status, workspace list and stats count the same changed paths of the
# workspace $1 mounted at $2; that count goes to COUNT.
counts_agree() {
  local name=$1 mp=$2 n
  expect_ok strata diff "$mp" --name-only
  n=$(wc -l <"$OUT")
  expect_ok strata status "$mp" --json
  json_true "len(d['changes']) == $n"
  expect_ok strata workspace list --json
  json_true "[w['changed_paths'] for w in d if w['name'] == '$name'] == [$n]"
  expect_ok strata workspace list
  [[ $(awk -v w="$name" '$1 == w { print $4 }' "$OUT") == "$n" ]] || fail "workspace list's CHANGED for $name is not $n"
  expect_ok strata stats "$mp" --json
  json_true "d['changed_paths'] == $n"
  expect_ok strata stats "$mp"
  expect_output_matches "^workspace $name at .*, $n changed paths$"
  COUNT=$n
}

step "a fresh --new workspace shows no change anywhere"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name fresh "$MP"
expect_ok strata workspace list --json
json_true '[w["changed_paths"] for w in d if w["name"] == "fresh"] == [0]'
expect_ok strata stats "$MP" --json
json_true 'd["changed_paths"] == 0'
expect_ok strata status "$MP" --json
json_true 'd["changes"] == []'
expect_ok strata diff "$MP" --name-only
expect_stdout_empty

step "files and a hard link: status, diff and commit count the same paths"
mkdir "$MP/d"
head -c 1048576 /dev/urandom >"$MP/d/a"
printf 'b\n' >"$MP/d/b"
printf 'c\n' >"$MP/c"
ln "$MP/d/a" "$MP/d/link"
expect_ok strata status "$MP" --json
n=$(json 'len(d["changes"])')
json_true 'sorted(c["path"] for c in d["changes"]) == ["c", "d/", "d/a", "d/b", "d/link"]'
expect_ok strata diff "$MP" --name-only
[[ $(wc -l <"$OUT") == "$n" ]] || fail "diff lists $(wc -l <"$OUT") paths, status $n"
expect_ok strata commit "$MP" -m first --branch fresh
expect_output_matches "^  $n changed paths: 3 files and 2 directories written, .* [0-9]+ objects new to the store"

step "data committed through a mount counts as logical bytes: the dedup ratio is right"
expect_ok strata stats --json
json_true 'd["logical_bytes"] == 1048576 + 4'
cp "$MP/d/a" "$MP/copy"
expect_ok strata commit "$MP" -m copy
expect_ok strata stats --json
json_true 'd["logical_bytes"] == 2 * 1048576 + 4'
json_true '1.9 < d["dedup_ratio"] < 2.1'
expect_ok strata stats
expect_output_matches "dedup ratio +(1\.9|2\.0)[0-9]x"

step "HEAD inside a mount is that workspace's base, not the branch's head"
expect_ok strata log fresh -n 1 --json
c2=$(json 'd[0]["id"]')
expect_ok strata mount --branch fresh --name other "$MP2"
printf 'moved on\n' >"$MP2/c"
expect_ok strata commit "$MP2" -m "moved on" --json
c3=$(json 'd["commit"]')
cd "$MP/d"
expect_ok strata log HEAD -n 1 --json
json_true 'd[0]["id"] == "'"$c2"'"'
expect_ok strata show HEAD --json
json_true 'd["id"] == "'"$c2"'"'
expect_ok strata show HEAD:c
[[ $(cat "$OUT") == "c" ]] || fail "show HEAD:c inside the mount did not read the workspace's base"
expect_ok strata diff HEAD fresh --name-only
[[ $(cat "$OUT") == "c" ]] || fail "diff HEAD fresh inside the mount should list what the other workspace changed"
cd /
expect_ok strata show fresh --json
json_true 'd["id"] == "'"$c3"'"'

step "workspace list and stats count what diff lists: clean, delete, hard link, rename, write"
counts_agree other "$MP2"
[[ $COUNT == 0 ]] || fail "a workspace just committed shows $COUNT changes"
rm "$MP2/copy"
counts_agree other "$MP2"
(( COUNT >= 1 )) || fail "a deletion is a change of a path"
ln "$MP2/c" "$MP2/c-link"
counts_agree other "$MP2"
deleted_and_linked=$COUNT
mv "$MP2/d/b" "$MP2/d/b2"
counts_agree other "$MP2"
(( COUNT > deleted_and_linked )) || fail "a rename is no change"
printf 'new\n' >"$MP2/d/new"
counts_agree other "$MP2"
mounted_count=$COUNT

step "unmounted, the workspace counts the same; workspace end's refusal says that count"
expect_ok strata umount "$MP2"
expect_ok strata workspace list --json
json_true "[w['changed_paths'] for w in d if w['name'] == 'other'] == [$mounted_count]"
expect_fail strata workspace end other
expect_stderr_matches "uncommitted changes \\($mounted_count changed paths\\)"
expect_ok strata workspace end other --discard
