#!/usr/bin/env bash
# The Debian package CPack makes from the build: what it holds (binary, helper,
# man pages, completions, example unit, all under /usr), its dependencies as
# dpkg-shlibdeps read them from the binary, the binary unpacked from it runs,
# and apt accepts it for installation on this system (`apt-get install -s
# ./strata_*.deb`, a simulation: the test changes no installed package).
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

step "its dependencies, read from the binary"
expect_ok dpkg-deb -f "$deb" Package Version Architecture Depends
grep -q '^Package: strata$' "$OUT" || fail "package name"
for dep in libfuse3-3 libsqlite3-0 libzstd1 libssl3 libcurl4 fuse3; do
  grep -q "^Depends:.*\b$dep\b" "$OUT" || fail "Depends lacks $dep: $(grep Depends "$OUT")"
done

step "unpacked, the binary runs and the helper names /usr/bin/strata"
expect_ok dpkg -x "$deb" "$WORK/root"
expect_ok "$WORK/root/usr/bin/strata" --version
expect_output_matches '^strata [0-9]'
grep -qF "strata='/usr/bin/strata'" "$WORK/root/usr/sbin/mount.fuse.strata" || fail "helper's strata path"
expect_ok "$WORK/root/usr/bin/strata" --store "$WORK/store" init
expect_ok "$WORK/root/usr/bin/strata" --store "$WORK/store" fsck

step "apt accepts it (simulated install; nothing changes here)"
cd "$WORK/pkg"
expect_ok apt-get install -s --no-install-recommends "./${deb##*/}"
expect_output_matches '^Inst strata '
