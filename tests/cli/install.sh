#!/usr/bin/env bash
# `cmake --install` of the build into a scratch prefix, and the installed
# pieces used as a user would: `man` finds strata(1) and a page per command
# (with every option the CLI has); bash's and zsh's completion functions,
# called as the shells call them, offer commands, options, branch and workspace
# names of the store on the command line; mount.fuse.strata mounts through
# `mount -t fuse.strata STORE:WORKSPACE MP -o ...` and through an fstab line
# (`mount -T FSTAB MP`), in a private mount namespace whose /sbin shows the
# installed helper (mount(8) looks for helpers in /sbin only).
# Needs STRATA_BUILD_DIR (the build directory; ctest sets it) and root.
source "$(dirname "$0")/lib.sh"
require_root
[[ -n "${STRATA_BUILD_DIR:-}" ]] || fail "STRATA_BUILD_DIR is not set"
for tool in man zsh unshare systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/install-deps.sh)"; exit 77; }
done

step "cmake --install into a scratch prefix"
prefix="$WORK/prefix"
expect_ok cmake --install "$STRATA_BUILD_DIR" --prefix "$prefix"
for f in bin/strata sbin/mount.fuse.strata share/man/man1/strata.1.gz share/man/man8/mount.fuse.strata.8.gz \
         share/bash-completion/completions/strata share/zsh/vendor-completions/_strata \
         share/doc/strata/examples/srv-build.mount; do
  [[ -s "$prefix/$f" ]] || fail "cmake --install did not install $f"
done
[[ -x "$prefix/sbin/mount.fuse.strata" ]] || fail "mount.fuse.strata is not executable"
grep -qF "strata='$prefix/bin/strata'" "$prefix/sbin/mount.fuse.strata" ||
  fail "the helper does not name the installed strata ($prefix/bin/strata)"
reference="$WORK/reference.json"
"$prefix/bin/strata" --cli-reference > "$reference"

step "the example systemd unit: systemd reads it without a complaint"
unit="$prefix/share/doc/strata/examples/srv-build.mount"
run systemd-analyze verify "$unit"
[[ $RC == 0 && ! -s $ERR && ! -s $OUT ]] || fail "systemd-analyze verify ${unit##*/} (exit $RC): $(cat "$ERR" "$OUT")"

step "man finds strata(1) and one page per command, each with the command's options"
export MANPATH="$prefix/share/man"
man_text() { LC_ALL=C MANWIDTH=200 man -P cat "$@" 2>"$WORK/man.err"; }
[[ $(man -w strata) == "$prefix/share/man/man1/strata.1.gz" ]] || fail "man -w strata: $(man -w strata)"
man_text strata > "$WORK/strata.1.txt"
grep -q "EXIT STATUS" "$WORK/strata.1.txt" || fail "strata(1) has no EXIT STATUS"
# Every command and every option of every command, from the CLI's own tables.
python3 - "$reference" > "$WORK/expected" <<'EOF'
import json, sys
ref = json.load(open(sys.argv[1]))
def walk(cmd, top):
    for o in cmd["options"]:
        print(top, o["names"][-1])
    for sub in cmd["commands"]:
        walk(sub, top)
for cmd in ref["commands"]:
    print("strata", "strata-" + cmd["name"])
    walk(cmd, cmd["name"])
EOF
[[ $(wc -l < "$WORK/expected") -gt 60 ]] || fail "the reference lists too few commands and options"
while read -r page word; do
  if [[ $page == strata ]]; then
    grep -qF -- "$word" "$WORK/strata.1.txt" || fail "strata(1) does not list $word"
  else
    man_text "strata-$page" > "$WORK/page.txt" || fail "man strata-$page: $(cat "$WORK/man.err")"
    grep -qF -- "$word" "$WORK/page.txt" || fail "strata-$page(1) does not list $word"
  fi
done < "$WORK/expected"
man_text mount.fuse.strata | grep -q "fuse.strata" || fail "man mount.fuse.strata"
# groff's own warnings (bad escapes, unknown requests) on every page.
for page in "$prefix"/share/man/man*/*.gz; do
  warnings=$(LC_ALL=C MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
  [[ -z $warnings ]] || fail "groff warns on ${page##*/}: $warnings"
done

step "a store with branches main and dev and an unmounted workspace build"
strata init >/dev/null
mkdir -p "$WORK/src/sub"
echo "from the commit" > "$WORK/src/sub/file"
expect_ok strata import "$WORK/src" --branch main -m one
expect_ok strata branch create dev main
mkdir "$WORK/mp"
expect_ok strata mount --branch main --name build "$WORK/mp"
expect_ok strata umount "$WORK/mp"

step "bash: the installed completion function, called with COMP_WORDS and COMP_CWORD"
bash_complete() {
  PATH="$prefix/bin:$PATH" bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _strata
    [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$prefix/share/bash-completion/completions/strata" "$@"
}
check_completion() {
  local expected=$1; shift
  local got
  got=$(bash_complete "$@")
  [[ $got == "$expected" ]] || fail "bash completion of '$*': got '$got', expected '$expected'"
}
s=(strata --store "$STORE")
check_completion "commit " strata comm
check_completion "create delete list " strata branch ""
check_completion "--workspace --writeback-cache " strata mount --w
check_completion "--read-only --readahead-kib --remote " strata mount --re
check_completion "dev main " "${s[@]}" mount --branch ""
check_completion "build " "${s[@]}" mount --workspace ""
check_completion "dev main " "${s[@]}" branch delete ""
check_completion "dev " "${s[@]}" log d
check_completion "build " "${s[@]}" commit bu
check_completion "ws:build " "${s[@]}" diff main ws:
check_completion "--message " "${s[@]}" commit build --me
# The store given after the command (global options may follow it) counts too.
check_completion "HEAD dev main " strata log --store "$STORE" ""
check_completion "HEAD " "${s[@]}" show H
# A store that does not exist offers nothing (and prints no error into the line).
check_completion "" strata --store "$WORK/none" log ""
check_completion "$WORK/mp " "${s[@]}" umount "$WORK/m"

step "zsh: lines completed with TAB in a real interactive zsh (compinit, the installed _strata)"
zsh_lines=("strata comm" "strata branch del" "strata branch delete ma"
           "strata mount --works" "strata mount --workspace b" "strata log --graph d")
zsh_expected=("strata commit" "strata branch delete" "strata branch delete main"
              "strata mount --workspace" "strata mount --workspace build" "strata log --graph dev")
STRATA_STORE=$STORE PATH="$prefix/bin:$PATH" timeout 120 zsh -f "$(dirname "$0")/zsh_complete.zsh" \
  "$prefix/share/zsh/vendor-completions" "$WORK/zsh.txt" "${zsh_lines[@]}" > "$WORK/zsh.raw" 2>&1 ||
  fail "zsh did not complete every line: $(cat "$WORK/zsh.raw" "$WORK/zsh.txt")"
mapfile -t zsh_got < "$WORK/zsh.txt"
for i in "${!zsh_lines[@]}"; do
  got=${zsh_got[$i]:-}
  got=${got% }  # the space zsh adds after a whole word
  [[ $got == "${zsh_expected[$i]}" ]] ||
    fail "zsh completion of '${zsh_lines[$i]}': expected '${zsh_expected[$i]}', got '$got'"
done

step "mount -t fuse.strata and an fstab line, in a private mount namespace"
cat > "$WORK/fstab" <<EOF
# an fstab as a user writes one
$STORE:build  $WORK/mp  fuse.strata  defaults,noauto,nofail,_netdev,chunk_cache_mib=16  0 0
$STORE:fresh  $WORK/mp2 fuse.strata  noauto,branch=dev,x-systemd.automount  0 0
$STORE:main   $WORK/ro  fuse.strata  ro,noauto  0 0
EOF
mkdir "$WORK/mp2" "$WORK/ro"
cat > "$WORK/inner.sh" <<'EOF'
set -euo pipefail
work=$1 prefix=$2 store=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
trap 'for m in "$work/mp" "$work/mp2" "$work/ro" /srv/build; do mountpoint -q "$m" && umount "$m"; done' EXIT
# mount(8) looks for mount.fuse.strata in /sbin only: show the installed one there.
mount -t overlay overlay -o "lowerdir=$prefix/sbin:/usr/sbin" /usr/sbin
[ -x /sbin/mount.fuse.strata ] || fail "the overlay does not show the helper"

# mount -t with -o: an existing workspace, strata options, mount(8)'s own options.
metrics=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mount -t fuse.strata "$store:build" "$work/mp" -o nofail,readahead_kib=512,metrics=$metrics
grep -q "^strata:build:$store $work/mp fuse.strata " /proc/mounts || fail "not in /proc/mounts: $(grep "$work" /proc/mounts)"
# metrics=HOST:PORT serves the mount's counters for Prometheus.
curl -fsS -o "$work/metrics" "http://$metrics/metrics" || fail "no metrics of the mount at $metrics"
grep -q '^strata_workspace_info{workspace="build",' "$work/metrics" || fail "not the mount's metrics: $(head "$work/metrics")"
[ "$(cat "$work/mp/sub/file")" = "from the commit" ] || fail "the workspace's file"
echo "written through mount -t" > "$work/mp/new"
umount "$work/mp"
mountpoint -q "$work/mp" && fail "umount left the mount"

# The fstab line: the same workspace again, with what was written.
mount -T "$work/fstab" "$work/mp"
[ "$(cat "$work/mp/new")" = "written through mount -t" ] || fail "the fstab mount lost a write"
# branch= starts a workspace that does not exist yet, on that branch.
mount -T "$work/fstab" "$work/mp2"
[ "$(cat "$work/mp2/sub/file")" = "from the commit" ] || fail "the new workspace on dev"
# ro: the part after the colon is a revision, mounted read-only.
mount -T "$work/fstab" "$work/ro"
touch "$work/ro/x" 2>/dev/null && fail "the read-only mount took a write"
grep -q " $work/ro fuse.strata ro," /proc/mounts || fail "the read-only mount is not ro"
"$prefix/bin/strata" --store "$store" workspace list > "$work/list"
grep -q '^fresh ' "$work/list" || fail "branch= did not make workspace fresh: $(cat "$work/list")"
umount "$work/mp" "$work/mp2" "$work/ro"

# The example systemd unit, mounted as systemd mounts it (mount What Where -t
# Type -o Options), on a /srv of this namespace with a store at /srv/strata.
unit="$prefix/share/doc/strata/examples/srv-build.mount"
unit_value() { sed -n "s/^$1=//p" "$unit"; }
mount -t tmpfs tmpfs /srv
"$prefix/bin/strata" --store /srv/strata init >/dev/null
mkdir -p /srv/tree /srv/build
echo "on main" > /srv/tree/file
"$prefix/bin/strata" --store /srv/strata import /srv/tree --branch main -m one >/dev/null
mount "$(unit_value What)" "$(unit_value Where)" -t "$(unit_value Type)" -o "$(unit_value Options)"
[ "$(cat /srv/build/file)" = "on main" ] || fail "the unit's mount does not show branch main"
"$prefix/bin/strata" --store /srv/strata workspace list | grep -q '^build ' || fail "the unit made no workspace build"
umount /srv/build

# Refusals: each says why, exits non-zero, and mounts nothing.
refused() {
  local want=$1; shift
  if "$@" 2>"$work/err"; then fail "$* succeeded"; fi
  grep -q -- "$want" "$work/err" || fail "$*: expected '$want' in: $(cat "$work/err")"
  mountpoint -q "$work/mp" && fail "$* left a mount"
  return 0
}
refused "has no workspace 'nosuch'" mount -t fuse.strata "$store:nosuch" "$work/mp"
refused "bogus" mount -t fuse.strata "$store:build" "$work/mp" -o bogus_option=1
refused "'noexec' is not supported" mount -t fuse.strata "$store:build" "$work/mp" -o noexec
# mount(8)'s atime, suid and dev options become strata mount's (the helper's
# own -f says what it would run).
"$prefix/sbin/mount.fuse.strata" "$store:build" "$work/mp" -f -o relatime,suid,dev,nosuid_x=1 2>"$work/err" || true
grep -q -- "mount --workspace build --atime relatime --suid --dev --nosuid-x 1 $work/mp" "$work/err" ||
  fail "the helper did not turn relatime,suid,dev into strata mount's options: $(cat "$work/err")"
refused "not STORE:WORKSPACE" mount -t fuse.strata "$store" "$work/mp"
refused "not an absolute path" mount -t fuse.strata "relative/store:build" "$work/mp"
echo "inner checks passed"
EOF
run unshare --mount --propagation private bash "$WORK/inner.sh" "$WORK" "$prefix" "$STORE"
[[ $RC == 0 ]] || fail "mount checks: $(cat "$ERR") $(cat "$OUT")"
grep -q "inner checks passed" "$OUT" || fail "the mount checks did not finish"
# Outside the namespace nothing was mounted, and the workspace kept its write.
grep -q "$WORK" /proc/mounts && fail "a mount leaked out of the namespace"
expect_ok strata workspace list
expect_output_matches '^build ' 
expect_ok strata commit build -m "written through mount -t"
expect_ok strata cat main:new
[[ $(cat "$OUT") == "written through mount -t" ]] || fail "the commit of the fstab-mounted workspace"
