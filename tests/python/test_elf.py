"""spoor.Elf.symbolize / symbolize_many == the lines of `spoor sym --json [-r]` for every function
symbol of an example firmware (from arm-none-eabi-readelf, whose names the answers must also
carry), inside and outside functions, and an address nothing holds."""
import json

import pytest

import harness
import spoor
from support import cli, run


def test_symbolize_equals_sym_json():
    elf_path, _ = harness.example("crash", "m3")
    names = {}  # function symbols, from readelf (an independent reader of the symbol table)
    for line in run("arm-none-eabi-readelf", "-sW", elf_path).stdout.splitlines():
        f = line.split()
        if len(f) == 8 and f[3] == "FUNC" and f[6] != "UND":
            # DWARF names a clone by its source name: "f.isra.0" is f
            names.setdefault(int(f[1], 16) & ~1, set()).add(f[7].split(".")[0])
    assert len(names) > 10
    addrs = sorted(set(names) | {a + 2 for a in names} | {0xFFFFFFF0})
    want = [json.loads(line) for line in
            cli("sym", "--json", "-e", elf_path, *map(hex, addrs)).stdout.splitlines()]
    want_r = [json.loads(line) for line in
              cli("sym", "--json", "-r", "-e", elf_path, *map(hex, addrs)).stdout.splitlines()]
    with spoor.Elf(elf_path) as elf:
        got = elf.symbolize_many(addrs)
        assert got == want
        assert elf.symbolize_many(addrs, return_address=True) == want_r
        assert [elf.symbolize(a) for a in addrs[:50]] == want[:50]
    # the answers name the functions the symbol table names (the outermost function of an
    # inline chain)
    for a, answer in zip(addrs, got):
        if a in names:
            outer = answer["inlined"][-1]["function"] if answer["inlined"] else answer["function"]
            assert outer in names[a], hex(a)
    assert got[-1]["function"] is None  # 0xfffffff0: nothing there


def test_closed_elf_raises():
    elf = spoor.Elf(harness.example("crash", "m3")[0])
    elf.close()
    with pytest.raises(spoor.Error):
        elf.symbolize(0x100)
