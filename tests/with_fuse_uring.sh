#!/usr/bin/env bash
# Runs a command (its exit status is this script's) with the kernel's FUSE
# over io_uring switched on (/sys/module/fuse/parameters/enable_uring), and
# puts the switch back as it was afterwards, whether the command passes,
# fails or is stopped. The command gets SECONDS to finish: past that it is
# ended here, so that the switch is restored before ctest's own timeout could
# kill this script. Skips (77) where the kernel has no such switch or it cannot
# be set (not root).
# Usage: with_fuse_uring.sh SECONDS COMMAND [ARGS...]
set -uo pipefail
(( $# >= 2 )) || { echo "usage: $0 SECONDS COMMAND [ARGS...]" >&2; exit 2; }
seconds=$1
shift
switch=/sys/module/fuse/parameters/enable_uring
[[ -f $switch ]] || { echo "SKIP: this kernel has no FUSE over io_uring ($switch)"; exit 77; }
before=$(cat "$switch")
restore() { echo "$before" > "$switch"; }
trap restore EXIT
trap 'exit 143' TERM INT HUP
echo Y 2>/dev/null > "$switch" || { echo "SKIP: cannot switch FUSE over io_uring on (needs root)"; exit 77; }
timeout --kill-after=10 "$seconds" "$@"
