#!/usr/bin/env python3
"""A small S3 server of the tests' own, on 127.0.0.1, for faults a real one
will not produce on demand: listings that never end, answers that stall,
writes answered with an error. It keeps objects in memory, checks no
signature, and understands what strata sends: GET (with Range), HEAD, PUT
(with If-Match / If-None-Match: *), DELETE, multi-object delete (POST
?delete, Content-MD5 checked), ListObjectsV2, bucket HEAD/PUT.

    fake_s3.py PORT_FILE LOG_FILE CONTROL_FILE

It writes the port it listens on to PORT_FILE, one line per request
("METHOD KEY") to LOG_FILE, and reads CONTROL_FILE (JSON, may be absent) at
every request, so a test changes the faults while it runs:
  repeat_token: true       every listing page is truncated with the same token
  synthetic_packs: N       listings of .../packs/ add N keys of pack names
  synthetic_size: BYTES    their listed size (GETs on them answer garbage)
  put_status: {"REGEX": CODE}   PUTs of matching keys get CODE, nothing stored
  slow_put: {"REGEX": N}   the first N PUTs of matching keys read their body
                           at 256 KiB/s, then stop reading and never answer
  stall: true              every request waits, never answering
  backdate: {"REGEX": S}   listings show matching keys as written S seconds
                           before they were
  delete_fail: {"REGEX": CODE}  a multi-object delete keeps matching keys and
                           answers an <Error> with CODE for each
"""
import base64
import hashlib
import http.server
import json
import re
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

PORT_FILE, LOG_FILE, CONTROL_FILE = sys.argv[1:4]
objects = {}  # "bucket/key" -> bytes
written_at = {}  # "bucket/key" -> time.time() of its last PUT
lock = threading.Lock()
slow_put_counts = {}


def control():
    try:
        with open(CONTROL_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


synthetic_cache = {}


def synthetic_names(n):
    """N pack names (made once: listing them page by page asks again and again)."""
    with lock:
        if n not in synthetic_cache:
            synthetic_cache[n] = sorted(hashlib.sha256(str(i).encode()).hexdigest() + ".pack" for i in range(n))
        return synthetic_cache[n]


def etag_of(data):
    return hashlib.md5(data).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def split(self):
        url = urllib.parse.urlsplit(self.path)
        parts = urllib.parse.unquote(url.path).lstrip("/").split("/", 1)
        bucket = parts[0]
        key = parts[1] if len(parts) > 1 else ""
        return bucket, key, urllib.parse.parse_qs(url.query, keep_blank_values=True)

    def record(self, key):
        with lock, open(LOG_FILE, "a") as f:
            f.write(f"{self.command} {key}\n")

    def reply(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def stall_if_asked(self):
        if control().get("stall"):
            time.sleep(3600)

    def read_body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def do_HEAD(self):
        self.handle_read()

    def do_GET(self):
        self.handle_read()

    def handle_read(self):
        bucket, key, query = self.split()
        self.record(key if key else "?" + "&".join(f"{k}={v[0]}" for k, v in sorted(query.items())))
        self.stall_if_asked()
        if not key:
            if self.command == "HEAD":
                return self.reply(200)
            return self.list(bucket, query)
        synthetic = re.fullmatch(r".*packs/[0-9a-f]{64}\.pack", key) and (bucket + "/" + key) not in objects
        with lock:
            data = objects.get(bucket + "/" + key)
        if data is None and synthetic and control().get("synthetic_packs"):
            data = b"\0" * int(control().get("synthetic_size", 4096))
        if data is None:
            return self.reply(404, b"<Error><Code>NoSuchKey</Code></Error>")
        headers = {"ETag": '"' + etag_of(data) + '"'}
        rng = self.headers.get("Range")
        if rng and self.command == "GET":
            m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng)
            start, end = int(m.group(1)), int(m.group(2))
            if start >= len(data):
                return self.reply(416)
            return self.reply(206, data[start:end + 1], headers)
        if self.command == "HEAD":
            self.send_response(200)
            self.send_header("ETag", headers["ETag"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return
        return self.reply(200, data, headers)

    def list(self, bucket, query):
        prefix = query.get("prefix", [""])[0]
        max_keys = int(query.get("max-keys", ["1000"])[0])
        token = query.get("continuation-token", [""])[0]
        ctl = control()
        with lock:
            keys = sorted((k.split("/", 1)[1], len(v), etag_of(v)) for k, v in objects.items()
                          if k.startswith(bucket + "/") and k.split("/", 1)[1].startswith(prefix))
            when = {key: written_at.get(bucket + "/" + key, time.time()) for key, _, _ in keys}
        if ctl.get("synthetic_packs") and prefix.endswith("packs/"):
            # Only the synthetic names (the bucket's own packs are left out),
            # and only the page asked for is built.
            size = int(ctl.get("synthetic_size", 4096))
            names = synthetic_names(int(ctl["synthetic_packs"]))
            start = int(token) if token else 0
            keys = [(prefix + name, size, "0" * 32) for name in names[start:start + max_keys]]
            keys = [None] * start + keys + [None] * max(0, len(names) - start - max_keys)
        if ctl.get("repeat_token"):
            page, truncated, next_token = keys[:max_keys], True, "again"
        else:
            start = int(token) if token else 0
            page = keys[start:start + max_keys]
            truncated = start + max_keys < len(keys)
            next_token = str(start + max_keys)
        xml = ["<?xml version=\"1.0\"?><ListBucketResult>"]
        xml.append(f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>")
        if truncated:
            xml.append(f"<NextContinuationToken>{next_token}</NextContinuationToken>")
        for key, size, etag in page:
            t = when.get(key, time.time())
            for pattern, seconds in ctl.get("backdate", {}).items():
                if re.search(pattern, key):
                    t -= float(seconds)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))
            xml.append(f"<Contents><Key>{escape(key)}</Key><LastModified>{stamp}</LastModified>"
                       f"<Size>{size}</Size><ETag>\"{etag}\"</ETag></Contents>")
        xml.append("</ListBucketResult>")
        return self.reply(200, "".join(xml).encode())

    def do_PUT(self):
        bucket, key, _ = self.split()
        self.record(key)
        self.stall_if_asked()
        ctl = control()
        if not key:
            self.read_body()
            return self.reply(200)
        for pattern, n in ctl.get("slow_put", {}).items():
            if re.search(pattern, key):
                with lock:
                    done = slow_put_counts.get(pattern, 0)
                    slow_put_counts[pattern] = done + 1
                if done < n:
                    left = int(self.headers.get("Content-Length", "0"))
                    while left > 0:  # a slow link that moves, then stops
                        got = self.rfile.read(min(left, 32768))
                        if not got:
                            return
                        left -= len(got)
                        if left < int(self.headers.get("Content-Length", "0")) // 2:
                            time.sleep(3600)
                        time.sleep(0.125)
                    return
        body = self.read_body()
        for pattern, status in ctl.get("put_status", {}).items():
            if re.search(pattern, key):
                return self.reply(int(status), b"<Error><Code>Injected</Code></Error>")
        full = bucket + "/" + key
        with lock:
            current = objects.get(full)
            if self.headers.get("If-None-Match") == "*" and current is not None:
                return self.reply(412, b"<Error><Code>PreconditionFailed</Code></Error>")
            match = self.headers.get("If-Match")
            if match is not None and (current is None or match.strip('"') != etag_of(current)):
                return self.reply(412, b"<Error><Code>PreconditionFailed</Code></Error>")
            objects[full] = body
            written_at[full] = time.time()
        return self.reply(200, b"", {"ETag": '"' + etag_of(body) + '"'})

    def do_DELETE(self):
        bucket, key, _ = self.split()
        self.record(key)
        self.stall_if_asked()
        with lock:
            objects.pop(bucket + "/" + key, None)
        return self.reply(204)

    def do_POST(self):
        bucket, key, query = self.split()
        self.record("?delete" if "delete" in query else key)
        self.stall_if_asked()
        body = self.read_body()
        if key or "delete" not in query:
            return self.reply(400, b"<Error><Code>InvalidRequest</Code></Error>")
        if self.headers.get("Content-MD5") != base64.b64encode(hashlib.md5(body).digest()).decode():
            return self.reply(400, b"<Error><Code>InvalidDigest</Code></Error>")
        try:
            asked = [k.text or "" for k in ET.fromstring(body).iter("Key")]
        except ET.ParseError:
            return self.reply(400, b"<Error><Code>MalformedXML</Code></Error>")
        failing = control().get("delete_fail", {})
        out = ["<?xml version=\"1.0\"?><DeleteResult>"]
        for k in asked:
            code = next((c for p, c in failing.items() if re.search(p, k)), None)
            if code is not None:
                out.append(f"<Error><Key>{escape(k)}</Key><Code>{code}</Code><Message>injected</Message></Error>")
                continue
            with lock:
                objects.pop(bucket + "/" + k, None)
            out.append(f"<Deleted><Key>{escape(k)}</Key></Deleted>")
        out.append("</DeleteResult>")
        return self.reply(200, "".join(out).encode())


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402  (only for the rename that publishes the port)
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
