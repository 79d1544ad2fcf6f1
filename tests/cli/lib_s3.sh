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
