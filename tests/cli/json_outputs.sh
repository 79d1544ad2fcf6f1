#!/usr/bin/env bash
# Every read-only command that prints structured output takes --json, and
# what it prints then is one JSON document (python3 -m json.tool reads it)
# holding the fields scripts rely on. Every command of the command line
# itself (--cli-reference) must be named here as read-only or not, so a
# command added without --json fails here until it is. cat and output print a
# file's bytes; exec-status needs a detached run (cli_exec_detach covers it),
# key list an encrypted store (cli_encrypt).
source "$(dirname "$0")/lib.sh"
use_mountpoint

step "each read-only command takes --json"
"$STRATA_BIN" --cli-reference >"$WORK/reference.json"
python3 - "$WORK/reference.json" <<'PY' || fail "a read-only command lacks --json"
import json, sys
read_only = {"verify", "stats", "log", "ls", "show", "diff", "status", "fsck", "branch list", "workspace list",
             "remote list", "exec-status", "key list"}
# Commands that change something, or print a file's or a run's bytes.
others = {"init", "import", "export", "cat", "branch create", "branch delete", "fork", "mount", "umount",
          "workspace end", "commit", "reset", "rebase", "gc", "forget", "remote add", "remote remove", "push",
          "pull", "exec", "output", "stop", "key add", "key remove", "key passwd", "key export", "key unlock",
          "key lock"}
def leaves(command, prefix=""):
    for sub in command["commands"]:
        name = (prefix + " " + sub["name"]).strip()
        yield from leaves(sub, name) if sub["commands"] else [(name, sub)]
commands = dict(leaves(json.load(open(sys.argv[1]))))
unknown = sorted(set(commands) - read_only - others)
if unknown:
    sys.exit(f"commands this test does not know, read-only or not (say which above): {unknown}")
gone = sorted((read_only | others) - set(commands))
if gone:
    sys.exit(f"commands the command line no longer has: {gone}")
missing = sorted(c for c in read_only if "--json" not in [n for o in commands[c]["options"] for n in o["names"]])
if missing:
    sys.exit(f"without --json: {missing}")
PY

# parses: the last command's stdout is one JSON document.
parses() { python3 -m json.tool "$OUT" >/dev/null || fail "not JSON: $(head -c 500 "$OUT")"; }

mkdir -p "$WORK/src/d"
printf 'one\n' >"$WORK/src/d/f"
expect_ok "$STRATA_BIN" init "$STORE"
first=$(import_dir "$WORK/src" main first)
expect_ok strata mount --branch main --name w "$MP"
printf 'two\n' >"$MP/g"
expect_ok strata commit "$MP" -m second
printf 'three\n' >"$MP/h"
start_fake_s3 "$WORK/fake"
expect_ok strata remote add far s3://json/p --endpoint "$EP" --create-bucket

step "the store's: verify, fsck, stats"
expect_ok strata verify --json && parses
json_true 'd["ok"] and d["objects"] > 0 and d["problems"] == []'
expect_ok strata fsck --json && parses
json_true 'd["ok"] and d["reachable"] > 0'
expect_ok strata stats --json && parses
json_true 'd["branches"] == 1 and d["objects"]["commit"] == 2'

step "history: log, log --graph, show, diff, ls, branch list"
expect_ok strata log --json && parses
json_true '[c["message"] for c in d] == ["second", "first"] and d[1]["id"] == "'"$first"'"'
expect_ok strata log --graph --json && parses
json_true 'len(d) == 2 and all("graph" in c for c in d)'
expect_ok strata show main --json && parses
json_true 'd["message"] == "second" and d["parents"] == ["'"$first"'"] and any(c["path"] == "g" for c in d["changes"])'
expect_ok strata diff main~1 main --json && parses
json_true 'd["from"] == "'"$first"'" and any(c["path"] == "g" for c in d["changes"])'
expect_ok strata ls main --json && parses
json_true 'sorted(e["name"] for e in d) == ["d", "g"]'
expect_ok strata branch list --json && parses
json_true '[(b["name"], b["subject"]) for b in d] == [("main", "second")]'

step "workspaces and remotes: status, stats MOUNTPOINT, workspace list, remote list"
expect_ok strata status "$MP" --json && parses
json_true 'd["workspace"] == "w" and d["branch"] == "main" and any(c["path"] == "h" for c in d["changes"])'
expect_ok strata stats "$MP" --json && parses
json_true 'd["workspace"] == "w" and d["operations"]["write"]["count"] > 0'
expect_ok strata workspace list --json && parses
json_true '[(w["name"], w["mounted_at"]) for w in d] == [("w", "'"$MP"'")]'
expect_ok strata remote list --json && parses
json_true '[r["name"] for r in d] == ["far"]'
expect_ok strata umount "$MP"
