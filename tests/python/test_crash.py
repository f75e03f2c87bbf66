"""spoor.crash == `spoor crash --json` of a QEMU-made crash dump (a path and bytes), of the
scheduler's snapshot with and without --threads (regs.json + memory image, docs/crash.md's gdb
recipe), and of QEMU halted at a breakpoint through its gdbstub (--gdb)."""
import json
import tempfile
from pathlib import Path

import harness
import spoor
from support import cli


def without_input(report):
    return {k: v for k, v in report.items() if k not in ("input", "dump")}


def test_crash_dump_path_and_bytes(crash_dump):
    elf_path, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault")
    want = json.loads(cli("crash", "--json", "-e", elf_path, dump).stdout)
    assert want["fault"]["type"] == "BusFault"  # what the scenario does
    elf = spoor.Elf(elf_path)
    assert spoor.crash(elf, dump=dump) == want
    assert spoor.crash(elf_path, dump=str(dump)) == want
    from_bytes = spoor.crash(elf, dump=dump.read_bytes())
    # the input's name is the one difference: bytes have no path
    assert without_input(from_bytes) == without_input(want)


def test_crash_snapshot_threads(tmp_path):
    from test_docs import gdb_snapshot
    elf_path, _ = harness.example("sched", "m3")
    snap = tmp_path / "sched-snap"
    gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], snap)
    image = snap / "0x20000000.bin"
    want = json.loads(cli("crash", "--json", "--threads", "-e", elf_path, "--regs",
                          snap / "regs.json", "--mem", f"0x20000000:{image}").stdout)
    assert len(want["threads"]) >= 4
    got = spoor.crash(elf_path, regs=snap / "regs.json", mem={0x20000000: image}, threads=True)
    assert got == want
    assert spoor.crash(elf_path, regs=snap / "regs.json", mem={0x20000000: image.read_bytes()},
                       threads=True) == want
    assert list(Path(tempfile.gettempdir()).glob("spoor-mem-*")) == []  # removed
    plain = json.loads(cli("crash", "--json", "-e", elf_path, "--regs", snap / "regs.json",
                           "--mem", f"0x20000000:{image}").stdout)
    assert spoor.crash(elf_path, regs=snap / "regs.json", mem={0x20000000: image}) == plain


def test_crash_live_gdb():
    """A live target halted at a breakpoint, read through QEMU's gdbstub."""
    elf_path, machine = harness.example("calls", "m3")
    with harness.Qemu(elf_path, machine, gdb=True) as qemu:
        harness.run_gdb(elf_path, qemu.gdb_port, ["break level_three", "continue", "disconnect"])
        where = f"127.0.0.1:{qemu.gdb_port}"
        want = json.loads(cli("crash", "--json", "-e", elf_path, "--gdb", where).stdout)
        got = spoor.crash(elf_path, gdb=where)
    assert got["backtrace"][0]["function"] == "level_three"  # where gdb stopped
    assert got == want
