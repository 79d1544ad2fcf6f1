#!/usr/bin/env bash
# strata exec: a program runs under bubblewrap on a mounted workspace. It has
# no network unless --net, sees the host read-only (--at) or nothing of it
# (--root), cannot see the store, runs as the uid asked for, and its exit
# status, signal death included, is the command's. The mount it needed is
# gone afterwards; the workspace keeps what it wrote.
source "$(dirname "$0")/lib.sh"
use_sandbox

# A directory of the host outside /tmp (the sandbox's /tmp is its own).
HOST=$(mktemp -d /var/tmp/strata-exec-host.XXXXXX)
EXTRA_SCRATCH=$HOST
echo host-secret >"$HOST/secret"
AT="$HOST/tree"
mkdir "$AT"

mkdir -p "$WORK/src/sub"
printf 'hello\n' >"$WORK/src/a.txt"
printf 'deep\n' >"$WORK/src/sub/b.txt"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$WORK/src" --branch main -m base

no_sandbox_mounts() {
  local found
  found=$(grep "$STORE/.*sandbox.mnt" /proc/mounts || true)
  [[ -z $found ]] || fail "a sandbox mount outlived strata exec: $found"
}

step "the program sees the workspace at --at DIR and its output passes through"
expect_ok strata exec --branch main --name w1 --at "$AT" -- sh -c 'pwd; cat a.txt sub/b.txt; echo to-stderr >&2'
[[ $(cat "$OUT") == "$AT"$'\n'"hello"$'\n'"deep" ]] || fail "unexpected stdout: $(cat "$OUT")"
grep -qx to-stderr "$ERR" || fail "stderr did not pass through"
no_sandbox_mounts
[[ -z $(ls -A "$AT") ]] || fail "the host directory under --at was written"

step "exit statuses pass through, death by a signal as 128 + the signal"
expect_exit 7 strata exec --workspace w1 --at "$AT" -- sh -c 'exit 7'
expect_exit 143 strata exec --workspace w1 --at "$AT" -- sh -c 'kill -TERM $$'
expect_stderr_matches 'killed by signal 15'
expect_exit 137 strata exec --workspace w1 --at "$AT" -- sh -c 'kill -KILL $$'
no_sandbox_mounts

step "no network without --net: a listener on the host's 127.0.0.1 is out of reach"
python3 - "$WORK/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.close()
PY
BG_PIDS+=($!)
for _ in $(seq 100); do [[ -s "$WORK/port" ]] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
connect='import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print("connected")'
python3 -c "$connect" "$PORT" >/dev/null || fail "the host itself cannot reach its listener"
expect_fail strata exec --workspace w1 --at "$AT" -- python3 -c "$connect" "$PORT"
expect_stderr_matches 'refused|unreachable'
expect_ok strata exec --workspace w1 --net --at "$AT" -- python3 -c "$connect" "$PORT"
grep -qx connected "$OUT" || fail "--net did not connect"

step "outside its tree nothing is writable, and the store is not even visible"
expect_ok strata exec --workspace w1 --at "$AT" -- sh -c "
  cat '$HOST/secret'
  if echo x >'$HOST/new' 2>/dev/null; then echo wrote-host; fi
  if echo x >/etc/strata-exec-test 2>/dev/null; then echo wrote-etc; fi
  if ls -A '$STORE' | grep -q .; then echo store-visible; fi
  echo mine >made-here"
! grep -q wrote "$OUT" || fail "the sandbox wrote outside its tree: $(cat "$OUT")"
! grep -q store-visible "$OUT" || fail "the sandbox sees the store"
[[ ! -e "$HOST/new" && ! -e /etc/strata-exec-test ]] || fail "a file outside the tree appeared"
grep -qx host-secret "$OUT" || fail "the read-only host view is missing"

step "the workspace kept what the program wrote; diff shows it"
expect_ok strata diff main ws:w1
expect_output_matches 'made-here'

step "it runs as the uid asked for, and its files are that uid's inside"
expect_ok strata exec --workspace w1 --uid 1234 --at "$AT" -- sh -c 'id -u; id -g; touch owned; stat -c %u owned'
[[ $(cat "$OUT") == $'1234\n1234\n1234' ]] || fail "uid inside: $(cat "$OUT")"
expect_ok strata exec --workspace w1 --at "$AT" -- id -u
[[ $(cat "$OUT") == "$(id -u)" ]] || fail "default uid inside: $(cat "$OUT")"

step "--root: the workspace is the whole file tree; nothing of the host shows"
ROOT="$WORK/rootfs"
mkdir -p "$ROOT"/{proc,dev,tmp,bin}
for prog in /bin/sh /bin/ls /bin/cat; do
  real=$(readlink -f "$prog")
  cp "$real" "$ROOT/bin/$(basename "$prog")"
  for lib in $(ldd "$real" | grep -o '/[^ ]*'); do
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
  done
done
expect_ok strata import "$ROOT" --branch rootfs -m "a minimal root"
expect_ok strata exec --branch rootfs --name r1 --root -- /bin/sh -c 'ls /; cat /var/tmp/* 2>&1; echo made >/made'
grep -qx bin "$OUT" || fail "the root tree is not /: $(cat "$OUT")"
! grep -Eq '^(etc|usr|root|home)$' "$OUT" || fail "host directories show under --root: $(cat "$OUT")"
! grep -q host-secret "$OUT" || fail "--root sees the host"
expect_ok strata diff rootfs ws:r1
expect_output_matches 'made'
no_sandbox_mounts

step "a program that is not there: 127 as a shell says it, 126 for one that cannot be executed"
expect_exit 127 strata exec --workspace w1 --at "$AT" -- no-such-program-here arg
expect_stderr_matches '^strata exec: no-such-program-here: not found$'
expect_exit 127 strata exec --workspace w1 --at "$AT" -- /no/such/dir/prog
expect_stderr_matches '^strata exec: /no/such/dir/prog: not found$'
# a.txt is in the working tree (the sandbox's working directory) but not executable.
expect_exit 126 strata exec --workspace w1 --at "$AT" -- ./a.txt
expect_stderr_matches '^strata exec: ./a.txt: not executable$'
# Looked up in the sandbox's view: the host's python3 is not in the root tree, its ls is.
expect_exit 127 strata exec --workspace r1 --root -- python3 -c 'print(1)'
expect_stderr_matches '^strata exec: python3: not found$'
expect_ok strata exec --workspace r1 --root -- ls /bin
grep -qx sh "$OUT" || fail "ls in the root tree was not run: $(cat "$OUT")"
# A workspace made for a run whose program is missing goes again, unmounted.
expect_exit 127 strata exec --branch main --name missing --at "$AT" -- no-such-program-here
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "missing"] == []'
no_sandbox_mounts

step "bad input is refused before anything runs"
expect_exit 125 strata exec --workspace w1 -- true
expect_stderr_matches 'exactly one of --at'
expect_exit 125 strata exec --workspace nosuch --at "$AT" -- true
expect_stderr_matches "no workspace"
expect_exit 125 strata exec --workspace w1 --at "$STORE" -- true
expect_exit 125 strata exec --workspace w1 --at relative -- true
# A workspace made for a run that could not start goes again.
expect_exit 125 strata exec --branch main --name never --at "$STORE" -- true
expect_ok strata workspace list --json
json_true '[w for w in d if w["name"] == "never"] == []'
# A link planted as the mountpoint is refused, and nothing is mounted through it.
rm -rf "$STORE/workspaces/w1/sandbox.mnt"
ln -s "$HOST" "$STORE/workspaces/w1/sandbox.mnt"
expect_exit 125 strata exec --workspace w1 --at "$AT" -- true
expect_stderr_matches 'link'
! grep -q " $HOST " /proc/mounts || fail "mounted through a planted link"
rm "$STORE/workspaces/w1/sandbox.mnt"
expect_exit 125 strata exec --branch main --commit --at "$AT" -- true
expect_stderr_matches 'message'
no_sandbox_mounts

step "exec's own command-line errors are 125 too, not the 2 of other commands (2 could be the program's)"
expect_exit 125 strata exec --no-such-option --workspace w1 --at "$AT" -- true
expect_stderr_matches 'no-such-option'
expect_exit 125 strata exec --workspace w1 --at "$AT"
expect_stderr_matches 'CMD'
expect_exit 125 strata exec --workspace w1 --at
expect_exit 125 strata exec --workspace w1 --at "$AT" --pids 0 -- true
expect_exit 125 strata exec --workspace w1 --at "$AT" --cpus nan -- true
expect_exit 125 strata exec --uid=-1 --workspace w1 --at "$AT" -- true
expect_ok strata exec --help
expect_exit 2 strata mount --no-such-option "$WORK"
expect_exit 2 strata exec-status
no_sandbox_mounts
