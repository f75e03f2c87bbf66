"""spoor top -p TPIU: the ITM stream inside the TPIU formatter's frames (CoreSight
Architecture Specification, "Trace Formatter": 16-byte frames; an even byte is a new trace
source ID (bit 0 set, ID in bits 7:1; aux bit clear: the ID applies from the next byte) or data
whose bit 0 is carried in the frame's last byte (aux bit k for byte 2k); odd bytes are data;
full syncs FF FF FF 7F between frames). The frames are made here, by this test's own formatter,
from the stream test_top_rtos_shapes.py encodes, with a second source (ID 2, bytes that would
not decode as this ITM stream) sharing each frame.

Checked: the JSON lines and the console tables are byte for byte those of the same stream
unframed; nothing on stderr. With the ITM on trace ID 2 and the other source on ID 1,
--tpiu=2 gives the same JSON, and --tpiu alone (ID 1, as -p TPIU) no switch. A frame cut short by a full sync (a broken frame: its bytes are
dropped, as the specification's synchronisation says) is reported on stderr with the number
of bytes dropped, and the switch whose packet it held is missing (the ITM decoder cannot
know: the bytes on either side happen to decode as packets)."""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import symbol_addresses  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402
from test_top_rtos_shapes import build_with_data, stream  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
FULL_SYNC = b"\xff\xff\xff\x7f"
ITM_ID, OTHER_ID, NULL_ID = 1, 2, 0
OTHER = bytes([0xA5, 0x03, 0xFF, 0x47, 0x99, 0x5A])


def frame(slots):
    """One formatter frame from 15 slots, each ("id", ID, late) or ("data", BYTE): an ID goes in
    an even byte with bit 0 set, its aux bit set when late (the byte after it still belongs to
    the previous ID); an even data byte's bit 0 goes to its aux bit."""
    assert len(slots) == 15
    out, aux = bytearray(16), 0
    for pos, slot in enumerate(slots):
        if slot[0] == "id":
            assert pos % 2 == 0
            out[pos] = slot[1] << 1 | 1
            aux |= int(slot[2]) << (pos // 2)
        elif pos % 2 == 0:
            out[pos] = slot[1] & 0xFE
            aux |= (slot[1] & 1) << (pos // 2)
        else:
            out[pos] = slot[1]
    out[15] = aux
    return bytes(out)


def frames(data, itm_id=ITM_ID, other_id=OTHER_ID):
    """data as trace source itm_id (1), 7 bytes a frame, the other 6 data bytes of each frame
    from source other_id (2: bytes that do not decode as this ITM stream). The last frame ends
    the ITM's data with a change to ID 0 (padding): right after the data when that is an even
    byte, else one byte early with its aux bit set (the byte after the ID still belongs to the
    ITM's)."""
    out = []
    for i in range(0, len(data), 7):
        chunk = [("data", b) for b in data[i:i + 7]]
        if len(chunk) == 7:
            slots = [("id", itm_id, False), *chunk, ("id", other_id, False),
                     *[("data", b) for b in OTHER]]
        elif len(chunk) % 2:  # the next byte is even: the change goes there
            slots = [("id", itm_id, False), *chunk, ("id", NULL_ID, False)]
        else:
            slots = [("id", itm_id, False), *chunk[:-1], ("id", NULL_ID, True), chunk[-1]]
        out.append(frame(slots + [("data", 0)] * (15 - len(slots))))
    return out


def tpiu(data, cut_at=None, **ids):
    """A full sync, then the frames of data (ids: frames()'s); cut_at: that frame is cut short
    after 8 bytes by a full sync (the receiver drops them)."""
    out = bytearray(FULL_SYNC)
    for n, f in enumerate(frames(data, **ids)):
        out += f[:8] + FULL_SYNC if n == cut_at else f
    return bytes(out)


def top(elf, data, itm, *extra):
    return subprocess.run([SPOOR, "top", "-e", str(elf), "--mem", f"0x20000000:{data}",
                           "--input", str(itm), "-F", "1000000", "-I", "1", "-E", *extra],
                          capture_output=True, text=True, timeout=60)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        elf, data = build_with_data("RTX5", work)
        symbols = symbol_addresses(elf)
        names = ["main_thread", "sensor", "idle", "main_thread", "sensor", "idle", "sensor"]
        plain = stream([symbols[n] for n in names])
        (work / "plain.itm").write_bytes(plain)
        (work / "framed.itm").write_bytes(tpiu(plain))

        want = top(elf, data, work / "plain.itm", "-j", str(work / "plain.jsonl"))
        got = top(elf, data, work / "framed.itm", "-p", "TPIU", "-j", str(work / "framed.jsonl"))
        check(want.returncode == 0 and got.returncode == 0,
              f"exit {want.returncode} {got.returncode}: {got.stderr}")
        plain_json = (work / "plain.jsonl").read_text()
        check(len(plain_json.splitlines()) == len(names) + 2,  # intervals, the last, summary
              f"unframed: {len(plain_json.splitlines())} JSON lines")
        check((work / "framed.jsonl").read_text() == plain_json, "-p TPIU JSON != unframed")
        console_plain = top(elf, data, work / "plain.itm").stdout
        console_framed = top(elf, data, work / "framed.itm", "-p", "TPIU")
        check(console_framed.stdout == console_plain and "osRtxIdleThread" in console_plain
              and console_framed.stderr == "",
              f"-p TPIU console differs or warns: {console_framed.stderr}")

        # the ITM on trace ID 2, the other source on ID 1: --tpiu=2 takes the ITM's; --tpiu
        # alone (as -p TPIU) is ID 1, the other source's bytes, in which no switch decodes
        (work / "id2.itm").write_bytes(tpiu(plain, itm_id=2, other_id=1))
        id2 = top(elf, data, work / "id2.itm", "--tpiu=2", "-j", str(work / "id2.jsonl"))
        check(id2.returncode == 0 and id2.stderr == ""
              and (work / "id2.jsonl").read_text() == plain_json,
              f"--tpiu=2: exit {id2.returncode}, stderr {id2.stderr!r}, or JSON != unframed")
        id1 = top(elf, data, work / "id2.itm", "-t", "-j", str(work / "id1.jsonl"))
        lines = (work / "id1.jsonl").read_text().splitlines() if id1.returncode == 0 else []
        threads = json.loads(lines[-1])["threads"] if lines else None
        check(threads is not None and not any(t["switches"] for t in threads),
              f"-t on ID 1 (not the ITM's): exit {id1.returncode} {id1.stderr!r}, {threads}")
        for bad in ("--tpiu=0", "--tpiu=112", "--tpiu=x"):
            r = top(elf, data, work / "id2.itm", bad)
            check(r.returncode == 2 and r.stderr == f"spoor top: {bad}: an ID is 1..111\n",
                  f"{bad}: exit {r.returncode}, stderr {r.stderr!r}")

        # frame 3 cut after 8 bytes by a full sync: its 8 bytes are dropped (7 of the ITM's)
        (work / "cut.itm").write_bytes(tpiu(plain, cut_at=3))
        cut = top(elf, data, work / "cut.itm", "-p", "tpiu", "-j", str(work / "cut.jsonl"))
        m = re.fullmatch(r"spoor top: warning: TPIU: (\d+) bytes outside whole frames .*\n",
                         cut.stderr)
        check(cut.returncode == 0 and m and m.group(1) == "8",
              f"a broken frame: exit {cut.returncode}, stderr {cut.stderr!r}")
        # the frame held stream bytes 21..27: the data packet of the third switch (to idle)
        switches = {t["name"]: t["switches"] for t in
                    json.loads((work / "cut.jsonl").read_text().splitlines()[-1])["threads"]}
        check(switches == {"main": 2, "sensor_task": 3, "osRtxIdleThread": 1},
              f"the switch in the cut frame should be missing: {switches}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
