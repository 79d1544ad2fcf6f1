#!/usr/bin/env bash
# Past versions as plain files in a mount: .strata/commits/ID/ and
# .strata/branches/NAME (a symlink to its head there) read what was
# committed, refuse every change, stay out of the root's listing and of the
# next commit, and are gone with --no-past-versions. (Through Samba:
# past_versions_samba.sh.)
source "$(dirname "$0")/lib.sh"
use_mountpoint

# expect_erofs CMD...: the command fails, and says the file system is read-only.
expect_erofs() {
  if "$@" 2>"$ERR"; then fail "succeeded on a past version: $*"; fi
  grep -q "Read-only file system" "$ERR" || { cat "$ERR" >&2; fail "not EROFS: $*"; }
}

step "two commits through a mount"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name ws "$MP"
mkdir "$MP/dir"
printf 'one\n' >"$MP/dir/f.txt"
printf 'kept\n' >"$MP/same.txt"
expect_ok strata commit "$MP" -m first --branch main --json
c1=$(json 'd["commit"]')
printf 'two\n' >"$MP/dir/f.txt"
rm "$MP/same.txt"
expect_ok strata commit "$MP" -m second --json
c2=$(json 'd["commit"]')
printf 'three, not committed\n' >"$MP/dir/f.txt"

step "an old version by commit id, by a prefix of it, and a branch at its head"
[[ $(cat "$MP/.strata/commits/$c1/dir/f.txt") == one ]] || fail "commits/<c1> does not hold the first version"
[[ $(cat "$MP/.strata/commits/${c1:0:10}/dir/f.txt") == one ]] || fail "a prefix of c1 does not find it"
[[ $(cat "$MP/.strata/commits/$c1/same.txt") == kept ]] || fail "a file removed since is not in its past version"
[[ $(cat "$MP/.strata/commits/$c2/dir/f.txt") == two ]] || fail "commits/<c2> does not hold the second version"
[[ $(cat "$MP/.strata/branches/main/dir/f.txt") == two ]] || fail "branches/main is not at its head"
[[ ! -e "$MP/.strata/branches/main/same.txt" ]] || fail "branches/main shows a file its head removed"
[[ $(cat "$MP/dir/f.txt") == "three, not committed" ]] || fail "the workspace's own file changed"
cp "$MP/.strata/commits/$c1/dir/f.txt" "$MP/restored.txt"  # restoring is a plain copy
[[ $(cat "$MP/restored.txt") == one ]] || fail "a copy out of a past version differs"
[[ $(readlink "$MP/.strata/branches/main") == "../commits/$c2" ]] || fail "branches/main is no link to its head"
ls "$MP/.strata/branches" >"$OUT"
[[ $(cat "$OUT") == main ]] || fail "branches/ lists '$(cat "$OUT")', not main"
[[ -z $(ls -A "$MP/.strata/commits") ]] || fail "commits/ lists something (it is found by id only)"
for missing in commits/0000 "commits/${c1:0:3}" commits/not-hex branches/nope other; do
  [[ ! -e "$MP/.strata/$missing" ]] || fail ".strata/$missing exists"
done

step "every change to a past version is refused with EROFS"
old="$MP/.strata/commits/$c1"
expect_erofs sh -c "printf x >'$old/dir/f.txt'"
expect_erofs python3 -c 'import sys; f = open(sys.argv[1], "a"); f.write("x"); f.close()' "$old/dir/f.txt"
expect_erofs truncate -s 0 "$old/dir/f.txt"
expect_erofs touch "$old/dir/new.txt"
expect_erofs mkdir "$old/newdir"
expect_erofs rm "$old/dir/f.txt"
expect_erofs mv "$old/dir/f.txt" "$old/moved.txt"
expect_erofs chmod 600 "$old/dir/f.txt"
expect_erofs setfattr -n user.x -v 1 "$old/dir/f.txt"
expect_erofs mkdir "$MP/.strata/commits/x"
expect_erofs rmdir "$MP/.strata/commits"
[[ $(cat "$old/dir/f.txt") == one ]] || fail "a refused change changed the past version"

step ".strata is not in the root's listing, in find, or in the next commit"
stat "$MP/.strata" >/dev/null || fail "a lookup of .strata fails"
ls -a "$MP" >"$OUT"
grep -qx '.strata' "$OUT" && fail "ls -a of the root shows .strata"
find "$MP" -name f.txt >"$OUT"
[[ $(wc -l <"$OUT") == 1 ]] || fail "find went into .strata: $(cat "$OUT")"
expect_ok strata commit "$MP" -m third --json
c3=$(json 'd["commit"]')
# The kernel had branches/main cached (at c2): the commit made it look again.
[[ $(readlink "$MP/.strata/branches/main") == "../commits/$c3" ]] || fail "branches/main is not at the new head at once"
expect_ok strata ls "$c3"
grep -qF '.strata' "$OUT" && fail "the commit holds .strata: $(cat "$OUT")"
expect_ok strata status "$MP"
grep -qF '.strata' "$OUT" && fail "status shows .strata: $(cat "$OUT")"

step "the workspaces of past versions are hidden, and removed at the unmount"
expect_ok strata workspace list --json
json_true '[w["name"] for w in d] == ["ws"]'
[[ $(ls "$STORE/workspaces" | wc -l) -gt 1 ]] || fail "no workspace served the past versions"
expect_ok strata umount "$MP"
[[ $(ls "$STORE/workspaces") == ws ]] || fail "past versions' workspaces left: $(ls "$STORE/workspaces")"

step "after kill -9 of the daemon, the next mount removes its past versions' workspaces"
expect_ok strata mount --workspace ws "$MP"
[[ $(cat "$MP/.strata/branches/main/dir/f.txt") == "three, not committed" ]] || fail "branches/main after a remount"
[[ $(ls "$STORE/workspaces" | wc -l) -gt 1 ]] || fail "no workspace served the past versions"
kill -9 "$(awk 'NR==1' "$STORE/workspaces/ws/mounted")"
expect_ok strata mount --workspace ws --no-past-versions "$MP"
[[ $(ls "$STORE/workspaces") == ws ]] || fail "a killed daemon's past versions' workspaces left: $(ls "$STORE/workspaces")"

step "--no-past-versions: no .strata"
[[ ! -e "$MP/.strata" ]] || fail ".strata is there with --no-past-versions"
[[ $(cat "$MP/dir/f.txt") == "three, not committed" ]] || fail "the workspace is not mounted"
expect_ok strata umount "$MP"

step "a read-only mount of a commit shows them too"
expect_ok strata mount --read-only "$c1" "$MP"
[[ $(cat "$MP/.strata/branches/main/dir/f.txt") == "three, not committed" ]] || fail "branches/main in a read-only mount"
expect_ok strata umount "$MP"

step "a workspace holding a real .strata keeps it, and shows no past versions there"
mkdir -p "$WORK/src/.strata"
printf 'mine\n' >"$WORK/src/.strata/own.txt"
expect_ok strata import "$WORK/src" --branch withdot -m "a tree with its own .strata"
expect_ok strata mount --branch withdot --name dotted "$MP"
[[ $(cat "$MP/.strata/own.txt") == mine ]] || fail "the real .strata is not shown"
[[ ! -e "$MP/.strata/commits" ]] || fail "past versions shown over a real .strata"
ls -a "$MP" >"$OUT"
grep -qx '.strata' "$OUT" || fail "the real .strata is not listed"
expect_ok strata umount "$MP"
