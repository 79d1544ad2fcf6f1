#!/usr/bin/env bash
# A workspace in history commands, on real mounts and unmounted: diff with a
# workspace side (ws:NAME, a mountpoint, or a workspace alone against its base).
source "$(dirname "$0")/lib.sh"
use_mountpoint
MP2="$WORK/mnt2"
mkdir -p "$MP2"
trap 'rc=$?; set +e; for m in "$MP" "$MP2"; do fusermount3 -u -z "$m" 2>/dev/null || true; done; (exit $rc); _cleanup' EXIT

mkdir -p "$WORK/src/d" "$WORK/src/e"
printf 'one\n' >"$WORK/src/a"
printf 'bee\n' >"$WORK/src/d/b"
printf 'see\n' >"$WORK/src/d/c"
printf 'eee\n' >"$WORK/src/e/x"
touch -d '2020-01-01 00:00:00' "$WORK/src/a" "$WORK/src/d/b" "$WORK/src/d/c" "$WORK/src/e/x" "$WORK/src/d" "$WORK/src/e" "$WORK/src"
expect_ok "$STRATA_BIN" init "$STORE"
base=$(import_dir "$WORK/src" main base)

step "diff: a mounted workspace against its base, by mountpoint and by ws:NAME"
expect_ok strata mount --branch main --name w1 "$MP"
printf 'more\n' >>"$MP/a"
printf 'new\n' >"$MP/d/n"
rm "$MP/d/b"
expect_ok strata diff "$MP"
[[ $(cat "$OUT") == $'M\ta\nM\td/\nD\td/b\nA\td/n' ]] || fail "diff MOUNTPOINT is not base vs workspace: $(cat "$OUT")"
expect_ok strata diff ws:w1 --json
json_true 'd["from"] == "'"$base"'" and d["to"] == "ws:w1" and [c["path"] for c in d["changes"]] == ["a", "d/", "d/b", "d/n"]'
json_true 'd["changes"][0]["old_size"] == 4 and d["changes"][0]["new_size"] == 9'
expect_ok strata diff main "$MP" -- d
[[ $(cat "$OUT") == $'M\td/\nD\td/b\nA\td/n' ]] || fail "diff REV MOUNTPOINT -- PATH: $(cat "$OUT")"
expect_ok strata diff ws:w1 -- a e
[[ $(cat "$OUT") == $'M\ta' ]] || fail "diff WORKSPACE -- PATH: $(cat "$OUT")"
expect_ok strata diff ws:w1 main --name-status
[[ $(cat "$OUT") == $'M\ta\nM\td/\nA\td/b\nD\td/n' ]] || fail "diff WORKSPACE REV: $(cat "$OUT")"
expect_ok strata diff ws:w1 --stat
expect_output_matches "4 paths changed \(1 added, 1 deleted, 2 modified\)"

step "the diff left the workspace's changes alone: the commit holds them"
expect_ok strata workspace list --json
changed_before=$(json 'd[0]["changed_paths"]')
expect_ok strata diff w1
expect_ok strata workspace list --json
json_true 'd[0]["changed_paths"] == '"$changed_before"
expect_ok strata commit "$MP" -m "change" --json
c1=$(json 'd["commit"]')
expect_ok strata diff "$base" "$c1"
[[ $(cat "$OUT") == $'M\ta\nM\td/\nD\td/b\nA\td/n' ]] || fail "the commit differs from what the diff showed"
expect_ok strata diff "$MP"
expect_stdout_empty

step "two workspaces compared; one of them not mounted"
expect_ok strata mount --branch main --name w2 "$MP2"
printf 'two\n' >"$MP2/e/x"
expect_ok strata umount "$MP2"
expect_ok strata diff ws:w2 "$MP"
[[ $(cat "$OUT") == $'M\te/x' ]] || fail "diff of two workspaces: $(cat "$OUT")"
expect_ok strata diff w2
[[ $(cat "$OUT") == $'M\te/x' ]] || fail "diff of an unmounted workspace against its base: $(cat "$OUT")"
expect_ok strata workspace list --json
json_true '[w["changed_paths"] for w in d if w["name"] == "w2"][0] > 0'

step "errors: not a workspace, unknown workspace"
expect_exit 2 strata diff main
expect_stderr_matches "not a workspace"
expect_fail strata diff ws:nosuch main
expect_stderr_matches "does not exist"

step "reset --hard on a mount: a shell inside sees the new content at once; an open file keeps its old bytes"
printf 'scratch\n' >"$MP/scratch"
printf 'local edit\n' >"$MP/e/x"
exec 7<"$MP/e/x"                       # an open file of the old content
ls -la "$MP" "$MP/d" "$MP/e" >/dev/null # the kernel caches these names and attributes
cat "$MP/a" >/dev/null
rc=0
out=$(cd "$MP" && {
  ls >/dev/null
  "$STRATA_BIN" --store "$STORE" reset "$MP" --hard "$base" >/dev/null || exit 10
  ls | tr '\n' ' '
  echo "|$(cat a)|$(cat d/b 2>&1)|$(ls d | tr '\n' ' ')"
}) || rc=$?
[[ $rc == 0 ]] || fail "reset --hard from a shell inside the mount failed ($rc)"
[[ $out == $'a d e |one|bee|b c ' ]] || fail "the shell inside the mount sees stale content: '$out'"
[[ ! -e $MP/scratch ]] || fail "a file created before the hard reset is still there"
[[ $(cat "$MP/e/x") == eee ]] || fail "e/x is not the base's after reset --hard"
[[ $(cat <&7) == "local edit" ]] || fail "the file open across the reset lost its old bytes"
exec 7<&-
expect_ok strata diff "$MP"
expect_stdout_empty
expect_ok strata workspace list --json
json_true '[w["changed_paths"] for w in d if w["name"] == "w1"][0] == 0'

step "reset without --hard keeps the content; the next commit holds it against the new base"
expect_ok strata reset "$MP" "$c1"
expect_output_matches "differs"
[[ $(cat "$MP/a") == one ]] || fail "a mixed reset changed the content"
expect_ok strata diff "$MP"
[[ $(cat "$OUT") == $'M\ta\nM\td/\nA\td/b\nD\td/n' ]] || fail "mixed reset: diff against the new base: $(cat "$OUT")"
expect_ok strata commit "$MP" -m "back to the base's content" --json
c3=$(json 'd["commit"]')
expect_ok strata diff "$base" "$c3"
expect_stdout_empty
expect_ok strata show "$c3" --json
json_true 'd["parents"] == ["'"$c1"'"]'

step "reset of a workspace that is not mounted, by name; errors"
expect_ok strata reset w2 --hard main
expect_ok strata diff w2
expect_stdout_empty
expect_fail strata reset w2 nosuchrev
expect_fail strata reset nosuch main
