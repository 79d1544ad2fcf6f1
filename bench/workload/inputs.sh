# shellcheck shell=bash
# Variables set here are read by bench/workload/run.sh, which sources this file:
# shellcheck disable=SC2034
# bench/workload/inputs.sh — what the workload suite reads, made once before any
# arm runs (not timed), all on the scratch disk except the Debian source, which
# is kept in bench/results/cache so that it is fetched once per checkout.
#
# Needs SCRATCH, OUT, TREE, QUICK, git_q (bench/workload/run.sh).

# The Debian source package built by the build phases, and how it is built:
# CMake's configure (many small test compiles) then make -j2 of the library and
# the command-line tool.
readonly WORKLOAD_SRC_PKG=lz4
readonly WORKLOAD_CACHE=${BENCH_WORKLOAD_CACHE:-${REPO_ROOT}/bench/results/cache}

# workload_tarball: TARBALL, a copy of TREE made a git repository (one commit of
# every file) and packed with its .git (the untar phase).
workload_tarball() {
  bench_log "making the tarball of ${TREE} as a git repository (not timed)"
  mkdir -p "${SCRATCH}/src"
  cp -a -- "${TREE}" "${SCRATCH}/src/tree"
  (
    cd "${SCRATCH}/src/tree"
    git_q init -q
    git_q add -A
    git_q commit -q -m "${TREE}"
  ) >"${OUT}/logs/tarball.log" 2>&1 || bench_die "could not make the git repository; see ${OUT}/logs/tarball.log"
  TARBALL=${SCRATCH}/tree.tar
  tar -cf "${TARBALL}" -C "${SCRATCH}/src" tree
  rm -rf -- "${SCRATCH}/src"
  read -r TREE_FILES TREE_BYTES < <(tar -tvf "${TARBALL}" | awk '$1 ~ /^-/ { n++; s += $3 } END { print n + 0, s + 0 }')
}

# workload_repo: REPO_URL, a local repository of TREE with two branches: main
# (every file) and other, where every 4th file is changed, every 8th (offset 3)
# removed and 300 files added in a new directory. Cloned over file:// (git's
# pack transport, as from a server: no hard links into the arm).
workload_repo() {
  bench_log "making the repository to clone: ${TREE} on two branches (not timed)"
  local repo=${SCRATCH}/repo
  mkdir -p "${repo}"
  cp -a -- "${TREE}/." "${repo}/"
  (
    set -euo pipefail
    cd "${repo}"
    git_q init -q -b main
    git_q add -A
    git_q commit -q -m main
    git_q checkout -q -b other
    local -a files
    mapfile -d '' files < <(git_q ls-files -z)
    for ((i = 0; i < ${#files[@]}; i++)); do
      if ((i % 4 == 3)); then echo "/* other */" >>"${files[i]}"; fi
      if ((i % 8 == 2)); then rm -f -- "${files[i]}"; fi
    done
    mkdir added
    for ((i = 0; i < 300; i++)); do printf 'file %d of the other branch\n' "${i}" >"added/f${i}.txt"; done
    git_q add -A
    git_q commit -q -m other
    git_q checkout -q main
    git_q gc -q --aggressive --prune=now
  ) >"${OUT}/logs/repo.log" 2>&1 || bench_die "could not make the repository; see ${OUT}/logs/repo.log"
  REPO_URL=file://${repo}
  REPO_CHANGED=$(git_q -C "${repo}" diff --name-only main other | wc -l)
}

# workload_debian_source: SRC_ORIG, the upstream tarball of WORKLOAD_SRC_PKG from
# `apt-get source --download-only`, with a sources list, package lists and cache
# of its own (the system's apt state is not read or changed). Fetched once into
# WORKLOAD_CACHE.
workload_debian_source() {
  local cache=${WORKLOAD_CACHE}/debian-source-${WORKLOAD_SRC_PKG}
  SRC_ORIG=
  if [[ -d "${cache}" ]]; then
    SRC_ORIG=$(find "${cache}" -maxdepth 1 -name "${WORKLOAD_SRC_PKG}_*.orig.tar.*" | sort | tail -n 1)
  fi
  if [[ -z "${SRC_ORIG}" ]]; then
    bench_log "fetching the Debian source of ${WORKLOAD_SRC_PKG} with apt-get source (once, into ${cache})"
    local apt=${SCRATCH}/apt codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    mkdir -p "${apt}/lists/partial" "${apt}/cache/archives/partial" "${cache}.part"
    printf 'deb-src http://deb.debian.org/debian %s main\n' "${codename}" >"${apt}/sources.list"
    local -a opts=(-o "Dir::Etc::SourceList=${apt}/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=${apt}/lists" -o "Dir::Cache=${apt}/cache" -o APT::Sandbox::User=root)
    {
      apt-get "${opts[@]}" update &&
        (cd "${cache}.part" && apt-get "${opts[@]}" source --download-only "${WORKLOAD_SRC_PKG}")
    } >"${OUT}/logs/apt-source.log" 2>&1 ||
      bench_die "apt-get source ${WORKLOAD_SRC_PKG} failed; see ${OUT}/logs/apt-source.log"
    rm -rf -- "${cache}" && mv -- "${cache}.part" "${cache}"
    SRC_ORIG=$(find "${cache}" -maxdepth 1 -name "${WORKLOAD_SRC_PKG}_*.orig.tar.*" | sort | tail -n 1)
    [[ -n "${SRC_ORIG}" ]] || bench_die "apt-get source gave no ${WORKLOAD_SRC_PKG}_*.orig.tar.*; see ${OUT}/logs/apt-source.log"
  fi
  SRC_TOPDIR=$(tar -tf "${SRC_ORIG}" | sed -n '1s,/.*,,p')  # reads it all: no SIGPIPE
  tar -tf "${SRC_ORIG}" | grep -x "${SRC_TOPDIR}/build/cmake/CMakeLists.txt" >/dev/null ||
    bench_die "${SRC_ORIG} has no build/cmake/CMakeLists.txt: not the ${WORKLOAD_SRC_PKG} the suite knows how to build"
}

# workload_archives: BZ_ARCHIVE (TREE as a tar.bz2 without .git, for tar xjf) and
# DD_SOURCE (DD_MIB MiB, half random and half base64 text, for dd).
workload_archives() {
  bench_log "making ${TREE}.tar.bz2 and ${DD_MIB} MiB of data for dd (not timed)"
  BZ_ARCHIVE=${SCRATCH}/source.tar.bz2
  tar -cjf "${BZ_ARCHIVE}" -C "$(dirname "${TREE}")" "$(basename "${TREE}")"
  DD_SOURCE=${SCRATCH}/dd-source
  bench_make_mixed_data "${DD_SOURCE}" "${DD_MIB}"
}
