# Helpers for the tests against a real S3 server (the ceph fixture), sourced
# after lib.sh and the fixture's env file (endpoint and keys): requests made
# behind strata's back, to see or change what a store relies on.
# s3 METHOD PATH [CURL ARGS]: a signed request to the server (to see or delete
# what a store relies on); prints the body.
s3() {
  local method=$1 path=$2
  shift 2
  curl -sS --fail-with-body --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -X "$method" "$@" "$STRATA_S3_ENDPOINT/$path"
}
# s3_keys BUCKET PREFIX: the keys under PREFIX (up to 1000), one a line.
s3_keys() {
  s3 GET "$1?list-type=2&prefix=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$2")" |
    python3 -c 'import re, sys; [print(k) for k in re.findall(r"<Key>([^<]*)</Key>", sys.stdin.read())]'
}

# For the tests of a remote "origin" at s3://$BUCKET/team whose branches are
# checked against $WORK/trees/BRANCH (remote_gc.sh, remote_repack.sh):
# keys PREFIX: the bucket's keys under team/PREFIX, one a line, sorted.
keys() { s3_keys "$BUCKET" "team/$1" | sort; }
count_keys() { keys "$1" | grep -c . || true; }
# wait_for_key PREFIX PID: until a key under PREFIX appears that was not there
# when the script last called mark_keys PREFIX (fails if PID ends first).
mark_keys() { keys "$1" >"$WORK/marked-keys"; }
wait_for_key() {
  local i
  for i in $(seq 600); do
    [[ -n $(comm -13 "$WORK/marked-keys" <(keys "$1")) ]] && return 0
    kill -0 "$2" 2>/dev/null || fail "process $2 ended before a new key under $1 appeared"
    sleep 0.05
  done
  fail "no new key under $1 appeared"
}
# check_remote BRANCH...: fsck of the remote is clean, and each BRANCH
# exports from the remote equal to $WORK/trees/BRANCH.
check_remote() {
  local b
  expect_ok strata --remote origin fsck --json
  json_true 'd["ok"] and d["missing"] == [] and d["damaged"] == []'
  for b in "$@"; do
    rm -rf "$WORK/out"
    expect_ok strata --remote origin export "$b" "$WORK/out"
    assert_same_content "$WORK/trees/$b" "$WORK/out"
  done
}
