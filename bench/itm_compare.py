#!/usr/bin/env python3
"""Compares two `spoor` binaries' `spoor itm` output byte for byte (stdout, stderr, exit
status) on the streams bench/gen_itm_stream.c makes (every mix), the RTX5 SWO capture, the
ITM test inputs under ../shared/testdata/itm, and seeded streams built to hit the decoder's
edges: pure random bytes, generated streams with bytes overwritten at random places, streams
of every packet kind (extension, GTS2, short GTS1 forms, overflow, local timestamps of every
size, exception and sleep packets with payloads the protocol refuses, reserved headers), zero
runs of 1-12 bytes (sync traps, zeros that are no sync), and each cut short at a random byte.
Each stream is decoded in every output mode, from the file (mapped in windows) and from a
pipe (read in chunks of whatever size the pipe delivers). Exit status 1 on any difference.

usage: bench/itm_compare.py OLD_SPOOR NEW_SPOOR [--mb MB] [--seeds N] [--quick] [--keep DIR]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared", "testdata", "itm")
CAPTURE = os.path.join(SHARED, "cmsis-ctrace-blinky", "Blinky+Arm.SWO.raw")

MODES = [
    ["--stats"],
    ["--stats", "--json"],
    ["--json"],
    [],
    ["-c", "0,%c"],
    ["-c", "0,%c", "-c", "5,%x\\n"],
    ["--stats", "-c", "0,%c"],
    ["--stats", "--wait-sync"],
]


def packet(rng):
    """One packet of any kind, valid or not, as bytes."""
    k = rng.randrange(100)
    if k < 30:  # software, any port and size
        s = rng.choice((1, 2, 3))
        n = {1: 1, 2: 2, 3: 4}[s]
        return bytes([(rng.randrange(32) << 3) | s]) + rng.randbytes(n)
    if k < 40:  # local timestamp format 1, 1-4 payload bytes, sometimes all with C set
        m = rng.choice((1, 2, 3, 4, 4, 5))
        b = [0x80 | rng.randrange(128) for _ in range(m - 1)]
        last = rng.randrange(128) | (0x80 if m == 5 else 0)
        return bytes([0xC0 | rng.randrange(4) << 4] + b[:4] + ([last] if m < 5 else []))
    if k < 47:  # local timestamp format 2 (and 0x70, an overflow)
        return bytes([rng.randrange(1, 8) << 4])
    if k < 52:  # GTS1 of 1-4 payload bytes
        m = rng.randrange(1, 5)
        return bytes([0x94] + [0x80 | rng.randrange(128) for _ in range(m - 1)] +
                     [rng.randrange(128)])
    if k < 55:  # GTS2, 4 or 6 payload bytes (or another count)
        m = rng.choice((4, 6, 4, 6, 2, 5))
        return bytes([0xB4] + [0x80 | rng.randrange(128) for _ in range(m - 1)] +
                     [rng.randrange(128)])
    if k < 60:  # extension: page (SH = 0) or hardware (SH = 1), 0-4 payload bytes
        m = rng.randrange(0, 5)
        h = 0x08 | rng.randrange(8) << 4 | rng.randrange(2) << 2
        if m == 0:
            return bytes([h])
        return bytes([h | 0x80] + [0x80 | rng.randrange(128) for _ in range(m - 1)] +
                     [rng.randrange(128) if m < 5 else rng.randrange(256)])
    if k < 66:  # exception trace, FN 0 sometimes (refused)
        return bytes([0x0E, rng.randrange(256), rng.randrange(4) << 4 | rng.randrange(2)])
    if k < 72:  # PC sample, asleep with a non-zero payload sometimes (refused)
        if rng.randrange(2):
            return bytes([0x15, rng.choice((0, 0, 0, rng.randrange(256)))])
        return bytes([0x17]) + rng.randbytes(4)
    if k < 75:  # event counter
        return bytes([0x05, rng.randrange(64)])
    if k < 88:  # data trace PC, address, match, value
        n = rng.randrange(4) << 4
        c = rng.randrange(4)
        if c == 0:
            return bytes([0x47 | n]) + rng.randbytes(4)
        if c == 1:
            return bytes([0x4E | n]) + rng.randbytes(2)
        if c == 2:
            return bytes([0x45 | n, rng.randrange(256)])
        s = rng.choice((1, 2, 3))
        return bytes([0x84 | n | rng.randrange(2) << 3 | s]) + rng.randbytes({1: 1, 2: 2, 3: 4}[s])
    if k < 93:  # a sync, sometimes short (no sync) or long
        return bytes(rng.choice((5, 5, 6, 7, 3, 4, 12, 100))) + b"\x80"
    if k < 95:  # zeros alone (a trap when they follow a payload)
        return bytes(rng.randrange(1, 12))
    if k < 97:  # overflow
        return b"\x70"
    # any byte as a header (reserved ones among them)
    return bytes([rng.randrange(256)]) + rng.randbytes(rng.randrange(5))


def edge_stream(rng, size):
    """Packets of every kind; runs of one kind (so the fast loops see long stretches)."""
    out = bytearray()
    while len(out) < size:
        if rng.randrange(4) == 0:  # a run of valid, common packets
            for _ in range(rng.randrange(1, 400)):
                k = rng.randrange(10)
                if k < 5:
                    out += bytes([0x01, 0x41 + rng.randrange(26)])
                elif k < 7:
                    out += bytes([0xC0, rng.randrange(128)])
                elif k < 8:
                    out += bytes([0x47]) + rng.randbytes(4) + bytes([0x8F]) + rng.randbytes(4)
                elif k < 9:
                    out += bytes([0x0E, rng.randrange(256), 0x10 | rng.randrange(2)])
                else:
                    out += bytes([rng.randrange(1, 7) << 4])
        else:
            out += packet(rng)
    return bytes(out[:size])


def corrupt(rng, data, count):
    b = bytearray(data)
    for _ in range(count):
        at = rng.randrange(len(b))
        n = rng.randrange(1, 9)
        b[at:at + n] = rng.randbytes(n) if rng.randrange(3) else bytes(n)
    return bytes(b)


def run(binary, mode, path, pipe):
    args = [binary, "itm"] + mode + (["-"] if pipe else [path])
    if pipe:
        with open(path, "rb") as f:
            r = subprocess.run(args, stdin=f, capture_output=True)
    else:
        r = subprocess.run(args, capture_output=True)
    return r.returncode, r.stdout, r.stderr.replace(path.encode(), b"FILE")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--mb", type=int, default=4, help="MB of each gen_itm_stream mix")
    ap.add_argument("--seeds", type=int, default=12, help="seeded streams of each kind")
    ap.add_argument("--quick", action="store_true", help="--stats modes only")
    ap.add_argument("--keep", metavar="DIR", help="write the streams to DIR and keep them")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="itm-compare.")
    os.makedirs(tmp, exist_ok=True)
    gen = os.path.join(tmp, "gen")
    subprocess.run(["cc", "-O2", "-o", gen, os.path.join(ROOT, "bench", "gen_itm_stream.c")],
                   check=True)
    streams = []  # (name, path, big): big streams skip the slow listing modes

    def add(name, data, big=False):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        streams.append((name, path, big))

    mixes = {}
    for mix in ("bursts", "random", "zeros", "printf"):
        mixes[mix] = subprocess.run([gen, str(a.mb * 1000 * 1000), mix], check=True,
                                    capture_output=True).stdout
        add(mix, mixes[mix], big=True)
    if os.path.exists(CAPTURE):
        cap = open(CAPTURE, "rb").read()
        add("capture-raw", cap)
        clean = cap[2708:8190]
        add("capture", clean * (a.mb * 1000 * 1000 // len(clean) + 1), big=True)
    for dirpath, _, files in os.walk(SHARED):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if os.path.getsize(p) <= 64 << 20 and not f.endswith((".md", ".txt", ".json")):
                add("testdata-" + os.path.relpath(p, SHARED).replace("/", "_"),
                    open(p, "rb").read(), big=os.path.getsize(p) > 1 << 20)
    for seed in range(a.seeds):
        rng = random.Random(seed)
        add(f"bytes-{seed}", rng.randbytes(rng.randrange(1, 300000)))
        e = edge_stream(rng, rng.randrange(1, 400000))
        add(f"edge-{seed}", e)
        add(f"edge-cut-{seed}", e[:rng.randrange(len(e) + 1)])
        for mix in ("random", "bursts"):
            start = rng.randrange(len(mixes[mix]) // 2)
            piece = mixes[mix][start:start + rng.randrange(1000, 600000)]
            add(f"{mix}-corrupt-{seed}", corrupt(rng, piece, rng.randrange(1, 40)))
            add(f"{mix}-cut-{seed}", piece[:rng.randrange(len(piece) + 1)])
    modes = MODES[:2] + MODES[-1:] if a.quick else MODES
    bad = 0
    runs = 0
    for name, path, big in streams:
        for mode in modes:
            if big and mode in ([], ["--json"]):
                continue  # a listing of millions of packets: the seeded streams cover it
            for pipe in (False, True):
                runs += 1
                o = run(a.old, mode, path, pipe)
                n = run(a.new, mode, path, pipe)
                if o != n:
                    bad += 1
                    print(f"DIFF {name} {' '.join(mode)} {'pipe' if pipe else 'file'}: "
                          f"exit {o[0]} / {n[0]}, stdout {len(o[1])} / {len(n[1])} bytes, "
                          f"same stdout {o[1] == n[1]}, same stderr {o[2] == n[2]}")
    print(f"{runs - bad} same, {bad} different ({len(streams)} streams, {len(modes)} modes, "
          "file and pipe)")
    if not a.keep:
        subprocess.run(["rm", "-rf", tmp])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
