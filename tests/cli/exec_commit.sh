#!/usr/bin/env bash
# strata exec --commit lands exactly what the program wrote, on the
# workspace's branch, and only when it exits 0; --discard ends the workspace
# when it fails. A workspace made for the run goes once it is committed.
source "$(dirname "$0")/lib.sh"
use_sandbox
AT=/mnt
[[ -d $AT ]] || fail "no /mnt to bind the tree at"

mkdir -p "$WORK/src/sub" "$WORK/src/gone"
printf 'hello\n' >"$WORK/src/a.txt"
printf 'deep\n' >"$WORK/src/sub/b.txt"
seq 1 50000 >"$WORK/src/sub/big.txt"
printf 'x\n' >"$WORK/src/gone/x"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base
base=$(commit_of_output)

# What the program does, run once in the sandbox and once on a plain copy.
script='set -e
echo new >new.txt
rm a.txt
rm -r gone
mkdir -p made/deeper
seq 1 30000 | sed s/^/line-/ >made/deeper/lines.txt
printf PATCH | dd of=sub/big.txt bs=1 seek=1000 conv=notrunc status=none
ln -s new.txt link
chmod 600 sub/b.txt
mv sub/b.txt sub/b-moved.txt'

step "--commit lands exactly what the program wrote"
expect_ok strata fork feature --from main
expect_ok strata exec --branch feature --name c1 --commit -m "the tool ran" --at "$AT" -- sh -c "$script"
expect_stderr_matches 'committed [0-9a-f]{64} on branch feature'
mkdir "$WORK/expected"
cp -a "$WORK/src/." "$WORK/expected/"
(cd "$WORK/expected" && sh -c "$script")
expect_ok strata export feature "$WORK/got"
assert_same_content "$WORK/expected" "$WORK/got"
[[ $(stat -c %a "$WORK/got/sub/b-moved.txt") == 600 ]] || fail "the mode change was not committed"
expect_ok strata log feature --json
json_true 'd[0]["message"].startswith("the tool ran") and d[1]["id"] == "'"$base"'"'
expect_ok strata diff main feature
for p in new.txt a.txt gone made link sub/big.txt sub/b-moved.txt; do
  grep -q "$p" "$OUT" || fail "diff does not name $p"
done
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "c1"] == []'
[[ $(strata log main --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])') == "$base" ]] ||
  fail "main moved"

step "a failing program is not committed; its workspace keeps what it wrote"
expect_ok strata fork f2 --from main
expect_exit 3 strata exec --branch f2 --name c2 --commit -m never --at "$AT" -- sh -c 'echo half >half.txt; exit 3'
expect_stderr_matches "workspace 'c2' stays"
[[ $(strata log f2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])') == "$base" ]] ||
  fail "a failed run moved its branch"
expect_ok strata diff f2 ws:c2
expect_output_matches 'half.txt'

step "--discard ends the workspace when the program fails, and only then"
expect_exit 1 strata exec --workspace c2 --discard --at "$AT" -- sh -c 'echo more >more.txt; false'
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "c2"] == []'
expect_ok strata exec --branch f2 --name c3 --discard --commit -m kept --at "$AT" -- sh -c 'echo ok >ok.txt'
expect_ok strata cat f2:ok.txt
[[ $(cat "$OUT") == ok ]] || fail "a successful --discard --commit run did not commit"

step "--json: started, exited, committed and ended events, one JSON object a line"
expect_ok strata exec --branch f2 --name c4 --json --commit -m events --at "$AT" -- sh -c 'echo json >j.txt'
python3 - "$OUT" <<'PY' || fail "bad --json events: $(cat "$OUT")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["event"] for e in events]
assert kinds == ["started", "exited", "committed", "ended"], kinds
assert events[0]["workspace"] == "c4" and events[0]["pid"] > 0
assert events[1]["exit_status"] == 0 and events[1]["end"] == "exited"
assert len(events[2]["commit"]) == 64 and events[2]["branch"] == "f2"
PY

step "--branch B --from REV forks B and runs on it in one command"
expect_ok strata exec --branch f5 --from main --name c5 --commit -m forked --at "$AT" -- sh -c 'echo forked >forked.txt'
expect_ok strata log f5 --json
json_true 'd[0]["message"].startswith("forked") and d[1]["id"] == "'"$base"'"'
expect_ok strata cat f5:forked.txt
[[ $(cat "$OUT") == forked ]] || fail "the forked branch lacks the program's file"
[[ $(strata log main --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])') == "$base" ]] ||
  fail "main moved"
# An existing branch is refused before anything runs.
expect_exit 125 strata exec --branch f5 --from main --name c6 --at "$AT" -- sh -c 'echo x >ran.txt'
expect_stderr_matches "branch 'f5' exists"
expect_exit 125 strata exec --workspace c5 --from main --at "$AT" -- true
expect_stderr_matches 'from applies to --branch only'
# A run that fails before its program starts takes its new branch away again.
expect_exit 127 strata exec --branch f7 --from main --name c7 --at "$AT" -- no-such-program-here
expect_ok strata branch list --json
json_true '[b for b in d if b["name"] == "f7"] == []'
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] in ("c6", "c7")] == []'

step "--keep-mounted leaves the mount; a later exec runs on it and leaves it"
expect_ok strata exec --branch main --name k1 --keep-mounted --at "$AT" -- sh -c 'echo kept >kept.txt'
mp=$(awk -v s="strata:k1:$STORE" '$1 == s {print $2}' /proc/mounts)
[[ -n $mp ]] || fail "--keep-mounted did not keep the mount"
[[ $(cat "$mp/kept.txt") == kept ]] || fail "the kept mount does not show the program's file"
expect_ok strata exec --workspace k1 --at "$AT" -- cat kept.txt
grep -q "^strata:k1:$STORE " /proc/mounts || fail "an exec on a mount it did not make unmounted it"
expect_ok strata umount "$mp"

step "--commit records the author of the config file, and refuses to run with a malformed one"
mkdir -p "$XDG_CONFIG_HOME/strata"
printf 'name = Sandbox Tool\nemail = tool@example.org\n' >"$XDG_CONFIG_HOME/strata/config"
expect_ok strata exec --branch f2 --name a1 --commit -m authored --at "$AT" -- sh -c 'echo a >authored.txt'
expect_ok strata show f2 --json
json_true 'd["author"] == "Sandbox Tool <tool@example.org>" and d["message"] == "authored"'
printf 'name = Sandbox Tool\nname = again\n' >"$XDG_CONFIG_HOME/strata/config"
expect_exit 125 strata exec --branch f2 --name a2 --commit -m refused --at "$AT" -- sh -c 'echo x >ran.txt'
expect_stderr_matches "config:2: 'name' is given a second time"
# Refused before anything was set up: no workspace for the run, so the program never ran.
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "a2"] == []'
expect_ok strata show f2 --json
json_true 'd["message"] == "authored"'
rm "$XDG_CONFIG_HOME/strata/config"
