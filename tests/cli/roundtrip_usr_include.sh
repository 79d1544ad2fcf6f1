#!/usr/bin/env bash
# A real tree (/usr/include: thousands of headers, symlinks, deep directories)
# survives import and export, and the store verifies clean afterwards.
source "$(dirname "$0")/lib.sh"

SRC=/usr/include
[[ -d $SRC ]] || fail "$SRC is missing"
nfiles=$(find "$SRC" -type f | wc -l)
(( nfiles > 500 )) || fail "$SRC holds only $nfiles files; too small to be a useful test"

step "init and import $SRC ($nfiles files)"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata import "$SRC" --branch main -m "usr include" --json
json_true 'len(d["commit"]) == 64 and all(c in "0123456789abcdef" for c in d["commit"])'
commit=$(json 'd["commit"]')
json_true "d['files'] >= $nfiles"
bytes=$(find "$SRC" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
json_true "d['bytes'] == $bytes"

step "export and compare"
expect_ok strata export main "$WORK/out"
assert_same_tree "$SRC" "$WORK/out"

step "log shows the commit"
expect_ok strata log --json
json_true "len(d) == 1 and d[0]['id'] == '$commit' and d[0]['parents'] == [] and d[0]['message'] == 'usr include'"

step "verify"
expect_ok strata verify
expect_ok strata verify --json
