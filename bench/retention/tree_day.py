#!/usr/bin/env python3
"""Turns DIR/tree into day DAY of a changing tree, deterministically from SEED.

Day 1 creates FILES files of 4-48 KiB of random bytes in directories of 50,
and a 256 KiB dump.bin. Each later day, from the tree of the day before:
2% of the files are rewritten, 0.5% added, 0.3% deleted, and dump.bin is
written anew (a file that changes every day, like a database dump). The same
SEED, DAY and FILES always give the same bytes, so two tools given the same
sequence of days see the same trees.

Usage: tree_day.py DIR DAY SEED FILES
"""
import os
import random
import sys


def write(path, rng, size):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(rng.randbytes(size))


def name(index):
    return os.path.join(f"p{index // 50:04d}", f"f{index:06d}.bin")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    root, day, seed, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed * 1_000_003 + day)
    size = lambda: rng.randint(4, 48) * 1024
    # The tree is DIR/tree (what is backed up); the next new file's number beside it.
    state = os.path.join(root, ".next-index")
    if day == 1:
        os.makedirs(os.path.join(root, "tree"), exist_ok=True)
        for i in range(files):
            write(os.path.join(root, "tree", name(i)), rng, size())
        next_index = files
    else:
        with open(state) as f:
            next_index = int(f.read())
        present = sorted(
            os.path.join(d, n) for d in os.listdir(os.path.join(root, "tree")) if d.startswith("p")
            for n in os.listdir(os.path.join(root, "tree", d)))
        for rel in rng.sample(present, max(1, len(present) // 50)):
            write(os.path.join(root, "tree", rel), rng, size())
        for rel in rng.sample(present, max(1, len(present) * 3 // 1000)):
            os.remove(os.path.join(root, "tree", rel))
        for _ in range(max(1, files // 200)):
            write(os.path.join(root, "tree", name(next_index)), rng, size())
            next_index += 1
    write(os.path.join(root, "tree", "dump.bin"), rng, 256 * 1024)
    with open(state, "w") as f:
        f.write(str(next_index))


if __name__ == "__main__":
    main()
