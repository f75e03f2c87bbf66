"""No leak: the process's RSS stays put over 10,000 calls (symbolize, crash of a dump, ELF opens
that work and that fail), and so do the Python allocations still held (a reference kept by the
package: a cache that grows, a result, an ffi buffer or an exception held on to)."""
import gc
import sys
import tracemalloc

import pytest

import harness
import spoor
from support import rss_kib


@pytest.fixture
def calls(crash_dump, tmp_path):
    """calls(n): n symbolize calls on the crash example, a crash report of a QEMU dump every
    10th, an ELF opened and closed and one that fails to open every 100th; run once for 1,000
    calls here (tables built, allocator pools filled)."""
    elf_path, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault").read_bytes()
    elf = spoor.Elf(elf_path)

    def run(n):
        for i in range(n):
            elf.symbolize(0x100 + 2 * (i % 512))
            if i % 10 == 0:
                spoor.crash(elf, dump=dump)
            if i % 100 == 0:
                spoor.Elf(elf_path).close()
                try:
                    spoor.Elf(tmp_path / "no-such.elf")
                except spoor.Error:
                    pass

    run(1000)
    return run


def test_rss_steady(calls):
    before = rss_kib()
    calls(10000)
    grown = rss_kib() - before
    # one lost spoor_location array per call would be ~20 MiB, a lost report per crash call far
    # more
    print(f"RSS grew {grown} KiB over 10,000 calls", file=sys.stderr)
    assert grown < 4096, f"RSS grew {grown} KiB over 10,000 calls"


def test_python_memory_steady(calls):
    """Python-level allocations still held after 10,000 calls (tracemalloc; the C side is the
    RSS test's): one result dict kept per call would be about 2 MB."""
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        calls(10000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    print(f"Python allocations grew {grown} B over 10,000 calls", file=sys.stderr)
    assert grown < 64 * 1024, f"Python allocations grew {grown} B over 10,000 calls"
