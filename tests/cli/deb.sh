#!/usr/bin/env bash
# The Debian package CPack makes from the build: what it holds (binary, helper,
# man pages, completions, example unit, all under /usr), its dependencies (as
# dpkg-shlibdeps read them from the binary, plus those listed by hand), the binary unpacked from it runs;
# then `apt-get install ./strata_*.deb` for real, and strata used as installed
# (man, completion, `mount -t fuse.strata` through /sbin/mount.fuse.strata).
# The install happens in a private mount namespace over throwaway overlays of
# /usr, /etc and /var (upper layers on a tmpfs), so this system's packages are
# the same before and after.
# Needs STRATA_BUILD_DIR (the build directory; ctest sets it) and root.
source "$(dirname "$0")/lib.sh"
require_root
[[ -n "${STRATA_BUILD_DIR:-}" ]] || fail "STRATA_BUILD_DIR is not set"
command -v dpkg-shlibdeps >/dev/null || { echo "SKIP: dpkg-dev is not installed"; exit 77; }

step "cpack -G DEB"
expect_ok cpack -G DEB -B "$WORK/pkg" --config "$STRATA_BUILD_DIR/CPackConfig.cmake"
debs=("$WORK"/pkg/strata_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one strata_*.deb, got: ${debs[*]}"
deb=${debs[0]}

step "its contents"
expect_ok dpkg-deb -c "$deb"
for f in ./usr/bin/strata ./usr/sbin/mount.fuse.strata ./usr/share/man/man1/strata.1.gz \
         ./usr/share/man/man1/strata-mount.1.gz ./usr/share/man/man8/mount.fuse.strata.8.gz \
         ./usr/share/bash-completion/completions/strata ./usr/share/zsh/vendor-completions/_strata \
         ./usr/share/doc/strata/examples/srv-build.mount; do
  grep -qE " $f\$" "$OUT" || fail "the package lacks $f"
done
grep -qE ' \./usr/local/' "$OUT" && fail "the package installs under /usr/local"

step "its dependencies: read from the binary, and libcurl4 (loaded at run time) and fuse3 by hand"
expect_ok dpkg-deb -f "$deb" Package Version Architecture Depends
grep -q '^Package: strata$' "$OUT" || fail "package name"
for dep in libfuse3-3 libsqlite3-0 libzstd1 libxxhash0 libssl3 libcurl4 fuse3; do
  grep -q "^Depends:.*\b$dep\b" "$OUT" || fail "Depends lacks $dep: $(grep Depends "$OUT")"
done
expect_ok dpkg-deb -f "$deb" Recommends  # one field: its value alone
grep -qw bubblewrap "$OUT" || fail "Recommends lacks bubblewrap (strata exec needs it): $(cat "$OUT")"

step "unpacked, the binary runs and the helper names /usr/bin/strata"
expect_ok dpkg -x "$deb" "$WORK/root"
expect_ok "$WORK/root/usr/bin/strata" --version
expect_output_matches '^strata [0-9]'
grep -qF "strata='/usr/bin/strata'" "$WORK/root/usr/sbin/mount.fuse.strata" || fail "helper's strata path"
expect_ok "$WORK/root/usr/bin/strata" --store "$WORK/store" init
expect_ok "$WORK/root/usr/bin/strata" --store "$WORK/store" fsck

step "apt-get install ./strata_*.deb, then strata as installed (private namespace, throwaway /usr /etc /var)"
mkdir "$WORK/ov" "$WORK/mp"
cat > "$WORK/inner.sh" <<'INNER'
set -euo pipefail
work=$1 deb=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
mount -t tmpfs tmpfs "$work/ov"
for d in usr etc var; do
  mkdir -p "$work/ov/$d/up" "$work/ov/$d/work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/ov/$d/up,workdir=$work/ov/$d/work" "/$d"
done
trap 'mountpoint -q "$work/mp" && umount "$work/mp"' EXIT
cd "${deb%/*}"
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "./${deb##*/}" > "$work/apt.log" 2>&1 ||
  fail "apt-get install: $(tail -n 20 "$work/apt.log")"
[ "$(dpkg-query -W -f='${Status}' strata)" = "install ok installed" ] || fail "dpkg does not list strata as installed"
[ "$(command -v strata)" = /usr/bin/strata ] || fail "strata is not /usr/bin/strata"
[ "$(man -w strata)" = /usr/share/man/man1/strata.1.gz ] || fail "man -w strata: $(man -w strata)"
# The helper mount(8) finds in /sbin, with no help from the test.
store=$work/installed-store
strata --store "$store" init >/dev/null
mkdir -p "$work/src" && echo "from the package" > "$work/src/file"
strata --store "$store" import "$work/src" --branch main -m one >/dev/null
mount -t fuse.strata "$store:pkg" "$work/mp" -o branch=main
[ "$(cat "$work/mp/file")" = "from the package" ] || fail "the mount through the installed helper"
umount "$work/mp"
# The completion bash-completion would load for strata.
got=$(bash -c 'source /usr/share/bash-completion/completions/strata
  COMP_WORDS=(strata --store "$1" mount --workspace ""); COMP_CWORD=5; _strata; echo "${COMPREPLY[*]}"' _ "$store")
[ "$got" = pkg ] || fail "completion of the workspace name: '$got'"
echo "installed checks passed"
INNER
run unshare --mount --propagation private bash "$WORK/inner.sh" "$WORK" "$deb"
[[ $RC == 0 ]] || fail "installed checks: $(cat "$ERR") $(cat "$OUT")"
grep -q "installed checks passed" "$OUT" || fail "the installed checks did not finish"
# Outside the namespace the system is as it was.
dpkg-query -W -f='${Status}' strata 2>/dev/null | grep -q "install ok installed" &&
  fail "the package leaked out of the namespace"
grep -q "$WORK" /proc/mounts && fail "a mount leaked out of the namespace"
true
