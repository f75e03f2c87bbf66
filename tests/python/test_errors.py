"""Errors are spoor.Error carrying libspoor's message, the one the CLI prints for the same input."""
import pytest

import harness
import spoor
from support import cli


def test_missing_elf(tmp_path):
    missing = tmp_path / "no-such.elf"
    with pytest.raises(spoor.Error) as caught:
        spoor.Elf(missing)
    r = cli("sym", "-e", missing, "0x0", check=False)
    assert r.returncode != 0
    assert str(caught.value)
    assert str(caught.value) in r.stderr


def test_bad_dump_no_input_dead_gdb(crash_dump, tmp_path):
    elf_path, _ = harness.example("crash", "m3")
    data = crash_dump("busfault").read_bytes()
    bad = tmp_path / "truncated.bin"
    bad.write_bytes(data[:20])
    r = cli("crash", "--json", "-e", elf_path, bad, check=False)
    assert r.returncode != 0
    with pytest.raises(spoor.Error) as caught:
        spoor.crash(elf_path, dump=bad)
    assert str(caught.value) in r.stderr
    with pytest.raises(spoor.Error):
        spoor.crash(elf_path, dump=data[:20])
    with pytest.raises(spoor.Error):
        spoor.crash(elf_path)  # no input
    port = harness.free_port()  # nothing listens there
    r = cli("crash", "-e", elf_path, "--gdb", f"127.0.0.1:{port}", check=False)
    assert r.returncode != 0
    with pytest.raises(spoor.Error) as caught:
        spoor.crash(elf_path, gdb=f"127.0.0.1:{port}")
    assert str(caught.value) in r.stderr
    with pytest.raises(spoor.Error):
        spoor.triage([tmp_path / "no-such-folder"], elf_dir=tmp_path)
