"""spoor.itm.decode / Decoder with tpiu == `spoor itm --tpiu[=ID] [--align=N] [--wait-sync]
--json` of the same build, on the shared TPIU capture (Arm's CMSIS ctrace Blinky, two cores on
trace IDs 1 and 2, no full sync) and on a TPIU stream framed here, fed whole and in 7-byte
chunks.

The framing is this test's own, written from the formatter protocol (CoreSight Components TRM,
ARM DDI 0314H, 9.6.1 "Formatter data processing", and the CoreSight Architecture Specification's
"Trace Formatter" chapter it refers to): 16-byte frames; an even byte (0, 2, ..., 14) is either
a trace source ID change (bit 0 set, the ID in bits 7:1) or a data byte whose bit 0 travels in
the frame's last byte (bit k for byte 2k); odd bytes are data; for an ID change, aux bit k
clear means the byte after it belongs to the new ID, set that it still belongs to the previous
one. Full syncs FF FF FF 7F and half syncs FF 7F go between frames; ID 0 is padding. That it
does not lean on libspoor's reading of the protocol: a deframer written here from the same text
reads Arm's real capture into the byte streams whose ITM packets are libspoor's, and reads this
test's frames back into the streams they were made from; libspoor's deframer then gives the
packets of those streams decoded plain."""
import json
import os
import random
from pathlib import Path

import pytest

import spoor
from spoor import itm
from support import SOURCE, cli, rss_kib
from test_top_tpiu import frame

FULL_SYNC = b"\xff\xff\xff\x7f"
HALF_SYNC = b"\xff\x7f"
SHARED = Path(os.environ.get("SPOOR_SHARED_DIR", SOURCE.parent / "shared"))
ITM_DIR = SHARED / "testdata" / "itm"
TB = ITM_DIR / "cmsis-ctrace-blinky" / "Blinky+Arm.TB.raw"  # TPIU, IDs 1 and 2
SWO = ITM_DIR / "cmsis-ctrace-blinky" / "Blinky+Arm.SWO.raw"  # plain ITM
RUST = ITM_DIR / "rust-itm" / "itm.bin"  # plain ITM


# ---------------------------------------------------------------- the formatter, as specified
# frame(slots): one frame from 15 slots, each ("id", ID, late) or ("data", BYTE), as
# tests/e2e/test_top_tpiu.py's formatter writes it from the same protocol

def tpiu_stream(runs, seed=36):
    """runs: [(ID, bytes)] in stream order, each non-empty: the TPIU stream that carries them.
    An ID change falls on an even byte; where the next byte is odd, the last data byte moves
    after the change, which is marked late (that byte still belongs to the previous ID).
    Frames are separated now and then by a full sync or a half sync; a full sync starts it."""
    slots, current = [], None

    def change(new):
        if len(slots) % 15 % 2 == 0:
            slots.append(("id", new, False))
        else:
            last = slots.pop()
            assert last[0] == "data"
            slots.extend([("id", new, True), last])

    for ident, data in runs:
        assert data
        if ident != current:
            change(ident)
            current = ident
        slots += [("data", b) for b in data]
    change(0)  # the rest is padding
    slots += [("data", 0)] * (-len(slots) % 15)
    rng = random.Random(seed)
    out = bytearray(FULL_SYNC)
    for at in range(0, len(slots), 15):
        out += frame(slots[at:at + 15])
        out += rng.choice([b"", b"", b"", FULL_SYNC, HALF_SYNC])
    return bytes(out)


def deframe(data, start=0):
    """The byte stream of each trace source ID (0 dropped), read as the protocol says, the
    frames starting at offset start; syncs between frames skipped."""
    streams, cur, at = {}, None, start
    while at + 16 <= len(data):
        if data[at:at + 4] == FULL_SYNC:
            at += 4
            continue
        if data[at:at + 2] == HALF_SYNC:
            at += 2
            continue
        f, pending = data[at:at + 16], None
        for pos in range(15):
            byte = f[pos]
            if pos % 2 == 0 and byte & 1:  # an ID change
                if (f[15] >> (pos // 2) & 1) and pos < 14:
                    pending = byte >> 1  # the next byte is still the old ID's
                else:
                    cur = byte >> 1
                continue
            if pos % 2 == 0:
                byte |= f[15] >> (pos // 2) & 1
            if cur:
                streams.setdefault(cur, bytearray()).append(byte)
            if pending is not None:
                cur, pending = pending, None
        at += 16
    return {k: bytes(v) for k, v in streams.items()}


def interleave(sources, seed=7):
    """runs of 1..20 bytes of each (ID, bytes) source in a random order."""
    rng, runs, left = random.Random(seed), [], {i: d for i, d in sources}
    while left:
        ident = rng.choice(sorted(left))
        n = rng.randint(1, 20)
        runs.append((ident, left[ident][:n]))
        left[ident] = left[ident][n:]
        if not left[ident]:
            del left[ident]
    return runs


def without_stream(packets):
    return [{k: v for k, v in p.items() if k != "stream"} for p in packets]


# ---------------------------------------------------------------- the comparisons

def cli_lines(*args):
    return [json.loads(line) for line in cli("itm", "--json", *args).stdout.splitlines()]


def chunked(data, size=7, **options):
    decoder, got = itm.Decoder(**options), []
    for at in range(0, len(data), size):
        got += decoder.feed(data[at:at + size])
    return got + decoder.finish()


@pytest.fixture(scope="module")
def framed(tmp_path_factory):
    """SWO.raw as trace ID 1, the rust capture and SWO.raw's first 3000 bytes as ID 2, framed."""
    other = RUST.read_bytes() + SWO.read_bytes()[:3000]
    sources = [(1, SWO.read_bytes()), (2, other)]
    path = tmp_path_factory.mktemp("tpiu") / "framed.tpiu"
    path.write_bytes(tpiu_stream(interleave(sources)))
    return path, dict(sources)


def test_the_framing_follows_the_protocol(framed):
    """This test's deframer reads Arm's capture into streams whose packets are libspoor's, and
    this test's frames back into the streams they were made from."""
    theirs = deframe(TB.read_bytes())
    want = cli_lines("--tpiu", TB)
    assert set(theirs) == {1, 2} and want
    for ident, data in theirs.items():
        assert list(itm.decode(data)) == without_stream(
            [p for p in want if p["stream"] == ident]), ident
    path, sources = framed
    assert deframe(path.read_bytes()) == sources


def test_decode_tpiu_equals_itm_tpiu_json(framed):
    path, sources = framed
    for capture in (TB, path):
        data = capture.read_bytes()
        for flags, options in [(["--tpiu"], {"tpiu": True}), (["--tpiu=2"], {"tpiu": 2}),
                               (["--tpiu", "--wait-sync"], {"tpiu": True, "wait_sync": True}),
                               (["--tpiu", "--align=0"], {"tpiu": True, "align": 0}),
                               (["--tpiu", "--align=10"], {"tpiu": True, "align": 10})]:
            want = cli_lines(*flags, capture)
            assert want, (capture, flags)
            assert list(itm.decode(capture, **options)) == want, (capture, flags)
            assert list(itm.decode(data, **options)) == want, (capture, flags)
            with open(capture, "rb") as f:
                assert list(itm.decode(f, **options)) == want, (capture, flags)
            assert chunked(data, **options) == want, (capture, flags)
    # the framed streams, deframed by libspoor, are the streams decoded plain
    got = list(itm.decode(path, tpiu=True))
    for ident, data in sources.items():
        assert without_stream([p for p in got if p["stream"] == ident]) == list(
            itm.decode(data)), ident
    assert {p["stream"] for p in got} == {1, 2}


def test_tpiu_stats_equal_the_cli(framed):
    for capture in (TB, framed[0]):
        want = [x for x in cli_lines("--tpiu", "--stats", capture) if x["type"] == "tpiu"]
        decoder = itm.Decoder(tpiu=True)
        decoder.feed(capture.read_bytes())
        decoder.finish()
        assert [decoder.tpiu_stats()] == want, capture
    assert itm.Decoder().tpiu_stats() is None


def test_bad_tpiu_options_raise():
    for options in ({"tpiu": 0}, {"tpiu": 112}, {"tpiu": "1"}, {"tpiu": True, "align": 16},
                    {"tpiu": True, "align": -1}, {"align": 3}):
        with pytest.raises(spoor.Error):
            itm.Decoder(**options)
        with pytest.raises(spoor.Error):
            list(itm.decode(b"\x00", **options))


def test_no_leak_over_many_feeds(framed):
    data = framed[0].read_bytes()[:4096]

    def rounds(n):
        for _ in range(n):
            decoder = itm.Decoder(tpiu=True)
            for at in range(0, len(data), 512):
                decoder.feed(data[at:at + 512])
            decoder.finish()

    rounds(50)
    before = rss_kib()
    rounds(1000)  # 9,000 feeds; a lost pump (its decoders, ~100 KB) a round would be 100 MB
    grown = rss_kib() - before
    assert grown < 4096, f"RSS grew {grown} KiB over 1,000 decoders"


def test_python_md_tpiu_example(tmp_path):
    text = (SOURCE / "docs" / "python.md").read_text()
    block = text.split("\n### TPIU-formatted ITM captures\n", 1)[1]
    code = block.split("```python\n", 1)[1].split("```", 1)[0]
    scope = {}
    exec(compile(code, "docs/python.md", "exec"), scope)
    (tmp_path / "hi.tpiu").write_bytes(scope["capture"])
    assert list(itm.decode(scope["capture"], tpiu=True)) == cli_lines("--tpiu",
                                                                       tmp_path / "hi.tpiu")
