"""spoor.report_html == the bytes of `spoor report -o` (the same build's CLI) on the same input: a
QEMU-made crash dump (a path; its bytes, where only the input's name differs), the scheduler's
snapshot with --threads (regs.json + memory image, as a path and as bytes) and QEMU halted at a
breakpoint through its gdbstub with --threads (the call the pytest plugin makes). The page
renders in headless Chromium with the network cut off and shows the fault; errors raise
spoor.Error with the CLI's message; no page is leaked. docs/python.md's example of spoor.report_html
runs."""
import json
import re

import harness
import pytest
import spoor
from support import SOURCE, cli, rendered_page


def page_of(tmp_path, *args):
    """The bytes of `spoor report ARGS -o PAGE`."""
    out = tmp_path / "cli.html"
    cli("report", *args, "-o", out)
    return out.read_bytes()


def parts(page):
    """(the page with its two JSON documents taken out, the crash report, the annex)."""
    docs = {}

    def take(m):
        docs[m.group(2)] = json.loads(m.group(3))
        return m.group(1) + m.group(2) + '">'

    shell = re.sub(r'(<script type="application/json" id=")(spoor-crash|spoor-annex)">'
                   r'(.*?)(?=</script>)', take, page, flags=re.S)
    return shell, docs["spoor-crash"], docs["spoor-annex"]


def test_dump_path_and_bytes(crash_dump, tmp_path):
    elf_path, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault")
    want = page_of(tmp_path, "-e", elf_path, dump)
    elf = spoor.Elf(elf_path)
    page = spoor.report_html(elf, dump=dump)
    assert isinstance(page, str)
    assert page.encode() == want
    assert spoor.report_html(elf_path, dump=str(dump)).encode() == want
    shell, report, annex = parts(page)
    assert report["fault"]["type"] == "BusFault"  # what the scenario does
    assert annex["input"] == str(dump) and annex["elf"] == str(elf_path)
    # bytes have no path: the crash report's input and dump and the annex's input name none, the
    # rest is the same
    shell_b, report_b, annex_b = parts(spoor.report_html(elf, dump=dump.read_bytes()))
    assert shell_b == shell
    assert annex_b == dict(annex, input="dump")
    assert {k: v for k, v in report_b.items() if k not in ("input", "dump")} == \
        {k: v for k, v in report.items() if k not in ("input", "dump")}


def test_snapshot_threads(tmp_path):
    from test_docs import gdb_snapshot
    elf_path, _ = harness.example("sched", "m3")
    snap = tmp_path / "sched-snap"
    gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], snap)
    image = snap / "0x20000000.bin"
    want = page_of(tmp_path, "--threads", "-e", elf_path, "--regs", snap / "regs.json", "--mem",
                   f"0x20000000:{image}")
    page = spoor.report_html(elf_path, regs=snap / "regs.json", mem={0x20000000: image},
                             threads=True)
    assert len(parts(page)[1]["threads"]) >= 4
    assert page.encode() == want
    assert spoor.report_html(elf_path, regs=snap / "regs.json",
                             mem={0x20000000: image.read_bytes()}, threads=True).encode() == want
    plain = page_of(tmp_path, "-e", elf_path, "--regs", snap / "regs.json", "--mem",
                    f"0x20000000:{image}")
    assert plain != want
    assert spoor.report_html(elf_path, regs=snap / "regs.json",
                             mem={0x20000000: image}).encode() == plain


def test_live_gdb_threads(tmp_path):
    """The scheduler halted at a breakpoint, read through QEMU's gdbstub, with its threads."""
    elf_path, machine = harness.example("sched", "m3")
    with harness.Qemu(elf_path, machine, gdb=True) as qemu:
        harness.run_gdb(elf_path, qemu.gdb_port, ["break sched_checkpoint", "continue",
                                                  "disconnect"])
        where = f"127.0.0.1:{qemu.gdb_port}"
        want = page_of(tmp_path, "-e", elf_path, "--gdb", where, "--threads")
        page = spoor.report_html(elf_path, gdb=where, threads=True)
    _, report, annex = parts(page)
    assert report["backtrace"][0]["function"] == "sched_checkpoint"  # where gdb stopped
    assert len(report["threads"]) >= 4 and annex["input"] == f"--gdb {where}"
    assert page.encode() == want


def test_renders_the_fault(crash_dump, tmp_path):
    elf_path, _ = harness.example("crash", "m3")
    page = tmp_path / "page.html"
    page.write_text(spoor.report_html(elf_path, dump=crash_dump("busfault")))
    report = parts(page.read_text())[1]
    title, rows = rendered_page(page)
    assert "BusFault" in title
    for bit in report["fault"]["bits"]:
        assert bit["name"] in title
    assert len(rows) == len(report["backtrace"])
    assert report["backtrace"][0]["function"] in rows[0]


def cli_error(tmp_path, *args):
    r = cli("report", *args, "-o", tmp_path / "x.html", check=False)
    assert r.returncode == 2 and r.stderr.startswith("spoor report: ")
    return r.stderr.strip().split("\n")[-1][len("spoor report: "):]


def test_errors(crash_dump, tmp_path):
    elf_path, _ = harness.example("crash", "m3")
    cut = tmp_path / "cut.bin"
    cut.write_bytes(crash_dump("busfault").read_bytes()[:100])
    for kwargs, args in [({"dump": cut}, [cut]),
                         ({"dump": tmp_path / "none.bin"}, [tmp_path / "none.bin"]),
                         ({"regs": tmp_path / "none.json"}, ["--regs", tmp_path / "none.json"])]:
        with pytest.raises(spoor.Error) as e:
            spoor.report_html(elf_path, **kwargs)
        assert str(e.value) == cli_error(tmp_path, "-e", elf_path, *args)
    with pytest.raises(spoor.Error):
        spoor.report_html(elf_path, dump=b"not a dump")
    with pytest.raises(spoor.Error):
        spoor.report_html(elf_path)  # no input
    with pytest.raises(spoor.Error):
        spoor.report_html(tmp_path / "none.elf", dump=cut)
    with pytest.raises(spoor.Error):
        spoor.report_html(elf_path, gdb="127.0.0.1:1")  # nothing listens


def test_docs_example(crash_dump, tmp_path, monkeypatch, capsys):
    """docs/python.md's ## spoor.report_html example, with ELF and DUMP given, in a folder of its
    own: it writes crash.html, spoor report's page of the dump, and prints the CLI's error of a
    GDB server that is not there."""
    text = (SOURCE / "docs" / "python.md").read_text()
    block = text.split("## spoor.report_html\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    elf_path, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault")
    code = block.replace('"ELF"', repr(str(elf_path))).replace('"DUMP"', repr(str(dump)))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/python.md", "exec"), {})
    assert (tmp_path / "crash.html").read_bytes() == page_of(tmp_path, "-e", elf_path, dump)
    printed = capsys.readouterr().out.strip()
    assert printed == cli_error(tmp_path, "-e", elf_path, "--gdb", "127.0.0.1:1", "--threads")


def test_no_leak(crash_dump):
    """The process's RSS stays put over 2,000 pages (a page lost each call: some 75 MiB)."""
    from support import rss_kib
    elf_path, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault").read_bytes()
    elf = spoor.Elf(elf_path)
    size = len(spoor.report_html(elf, dump=dump))
    for _ in range(500):  # warm: tables built, allocator pools filled
        spoor.report_html(elf, dump=dump)
    before = rss_kib()
    for _ in range(2000):
        spoor.report_html(elf, dump=dump)
    grown = rss_kib() - before
    assert grown < 2000 * size // 1024 // 20, f"RSS grew {grown} KiB over 2,000 pages of {size} B"
