#!/usr/bin/env bash
# Progress display of long commands (commit, export, push, pull): drawn on
# stderr when it is a terminal (a pseudo-terminal made by script(1) here), and
# never anything of it when stderr is a pipe or a file: no carriage return, no
# terminal control sequence. Either way the command does the same and prints
# the same summary. And while a mount's daemon commits, it still answers
# `strata stats` and the progress request.
source "$(dirname "$0")/lib.sh"
use_mountpoint
command -v script >/dev/null || fail "script is not installed (util-linux)"

start_fake_s3 "$WORK/fake"

# on_terminal CMD...: runs CMD with a pseudo-terminal as stdin, stdout and
# stderr; what it wrote there in $WORK/tty.out; fails the test when CMD fails.
on_terminal() {
  script -qefc "$(printf '%q ' "$@")" /dev/null </dev/null >"$WORK/tty.out" 2>&1 ||
    fail "on a terminal, $* failed: $(cat -v "$WORK/tty.out")"
}
# The sequence that erases the progress line (util/progress.cc).
ERASE=$'\r\033[K'
drawn() { grep -qF "$ERASE" "$WORK/tty.out"; }
no_terminal_codes() {
  if grep -q $'[\r\033]' "$1"; then
    fail "terminal codes in $1, which is no terminal: $(cat -v "$1")"
  fi
}

expect_ok "$STRATA_BIN" init "$STORE"
mkdir -p "$WORK/src"
head -c 4000000 /dev/urandom >"$WORK/src/blob"
printf 'hello\n' >"$WORK/src/small"
import_dir "$WORK/src" main first >/dev/null

step "export: a progress line on a terminal, none elsewhere"
on_terminal "$STRATA_BIN" --store "$STORE" export main "$WORK/out1"
drawn || fail "no progress line on a terminal: $(cat -v "$WORK/tty.out")"
assert_same_content "$WORK/src" "$WORK/out1"
expect_ok strata export main "$WORK/out2"
no_terminal_codes "$ERR"
assert_same_content "$WORK/src" "$WORK/out2"

step "commit of a mount: a progress line on a terminal, none elsewhere"
expect_ok strata mount --branch main --name w "$MP"
head -c 3000000 /dev/urandom >"$MP/second"
for i in $(seq 1 20); do head -c 200000 /dev/urandom >"$MP/many$i"; done
on_terminal "$STRATA_BIN" commit "$MP" -m second
drawn || fail "no progress line on a terminal: $(cat -v "$WORK/tty.out")"
# The daemon's counts reach the line, and it ends at all 21 files captured.
grep -qa "commit (.*100%  21/21" "$WORK/tty.out" ||
  fail "the commit's progress does not end at 100 % of 21 files: $(cat -v "$WORK/tty.out")"
grep -q "on branch main" "$WORK/tty.out" || fail "no commit summary on a terminal: $(cat -v "$WORK/tty.out")"
printf 'third\n' >"$MP/third"
expect_ok strata commit "$MP" -m third
no_terminal_codes "$ERR"
no_terminal_codes "$OUT"
expect_output_matches "on branch main"
expect_ok strata umount "$MP"

step "push and pull: a progress line on a terminal, none elsewhere"
expect_ok strata remote add far s3://progress/p --endpoint "$EP" --create-bucket
on_terminal "$STRATA_BIN" --store "$STORE" push far main
drawn || fail "no progress line on a terminal: $(cat -v "$WORK/tty.out")"
expect_ok strata branch create other main
expect_ok strata push far other
no_terminal_codes "$ERR"
STORE2="$WORK/store2"
expect_ok "$STRATA_BIN" init "$STORE2"
expect_ok "$STRATA_BIN" --store "$STORE2" remote add far s3://progress/p --endpoint "$EP"
on_terminal "$STRATA_BIN" --store "$STORE2" pull far main
drawn || fail "no progress line on a terminal: $(cat -v "$WORK/tty.out")"
expect_ok "$STRATA_BIN" --store "$STORE2" pull far other
no_terminal_codes "$ERR"
expect_ok "$STRATA_BIN" --store "$STORE2" export other "$WORK/out3"
[[ -f "$WORK/out3/second" && -f "$WORK/out3/third" ]] || fail "the pulled branch lacks the commits"

step "while a commit runs, strata stats, workspace list and the progress request are answered"
# The commit's daemon serves the read-only requests on a thread of its own,
# and the commands ask it nothing that waits for the commit (the path count
# needs a snapshot, served after it: unknown meanwhile). A reply proves it
# came during the commit when the progress asked before and after it both
# show that commit running: one that waited for the commit would find it
# done. A commit of 96 MiB of fresh random data runs for far longer than the
# few ms these take; should one end before they got in, another round is tried.
expect_ok strata mount --branch main --name beside "$MP"
python3 - "$STORE/workspaces/beside/control.sock" "$STRATA_BIN" "$STORE" "$MP" <<'PY' || fail "stats was not answered while a commit ran"
import json, os, socket, subprocess, sys, time
sock_path, strata, store, mp = sys.argv[1:5]
RUNNING = {"cut", "capture", "trees", "publish", "rebase"}

def progress():
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sock_path)
        s.sendall(b'{"op": "progress"}\n')
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    p = json.loads(reply)
    assert set(p) == {"phase", "files_done", "files_total", "bytes_done", "bytes_total"}, p
    assert p["files_done"] <= p["files_total"] and p["bytes_done"] <= p["bytes_total"], p
    return p

for round in range(3):
    for i in range(24):
        with open(f"{mp}/beside{round}-{i}", "wb") as f:
            f.write(os.urandom(4 << 20))
    commit = subprocess.Popen([strata, "--store", store, "commit", mp, "-m", f"beside {round}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    before = progress()
    while commit.poll() is None and before["phase"] not in RUNNING:
        time.sleep(0.005)
        before = progress()
    stats = subprocess.run([strata, "--store", store, "stats", mp, "--json"], capture_output=True, text=True)
    listed = subprocess.run([strata, "--store", store, "workspace", "list", "--json"], capture_output=True, text=True)
    after = progress()
    out, err = commit.communicate()
    if commit.returncode != 0 or "on branch main" not in out:
        sys.exit(f"the commit failed ({commit.returncode}): {out} {err}")
    if stats.returncode != 0:
        sys.exit(f"strata stats during the commit failed ({stats.returncode}): {stats.stderr}")
    # After it, the count is back, and nothing is left to commit.
    idle = json.loads(subprocess.run([strata, "--store", store, "stats", mp, "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    if idle["changed_paths"] != 0 or idle["commit"]["phase"] != "done":
        sys.exit(f"stats after the commit: {idle}")
    if listed.returncode != 0:
        sys.exit(f"strata workspace list during the commit failed ({listed.returncode}): {listed.stderr}")
    counters = json.loads(stats.stdout)
    if "workspace_counters" not in counters or "operations" not in counters:
        sys.exit(f"strata stats --json during the commit: {stats.stdout[:500]}")
    mine = [w for w in json.loads(listed.stdout) if w["name"] == "beside"]
    if before["phase"] in RUNNING and after["phase"] in RUNNING:
        if after["phase"] == "capture" and after["bytes_total"] < 24 * (4 << 20):
            sys.exit(f"the running commit's totals are not its files': {after}")
        if counters["commit"]["phase"] not in RUNNING or counters["changed_paths"] is not None:
            sys.exit(f"stats during the commit shows no commit running, or a path count: {stats.stdout[:300]}")
        if len(mine) != 1 or mine[0]["changed_paths"] is not None:
            sys.exit(f"workspace list during the commit: {listed.stdout}")
        print(f"round {round}: stats answered between {before} and {after}")
        sys.exit(0)
    print(f"round {round}: the commit ended first ({before} .. {after})", file=sys.stderr)
    if progress()["phase"] != "done":
        sys.exit("the commit returned, but its progress is not done")
sys.exit("in 3 rounds, no stats reply came while the commit ran")
PY
expect_ok strata umount "$MP"
