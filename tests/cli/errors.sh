#!/usr/bin/env bash
# Mistakes get clear messages and the documented exit codes:
# 1 error, 2 usage error; never a crash, never a silent success.
source "$(dirname "$0")/lib.sh"

SRC="$WORK/src"
mkdir -p "$SRC/somedir"
printf 'content\n' >"$SRC/file"
printf 'nested\n' >"$SRC/somedir/inner"

step "missing store"
NOPE="$WORK/no-store-here"
expect_exit 1 "$STRATA_BIN" --store "$NOPE" log
expect_stderr_matches "$NOPE" "names the store path"
expect_stderr_matches 'strata init' "suggests strata init"
expect_stdout_empty
expect_exit 1 "$STRATA_BIN" stats --store "$NOPE"
expect_stderr_matches "$NOPE"
STRATA_STORE="$NOPE" expect_exit 1 "$STRATA_BIN" verify
expect_stderr_matches "$NOPE" "names the store path from STRATA_STORE"
expect_stderr_matches 'strata init'
[[ ! -e $NOPE ]] || fail "a command on a missing store created $NOPE"

step "init"
expect_ok "$STRATA_BIN" init "$STORE"
[[ -f "$STORE/config.json" ]] || fail "init wrote no config.json"
# A store exists: init on it again fails and leaves it alone.
cp "$STORE/config.json" "$WORK/config.saved"
expect_fail "$STRATA_BIN" init "$STORE"
(( RC == 1 )) || fail "init on an existing store exited $RC, want 1"
cmp -s "$STORE/config.json" "$WORK/config.saved" || fail "init on an existing store changed config.json"
# A non-empty directory that is not a store.
mkdir "$WORK/full" && printf 'x' >"$WORK/full/something"
expect_exit 1 "$STRATA_BIN" init "$WORK/full"
[[ ! -e "$WORK/full/config.json" ]] || fail "init wrote into a non-empty directory"
# An empty directory is fine, and so is --store instead of the argument.
mkdir "$WORK/empty-store"
expect_ok "$STRATA_BIN" init "$WORK/empty-store"
expect_ok "$STRATA_BIN" --store "$WORK/store-by-option" init
[[ -f "$WORK/store-by-option/config.json" ]] || fail "init via --store wrote no config.json"
# STRATA_STORE selects the store.
STRATA_STORE="$WORK/store-by-option" expect_ok "$STRATA_BIN" stats --json
json_true 'd["objects"]["commit"] == 0'

import_dir "$SRC" main "for errors" >/dev/null

step "usage errors exit 2"
expect_exit 2 strata log --no-such-option
expect_stderr_matches 'no-such-option'
expect_exit 2 "$STRATA_BIN" --no-such-option
expect_exit 2 strata no-such-command
expect_exit 2 strata import            # missing DIR
expect_exit 2 strata import "$SRC" --branch   # --branch without its value
expect_exit 2 strata export main       # missing DIR
expect_exit 2 strata cat               # missing REV:PATH
expect_exit 2 "$STRATA_BIN" --store    # --store without its value

step "a mistyped command names itself and the command meant; exit 2"
expect_exit 2 strata comit -m x
expect_stderr_matches "unknown command 'comit'; did you mean 'commit'\?"
expect_stdout_empty
expect_exit 2 "$STRATA_BIN" --store "$STORE" stauts
expect_stderr_matches "unknown command 'stauts'; did you mean 'status'\?"
expect_exit 2 strata frobnicate
expect_stderr_matches "unknown command 'frobnicate'"
if grep -qi "did you mean" "$ERR"; then fail "a word far from every command got a suggestion"; fi
expect_ok strata log --json   # a real command after --store is not taken for a typo

step "mount's options that do not go together are usage errors: exit 2, before the mountpoint is looked at"
mkdir -p "$WORK/mp"
expect_exit 2 strata mount "$WORK/mp"
expect_stderr_matches "exactly one of --new"
expect_exit 2 strata mount --new --branch main "$WORK/mp"
expect_exit 2 strata mount --read-only main --name x "$WORK/mp"
expect_stderr_matches "--name does not apply"
expect_exit 2 strata mount "$WORK/no-such-dir"
expect_exit 2 strata forget --keep-last 1

step "import errors"
expect_exit 1 strata import "$WORK/does-not-exist" --branch main
expect_stderr_matches 'does-not-exist'
expect_exit 1 strata import "$SRC/file" --branch main     # a file, not a directory
for bad in 'a..b' 'has space' 'x~1' 'a:b' '/lead' 'trail/' ''; do
  run strata import "$SRC" --branch "$bad"
  [[ $RC == 1 || $RC == 2 ]] || { _show_last; fail "branch name '$bad': exit $RC, want 1 or 2"; }
done
run strata import "$SRC" --branch -x
[[ $RC == 1 || $RC == 2 ]] || { _show_last; fail "branch name '-x': exit $RC, want 1 or 2"; }
run strata import "$SRC" --branch=-x
[[ $RC == 1 || $RC == 2 ]] || { _show_last; fail "branch name '--branch=-x': exit $RC, want 1 or 2"; }
# None of the refused imports made a commit or a branch.
expect_ok strata log --json
json_true 'len(d) == 1'
expect_ok strata stats --json
json_true 'd["objects"]["commit"] == 1'

step "unknown revisions and paths"
expect_exit 1 strata log nosuchbranch
expect_stderr_matches 'nosuchbranch'
expect_exit 1 strata ls nosuchbranch
expect_exit 1 strata cat nosuchbranch:file
expect_exit 1 strata export nosuchbranch "$WORK/x1"
[[ ! -e "$WORK/x1" ]] || [[ -z $(ls -A "$WORK/x1") ]] || fail "export of an unknown revision wrote files"
expect_exit 1 strata log 'main~5'
expect_exit 1 strata log 'main~x'
expect_exit 1 strata ls main:no/such/path
expect_stderr_matches "'no'|no/such/path"
expect_stderr_matches 'not exist|not found|no such'
expect_exit 1 strata ls main:file/below
expect_exit 1 strata cat main:nosuchfile
expect_stderr_matches 'nosuchfile'
expect_exit 1 strata cat main:somedir
expect_stderr_matches 'is a directory'
expect_stdout_empty

step "paths with '..' are refused"
expect_exit 1 strata cat main:../file
expect_stdout_empty
expect_exit 1 strata cat main:somedir/../file
expect_stdout_empty
expect_exit 1 strata cat main:../../../../../../etc/passwd
expect_stdout_empty
expect_exit 1 strata ls main:..
expect_stdout_empty

step "export into a non-empty directory"
mkdir "$WORK/busy" && printf 'keep me\n' >"$WORK/busy/mine"
expect_exit 1 strata export main "$WORK/busy"
[[ $(ls -A "$WORK/busy") == mine ]] || fail "export into a non-empty directory wrote into it"
[[ $(cat "$WORK/busy/mine") == 'keep me' ]] || fail "export into a non-empty directory changed a file"
# Export onto an existing file.
printf 'a file\n' >"$WORK/plainfile"
expect_exit 1 strata export main "$WORK/plainfile"
[[ $(cat "$WORK/plainfile") == 'a file' ]] || fail "export onto a file changed it"
# A correct export still works.
expect_ok strata export main "$WORK/good"
assert_same_tree "$SRC" "$WORK/good"

step "a store of an unsupported format version"
cp -a "$STORE" "$WORK/future"
python3 - "$WORK/future/config.json" <<'EOF'
import json, sys
p = sys.argv[1]
with open(p) as f:
    c = json.load(f)
assert "version" in c, "config.json has no 'version' key"
c["version"] = 999
with open(p, "w") as f:
    json.dump(c, f)
EOF
for cmd in log stats verify; do
  expect_exit 1 "$STRATA_BIN" --store "$WORK/future" "$cmd"
  expect_stderr_matches 'version' "mentions the version"
  expect_stderr_matches 'unsupported|not supported|unknown|999' "says the version is unsupported"
done
expect_exit 1 "$STRATA_BIN" --store "$WORK/future" import "$SRC" --branch main
expect_stderr_matches 'version'
# Refusing the store changed nothing in it.
diff -r "$STORE/packs" "$WORK/future/packs" >/dev/null || fail "a refused store had its packs changed"

step "a broken config.json"
cp -a "$STORE" "$WORK/broken"
printf '{ not json' >"$WORK/broken/config.json"
expect_fail "$STRATA_BIN" --store "$WORK/broken" log
[[ $RC == 1 || $RC == 3 ]] || { _show_last; fail "a broken config.json: exit $RC, want 1 (or 3, damage)"; }
expect_stderr_matches 'config'

step "a missing and a garbage index.db are both damage (exit 3), said alike"
cp -a "$STORE" "$WORK/no-index"
rm "$WORK/no-index/index.db"
cp -a "$STORE" "$WORK/bad-index"
head -c 8192 /dev/urandom >"$WORK/bad-index/index.db"
rm -f "$WORK/bad-index/index.db-wal" "$WORK/bad-index/index.db-shm"
for broken in no-index bad-index; do
  for cmd in log verify fsck; do
    expect_exit 3 "$STRATA_BIN" --store "$WORK/$broken" "$cmd"
    expect_stderr_matches 'index.*(is )?damaged|damaged.*index' "$broken: says the index is damaged"
  done
done

step "two imports racing for one new branch: no lost update, the loser exits 4"
RACE="$WORK/race"
mkdir "$RACE"
head -c $((24 * 1024 * 1024)) /dev/urandom >"$RACE/data"
"$STRATA_BIN" --store "$STORE" import "$RACE" --branch race -m racer1 >"$WORK/race1.out" 2>"$WORK/race1.err" </dev/null &
p1=$!
"$STRATA_BIN" --store "$STORE" import "$RACE" --branch race -m racer2 >"$WORK/race2.out" 2>"$WORK/race2.err" </dev/null &
p2=$!
BG_PIDS+=("$p1" "$p2")
r1=0; wait "$p1" || r1=$?
r2=0; wait "$p2" || r2=$?
BG_PIDS=()
step "racers exited $r1 and $r2"
winners=0
for k in 1 2; do
  rc_k=$([[ $k == 1 ]] && echo "$r1" || echo "$r2")
  case $rc_k in
    0) winners=$((winners + 1)) ;;
    4) grep -Eqi 'moved|conflict' "$WORK/race$k.err" || { cat "$WORK/race$k.err" >&2; fail "racer $k exited 4 without saying the branch moved"; } ;;
    *) cat "$WORK/race$k.err" >&2; fail "racer $k exited $rc_k, want 0 or 4" ;;
  esac
done
(( winners >= 1 )) || fail "both racing imports failed"
expect_ok strata log race --json
json_true "len(d) == $winners"

step "the good store is untouched by all of this"
expect_ok strata verify
expect_ok strata log --json
json_true '[c["message"] for c in d if c["message"] == "for errors"] == ["for errors"]'
expect_ok strata log main --json
json_true 'len(d) == 1 and d[0]["message"] == "for errors"'
