"""spoor itm on captures larger than memory should need: the file source reads a regular file
through a bounded window, so the resident set stays small whatever the size, and stream offsets
past 4 GiB (2^32) come out right.

Both files are sparse (no disk): holes read as zero bytes.
- 3 GiB of zeros: zeros that never end in the 0x80 of a synchronization packet are not a
  packet (ARMv7-M ARM D4.2.1: a sync is at least 47 zero bits then a one), so the decoder
  must report every byte as lost in one error, and count all of them.
- a file with a reserved header (0xFF) at offset 0, zeros, then at a known position P past
  4 GiB the 0x80 ending a sync, a software packet (port 0, the byte 'A') and a local
  timestamp: the software packet's "offset" must be P + 1 and the timestamp's P + 3, numbers
  taken from how the file was written. A second software packet straddles a multiple of
  4 MiB (the window size), so a window boundary inside a packet is crossed too. Zeros end
  in 0x80 syncs before it and at the end of the file, so nothing else is lost.

The maximum resident set of each run is taken from the kernel (os.wait4's rusage) and must
stay under 128 MB; mapping or reading such a file whole takes gigabytes."""
import json
import os
import subprocess
import sys
import tempfile

SPOOR = os.environ["SPOOR_BIN"]
RSS_LIMIT_KB = 128 * 1024
GIB = 1 << 30
WINDOW = 4 << 20

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run_measured(args):
    """(exit status, stdout, stderr, max RSS in KB) of spoor itm ARGS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([SPOOR, "itm", *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read().decode(), err.read().decode(), usage.ru_maxrss


def test_zeros(tmp):
    path = os.path.join(tmp, "zeros.bin")
    with open(path, "wb") as f:
        f.truncate(3 * GIB)
    rc, out, err, rss = run_measured(["--stats", path])
    os.unlink(path)
    check(rc == 0, f"3 GiB of zeros: exit {rc} {err.strip()}")
    check(f"bytes       {3 * GIB}\n" in out, "3 GiB of zeros: every byte counted")
    check("packets     1\n" in out and f"errors      1 ({3 * GIB} bytes lost)" in out,
          "3 GiB of zeros: one error losing every byte")
    check(rss < RSS_LIMIT_KB, f"3 GiB of zeros: max RSS {rss} KB < {RSS_LIMIT_KB} KB")


def test_past_4gib(tmp):
    path = os.path.join(tmp, "past4g.bin")
    sync_end = 4 * GIB + 4096 + 5  # the 0x80 of the sync
    straddle = 4 * GIB + 2 * WINDOW - 1  # header in one window, payload in the next
    with open(path, "wb") as f:
        f.write(b"\xff")  # a reserved header: lost until the sync
        f.seek(sync_end)
        f.write(bytes([0x80, 0x01, 0x41, 0x10]))  # sync end, port 0 'A', LTS2 delta 1
        f.seek(straddle - 1)
        f.write(bytes([0x80, 0x01, 0x42, 0x10]))  # zeros then 0x80: a sync; port 0 'B', LTS2
        f.seek(straddle + 3 + 5)
        f.write(bytes([0x80]))  # five zeros after the timestamp and 0x80: a sync at the end
    size = os.path.getsize(path)
    rc, out, err, rss = run_measured(["--json", "--stats", path])
    os.unlink(path)
    check(rc == 0, f"past 4 GiB: exit {rc} {err.strip()}")
    lines = [json.loads(line) for line in out.splitlines()]
    sw = [o for o in lines if o["type"] == "sw"]
    ts = [o for o in lines if o["type"] == "ts_local"]
    check([(o["offset"], o["port"], o["value"]) for o in sw] ==
          [(sync_end + 1, 0, 0x41), (straddle, 0, 0x42)],
          f"past 4 GiB: software packets at their file offsets: {sw}")
    check([o["offset"] for o in ts] == [sync_end + 3, straddle + 2],
          f"past 4 GiB: timestamps at their file offsets: {ts}")
    errors = [o for o in lines if o["type"] == "error"]
    syncs = [o for o in lines if o["type"] == "sync"]
    check(len(errors) == 1 and errors[0]["offset"] == 0 and len(syncs) == 3 and
          errors[0]["bytes_lost"] == syncs[0]["offset"],
          f"past 4 GiB: the loss from offset 0 ends where the sync starts: {errors} {syncs}")
    stats = [o for o in lines if o["type"] == "stats"]
    check(len(stats) == 1 and stats[0]["bytes"] == size, f"past 4 GiB: {size} bytes counted")
    check(rss < RSS_LIMIT_KB, f"past 4 GiB: max RSS {rss} KB < {RSS_LIMIT_KB} KB")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_zeros, test_past_4gib):
            try:
                t(tmp)
            except Exception as e:  # one crash must not hide the other checks
                check(False, f"{t.__name__}: {e!r}")
    print(f"{len(failures) == 0 and 'all' or len(failures)} large-file checks "
          f"{'passed' if not failures else 'failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
