#!/usr/bin/env bash
# Installs what strata needs to build, test and benchmark, from Debian 12
# packages only. Idempotent: does nothing when everything is present.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config
  # libraries
  libsqlite3-dev libzstd-dev libxxhash-dev libssl-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libfuse3-dev libcurl4-openssl-dev
  # FUSE over io_uring on strata's own transport
  liburing-dev
  # the fuzz targets (libFuzzer comes with clang)
  clang
  # used by the tests (xattrs, POSIX ACLs, fifos, sockets, devices)
  attr acl fuse3 python3 stress-ng git curl
  # the metrics test checks the Prometheus text format with promtool
  prometheus
  # VM images written with cache=none (qemu-io) in the mount tests
  qemu-utils
  # strata exec runs programs in bubblewrap sandboxes
  bubblewrap
  # past versions under .strata/ are read over SMB in their test
  samba smbclient
  # installation: the Debian package (dpkg-shlibdeps), man pages, zsh completion,
  # the example systemd unit (systemd-analyze verify)
  dpkg-dev man-db zsh systemd
  # the remote store's tests run against a real single-node Ceph cluster (S3 through radosgw)
  ceph-mon ceph-osd radosgw
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
