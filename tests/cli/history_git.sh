#!/usr/bin/env bash
# The history commands' git habits: the author from STRATA_AUTHOR_* or the
# config file, dates as git prints them, log -n/--oneline/HEAD/A..B, a graph
# that keeps unrelated histories apart (and its --json), diff --name-only and
# A..B, HEAD beside a workspace, and show REV:PATH.
source "$(dirname "$0")/lib.sh"
use_mountpoint
export TZ=UTC

src="$WORK/src"
mkdir -p "$src/dir"
printf 'one\n' >"$src/f"
printf 'inner\n' >"$src/dir/g"
expect_ok "$STRATA_BIN" init "$STORE"
login=$(id -un)

step "no identity anywhere: the author stays login@host"
expect_ok strata import "$src" --branch main -m first --date 2026-12-02T12:00:00Z
c1=$(commit_of_output)
expect_ok strata show "$c1" --json
json_true "d['author'] == '$login@' + '$(hostname)'"

step "dates as git prints them"
expect_ok strata log
expect_output_matches "^Date:   Wed Dec 2 12:00:00 2026 \+0000$"
expect_ok strata show "$c1"
expect_output_matches "^Date:   Wed Dec 2 12:00:00 2026 \+0000$"

step "the config file names the author; the environment wins, field by field"
mkdir -p "$XDG_CONFIG_HOME/strata"
printf '# who\nname = Ada Lovelace\n\nemail = ada@example.org\n' >"$XDG_CONFIG_HOME/strata/config"
printf 'two\n' >"$src/f"
c2=$(import_dir "$src" main second)
expect_ok strata log -n 1
expect_output_matches "^Author: Ada Lovelace <ada@example.org>$"
printf 'three\n' >"$src/f"
expect_ok env STRATA_AUTHOR_NAME="Grace Hopper" "$STRATA_BIN" --store "$STORE" import "$src" --branch main -m third
c3=$(commit_of_output)
expect_ok strata show "$c3" --json
json_true "d['author'] == 'Grace Hopper <ada@example.org>'"

step "a malformed config file is an error naming its line, and nothing is committed"
printf 'name = Ada\nmail = ada@example.org\n' >"$XDG_CONFIG_HOME/strata/config"
printf 'four\n' >"$src/f"
expect_exit 1 strata import "$src" --branch main -m refused
expect_stderr_matches "strata/config:2: unknown key 'mail'"
expect_ok strata log --json
json_true "len(d) == 3 and d[0]['id'] == '$c3'"
printf 'name = A <b>\n' >"$XDG_CONFIG_HOME/strata/config"
expect_exit 1 strata import "$src" --branch main -m refused
expect_stderr_matches "config:1: 'name' has '<' or '>'"
# Both variables set: the file is not needed.
expect_ok env STRATA_AUTHOR_NAME=Env STRATA_AUTHOR_EMAIL=env@example.org "$STRATA_BIN" --store "$STORE" \
  import "$src" --branch main -m fourth
c4=$(commit_of_output)
expect_ok strata show "$c4" --json
json_true "d['author'] == 'Env <env@example.org>'"

step "commit through a mount records the configured author"
printf 'name = Mount User\nemail = mount@example.org\n' >"$XDG_CONFIG_HOME/strata/config"
expect_ok strata mount --branch main --name w "$MP"
printf 'five\n' >"$MP/f"
expect_ok strata commit "$MP" -m fifth --json
c5=$(json 'd["commit"]')
expect_ok strata show "$c5" --json
json_true "d['author'] == 'Mount User <mount@example.org>'"

step "log -n, --oneline, HEAD and A..B"
s3=${c3:0:12}
s4=${c4:0:12}
s5=${c5:0:12}
expect_ok strata log --oneline -n 2
[[ $(cat "$OUT") == "$s5 (main) fifth"$'\n'"$s4 fourth" ]] || fail "log --oneline -n 2: $(cat "$OUT")"
expect_ok strata log -n 1 --json
json_true "[c['id'] for c in d] == ['$c5']"
expect_ok strata log HEAD~1 --oneline -n 1
[[ $(cat "$OUT") == "$s4 fourth" ]] || fail "log HEAD~1: $(cat "$OUT")"
expect_ok strata log "$c2..HEAD" --oneline
[[ $(cat "$OUT") == "$s5 (main) fifth"$'\n'"$s4 fourth"$'\n'"$s3 third" ]] || fail "log A..B: $(cat "$OUT")"
expect_ok strata log "HEAD~1.." --oneline
[[ $(cat "$OUT") == "$s5 (main) fifth" ]] || fail "log A.. (to HEAD): $(cat "$OUT")"
expect_ok strata log "HEAD..$c2" --oneline
expect_stdout_empty
expect_exit 1 strata log nosuch..main
expect_stderr_matches "unknown revision 'nosuch'"
expect_exit 2 strata log -n -1

step "log --graph: an unrelated history starts its own line, not the root's"
other="$WORK/other"
mkdir -p "$other"
printf 'x\n' >"$other/x"
u1=$(import_dir "$other" unrelated u1)
printf 'y\n' >"$other/x"
u2=$(import_dir "$other" unrelated u2)
expect_ok strata log --graph
# Newest tip first: u2, u1 (a root), then a blank row, then main's line.
mapfile -t rows <"$OUT"
[[ ${rows[0]} == "* ${u2:0:12} (unrelated) u2" && ${rows[1]} == "* ${u1:0:12} u1" && ${rows[2]} == "" &&
   ${rows[3]} == "* $s5 (main) fifth" ]] || fail "log --graph joins unrelated histories: $(cat "$OUT")"
[[ ${#rows[@]} == 8 && ${rows[7]} == "* ${c1:0:12} first" ]] || fail "log --graph rows: $(cat "$OUT")"
expect_ok strata log --graph --oneline -n 2
[[ $(wc -l <"$OUT") == 2 ]] || fail "log --graph -n 2: $(cat "$OUT")"
expect_ok strata log --graph --json
json_true "[c['id'] for c in d][:3] == ['$u2', '$u1', '$c5'] and d[2]['graph'] == {'before': [''], 'line': '* ', 'after': []}"
json_true "d[0]['author'] == 'Mount User <mount@example.org>' and d[1]['parents'] == []"
# HEAD with two branches and one of them main is main.
expect_ok strata log HEAD -n 1 --oneline
[[ $(cat "$OUT") == "$s5 (main) fifth" ]] || fail "HEAD is not main's head: $(cat "$OUT")"

step "diff --name-only and diff A..B"
expect_ok strata diff "$c1" "$c5" --name-only
[[ $(cat "$OUT") == "f" ]] || fail "diff --name-only: $(cat "$OUT")"
expect_ok strata diff "$c1..$c5"
[[ $(cat "$OUT") == $'M\tf' ]] || fail "diff A..B: $(cat "$OUT")"
expect_exit 2 strata diff "$c1" "$c5" --name-only --stat

step "HEAD beside a workspace is its base, not the branch's head"
printf 'six\n' >"$src/f"
c6=$(import_dir "$src" main sixth)   # main moves on; the workspace stays on c5
printf 'mine\n' >"$MP/new"
expect_ok strata diff HEAD "$MP" --name-only
# "." is the top directory, whose mtime the new file changed.
[[ $(cat "$OUT") == $'.\nnew' ]] || fail "diff HEAD MOUNTPOINT compared with main's head: $(cat "$OUT")"
expect_ok strata diff HEAD~1 ws:w --name-status
[[ $(cat "$OUT") == $'M\t.\nM\tf\nA\tnew' ]] || fail "diff HEAD~1 ws:NAME: $(cat "$OUT")"
expect_ok strata diff HEAD~1 HEAD --name-only
[[ $(cat "$OUT") == "f" ]] || fail "diff HEAD~1 HEAD: $(cat "$OUT")"
# log: a workspace stands for its base; HEAD beside it is that base too.
expect_ok strata log ws:w --oneline -n 1
[[ $(cat "$OUT") == "$s5 fifth" ]] || fail "log ws:NAME does not start at the workspace's base: $(cat "$OUT")"
expect_ok strata log "$MP" --oneline -n 1
[[ $(cat "$OUT") == "$s5 fifth" ]] || fail "log MOUNTPOINT: $(cat "$OUT")"
expect_ok strata log ws:w..main --oneline
[[ $(cat "$OUT") == "${c6:0:12} (main) sixth" ]] || fail "log ws:NAME..main: $(cat "$OUT")"
expect_ok strata log HEAD~1..ws:w --oneline
[[ $(cat "$OUT") == "$s5 fifth" ]] || fail "log HEAD~1..ws:NAME (HEAD the workspace's base): $(cat "$OUT")"
expect_ok strata diff ws:w..main --name-only
[[ $(cat "$OUT") == $'.\nf\nnew' ]] || fail "diff ws:NAME..REV: $(cat "$OUT")"
expect_exit 1 strata log ws:nosuch
expect_stderr_matches "nosuch"
expect_ok strata umount "$MP"

step "show REV:PATH: a file's content at a commit"
expect_ok strata show "$c1:f"
[[ $(cat "$OUT") == "one" ]] || fail "show REV:PATH: $(cat "$OUT")"
expect_ok strata show HEAD~3:dir/g
[[ $(cat "$OUT") == "inner" ]] || fail "show HEAD~N:PATH: $(cat "$OUT")"
expect_ok strata show "${c6:0:12}:f"
[[ $(cat "$OUT") == "six" ]] || fail "show PREFIX:PATH: $(cat "$OUT")"
expect_exit 2 strata show main:f --json
expect_stdout_empty
expect_exit 1 strata show main:missing
expect_stderr_matches "'missing' does not exist"
expect_stdout_empty
expect_exit 1 strata show main:dir
expect_stderr_matches "'main:dir' is a directory"
expect_stdout_empty

echo "PASS: history_git"
