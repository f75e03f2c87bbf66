"""spoor.itm.decode (a path, bytes, a file; Decoder fed 7-byte chunks) == `spoor itm --json
[--wait-sync]` on the shared captures, a stream of every packet type made by hand (fields
checked against how it was encoded), 64 KiB of random bytes and docs/itm.md's hello stream
(whose port values are known)."""
import json
import os
import random

import pytest

from spoor import itm
from support import SOURCE, cli

# one packet of every type (ARMv7-M ARM D4, ARMv8-M ARM D3)
PACKETS = bytes.fromhex(
    "000000000080"  # sync
    "70"  # overflow
    "c005" "30"  # local timestamps, formats 1 and 2
    "9481808000" "b481808000"  # global timestamps 1 and 2
    "18" "0141" "08"  # page 1, a software packet, page 0
    "0521"  # event counter: CPI and Cyc wrapped
    "0e1010"  # exception 16 entered
    "1700010020" "1500"  # PC samples: a PC, asleep
    "4701020304" "4e3412" "8555" "8d66" "4577")  # DWT PC, address, data r/w, match
HELLO = b"\x01H\x01i\x10\x01!\x01\n\x0b\x2a\x00\x00\x00"  # docs/itm.md: 'H', 'i', '!', '\n'; 42


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    shared = __import__("pathlib").Path(os.environ.get("SPOOR_SHARED_DIR",
                                                       SOURCE.parent / "shared"))
    folder = tmp_path_factory.mktemp("itm")
    made = {"packets.itm": PACKETS, "noise.itm": random.Random(36).randbytes(1 << 16),
            "hello.itm": HELLO}
    for name, data in made.items():
        (folder / name).write_bytes(data)
    itm_dir = shared / "testdata" / "itm"
    return [itm_dir / "cmsis-ctrace-blinky" / "Blinky+Arm.SWO.raw",
            itm_dir / "rust-itm" / "itm.bin", *(folder / name for name in made)]


def cli_lines(*args):
    return [json.loads(line) for line in cli("itm", "--json", *args).stdout.splitlines()]


def test_decode_equals_itm_json(captures):
    types = set()
    for path in captures:
        want = cli_lines(path)
        assert want, path
        assert list(itm.decode(path)) == want, path
        assert list(itm.decode(path.read_bytes())) == want, path
        with open(path, "rb") as f:
            assert list(itm.decode(f)) == want, path
        decoder, got, data = itm.Decoder(), [], path.read_bytes()
        for at in range(0, len(data), 7):  # a live source's small chunks
            got += decoder.feed(data[at:at + 7])
        assert got + decoder.finish() == want, path
        assert list(itm.decode(path, wait_sync=True)) == cli_lines("--wait-sync", path), path
        types |= {p["type"] for p in want}
    assert len(types) == 15, types  # every type but the list end


def test_decoded_fields_are_what_was_encoded():
    made = list(itm.decode(PACKETS))
    assert [p["type"] for p in made][:18] == [
        "sync", "overflow", "ts_local", "ts_local", "ts_global1", "ts_global2", "ext", "sw",
        "ext", "event_counter", "exception", "pc_sample", "pc_sample", "dwt_pc", "dwt_addr",
        "dwt_data", "dwt_data", "dwt_match"]
    assert (made[7]["port"], made[7]["value"]) == (32, 0x41)
    assert (made[9]["cpi"], made[9]["cyc"], made[9]["exc"]) == (1, 1, 0)
    assert (made[10]["number"], made[10]["action"]) == (16, "enter")
    assert (made[11]["pc"], made[12]["pc"]) == (0x20000100, None)
    assert (made[13]["pc"], made[14]["addr_offset"]) == (0x04030201, 0x1234)
    assert [(p["write"], p["value"]) for p in made[15:17]] == [(False, 0x55), (True, 0x66)]
    hello = list(itm.decode(HELLO))
    assert [(p["port"], p["value"]) for p in hello if p["type"] == "sw"] == [
        (0, ord("H")), (0, ord("i")), (0, ord("!")), (0, ord("\n")), (1, 42)]
