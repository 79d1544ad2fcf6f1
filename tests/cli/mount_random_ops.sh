#!/usr/bin/env bash
# The same random sequence of file system operations applied to a workspace
# mount and to a plain directory must leave the same tree: names, types, modes,
# sizes, contents, link counts, symlink targets and xattrs (times differ by
# nature and are left out), and every operation must fail or succeed alike.
source "$(dirname "$0")/lib.sh"
use_mountpoint

mkdir -p "$WORK/plain"
expect_ok "$STRATA_BIN" init "$STORE"
expect_ok strata mount --new --name random "$MP"
expect_transport "$MP"

python3 - "$MP" "$WORK/plain" <<'PY' || fail "the random sequence failed (see above)"
import errno, os, random, stat, sys

roots = sys.argv[1:3]
rng = random.Random(20261130)
names = [f"n{i}" for i in range(6)]

def rand_path():
    depth = rng.choice([1, 1, 1, 2, 2, 3])
    return "/".join(rng.choice(names) for _ in range(depth))

def apply(root, op, args):
    p = lambda rel: os.path.join(root, rel)
    try:
        if op == "write":
            rel, off, data = args
            fd = os.open(p(rel), os.O_CREAT | os.O_WRONLY, 0o644)
            try: os.pwrite(fd, data, off)
            finally: os.close(fd)
        elif op == "append":
            rel, data = args
            with open(p(rel), "ab") as f: f.write(data)
        elif op == "truncate": os.truncate(p(args[0]), args[1])
        elif op == "mkdir": os.mkdir(p(args[0]), 0o755)
        elif op == "rmdir": os.rmdir(p(args[0]))
        elif op == "unlink": os.unlink(p(args[0]))
        elif op == "rename": os.rename(p(args[0]), p(args[1]))
        elif op == "link": os.link(p(args[0]), p(args[1]))
        elif op == "symlink": os.symlink(args[0], p(args[1]))
        elif op == "chmod": os.chmod(p(args[0]), args[1], follow_symlinks=False) if not os.path.islink(p(args[0])) else None
        elif op == "setxattr": os.setxattr(p(args[0]), "user.k", args[1], follow_symlinks=False)
        elif op == "removexattr": os.removexattr(p(args[0]), "user.k", follow_symlinks=False)
        return 0
    except OSError as e:
        return e.errno

def snapshot(root):
    out = {}
    ino_names = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            entry = [stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode)]
            if stat.S_ISREG(st.st_mode):
                entry += [st.st_size, st.st_nlink, open(full, "rb").read()]
                ino_names.setdefault(st.st_ino, []).append(rel)
            elif stat.S_ISLNK(st.st_mode):
                entry.append(os.readlink(full))
            if not stat.S_ISLNK(st.st_mode):
                try: entry.append(sorted((k, os.getxattr(full, k)) for k in os.listxattr(full) if k.startswith("user.")))
                except OSError as e: entry.append(("xattr-error", e.errno))
            out[rel] = entry
    # which names share an inode, independent of inode numbers
    groups = sorted(sorted(v) for v in ino_names.values() if len(v) > 1)
    return out, groups

ops = []
succeeded = 0
for _ in range(1000):
    op = rng.choice(["write", "write", "append", "truncate", "mkdir", "mkdir", "rmdir", "unlink", "rename",
                     "rename", "link", "symlink", "chmod", "setxattr", "removexattr"])
    if op == "write": args = (rand_path(), rng.randrange(0, 300000), os.urandom(rng.randrange(1, 70000)))
    elif op == "append": args = (rand_path(), os.urandom(rng.randrange(1, 5000)))
    elif op == "truncate": args = (rand_path(), rng.randrange(0, 400000))
    elif op in ("rename", "link"): args = (rand_path(), rand_path())
    elif op == "symlink": args = (rand_path(), rand_path())
    elif op == "chmod": args = (rand_path(), rng.choice([0o600, 0o644, 0o755, 0o700]))
    elif op == "setxattr": args = (rand_path(), os.urandom(rng.randrange(0, 100)))
    else: args = (rand_path(),)
    results = [apply(r, op, args) for r in roots]
    if results[0] != results[1]:
        print(f"operation {op} {args[:2] if op != 'write' else args[:2]} gave errno {results[0]} on the mount, {results[1]} on disk", file=sys.stderr)
        sys.exit(1)
    ops.append(op)
    succeeded += results[0] == 0

a, b = snapshot(roots[0]), snapshot(roots[1])
if a != b:
    for k in sorted(set(a[0]) | set(b[0])):
        if a[0].get(k) != b[0].get(k):
            print(f"differs: {k}: mount {str(a[0].get(k))[:120]} / disk {str(b[0].get(k))[:120]}", file=sys.stderr)
    if a[1] != b[1]: print(f"hard-link groups differ: {a[1]} / {b[1]}", file=sys.stderr)
    sys.exit(1)
if succeeded < 200 or len(a[0]) < 10:
    print(f"only {succeeded} operations succeeded and {len(a[0])} paths remain: the sequence tests too little", file=sys.stderr)
    sys.exit(1)
print(f"{len(ops)} operations ({succeeded} succeeded), {len(a[0])} paths, identical")
PY

step "the same tree after a remount"
expect_ok strata umount "$MP"
expect_ok strata mount --workspace random "$MP"
diff -r --no-dereference "$WORK/plain" "$MP" || fail "the tree changed across a remount"
expect_ok strata umount "$MP"
