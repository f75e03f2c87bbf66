"""spoor.top.Session / spoor.top.run == `spoor top --json FILE` of the same build on the same
inputs: FreeRTOS-, RTX5-, Zephyr- and ThreadX-shaped firmware with its .data as target memory
(tests/e2e/test_top_rtos_shapes.py's builds and streams), the example scheduler in QEMU (its RAM
dumped by gdb at sched_checkpoint, a stream of a known schedule with exception trace, written by
tests/e2e/test_top_sched.py's ITM encoder; memory from the RAM image and, live, from QEMU's
gdbstub), TPIU-framed streams (tests/e2e/test_top_tpiu.py's formatter), -n, --prescaler,
--comparator, --stack, no target memory, no RTOS. Each stream is fed whole, in 7-byte chunks and
as a path, bytes or file; the intervals a chunk completes come out of that feed. Errors are
spoor.Error with the CLI's message; no leak over many feeds and sessions."""
import json
import re
import time

import pytest

import harness
import spoor
from spoor import top
from support import SOURCE, cli, rss_kib
from test_top_rtos_shapes import SHAPES, build, build_with_data, stream
from test_top_sched import TASKS, gdb_reference, schedule, stop_parked
from test_top_tpiu import tpiu

RAM = 0x20000000


def cli_top(work, *args):
    """The JSON lines of `spoor top ... -j FILE`, as dicts."""
    out = work / "cli.jsonl"
    out.unlink(missing_ok=True)
    cli("top", *args, "-j", out)
    return [json.loads(line) for line in out.read_text().splitlines()]


def cli_error(*args):
    """The one-line error of a `spoor top` run that must fail (exit 2; its last line on stderr,
    after any warning), without its prefix."""
    r = cli("top", *args, check=False)
    last = r.stderr.rstrip("\n").split("\n")[-1]
    assert r.returncode == 2 and last.startswith("spoor top: "), (r.returncode, r.stderr)
    return last[len("spoor top: "):]


def fed(session, data, size=7):
    """Feeds data in chunks of size; (the intervals each feed returned, all with finish())."""
    per_feed = [session.feed(data[at:at + size]) for at in range(0, len(data), size)]
    return per_feed, [i for got in per_feed for i in got] + session.finish()


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    """{RTOS: (elf, .data image, stream)}: each RTOS's threads switched to twice, in turn."""
    work = tmp_path_factory.mktemp("shapes")
    made = {}
    for shape, (_, threads) in SHAPES.items():
        elf, data = build_with_data(shape, work)
        symbols = harness.symbol_addresses(elf)
        itm = work / f"{shape}.itm"
        itm.write_bytes(stream([symbols[n] for n in list(threads) * 2]))
        made[shape] = (elf, data, itm)
    return made


@pytest.fixture(scope="module")
def sched(tmp_path_factory):
    """The example scheduler parked in QEMU at sched_checkpoint: (elf, RAM image, stream, the
    gdbstub's port)."""
    work = tmp_path_factory.mktemp("sched")
    elf, machine = harness.example("sched", "m3")
    symbols = harness.symbol_addresses(elf)
    data, _ = schedule({n: symbols[f"task_{n}"] for n in TASKS})
    itm = work / "stream.itm"
    itm.write_bytes(data)
    qemu, ref = gdb_reference(elf, machine, work)
    try:
        assert sorted(r[0] for r in ref.values()) == sorted(TASKS), ref
        yield elf, work / "ram.bin", itm, qemu.gdb_port
    finally:
        qemu.close()


# (spoor top flags, Session keywords)
OPTIONS = [
    ([], {}),
    (["-E", "-I", "1"], {"exceptions": True, "interval": 1}),
    (["-E", "-I", "1", "--stack"], {"exceptions": True, "interval": 1, "stack": True}),
    (["-I", "2", "--prescaler", "4"], {"interval": 2, "prescaler": 4}),
    (["--comparator", "2", "-I", "1"], {"comparator": 2, "interval": 1}),
    (["-n", "2", "-I", "1", "-E"], {"intervals": 2, "interval": 1, "exceptions": True}),
]


def check_same(work, elf, itm, memory, flags, options, hz):
    """Session and run() == spoor top --json, every way the stream can be given."""
    want = cli_top(work, "-e", elf, "--input", itm, "-F", hz, *memory[0], *flags)
    assert want, flags
    data = itm.read_bytes()
    opts = dict(options, cpu_freq=int(hz), **memory[1])
    assert top.run(elf, itm, **opts) == want, flags
    assert top.run(str(elf), data, **opts) == want, flags
    with open(itm, "rb") as f:
        assert top.run(elf, f, **opts) == want, flags
    with spoor.Elf(elf) as opened, top.Session(opened, **opts) as session:
        per_feed, got = fed(session, data)
        assert got == want, flags
        if options.get("interval") == 1 and "intervals" not in options:
            # the intervals come out of the feeds that complete them, not all at the end
            assert sum(map(len, per_feed)) >= 2, flags
    if "intervals" in options:  # stopped: the rest of the stream is ignored, no summary
        with top.Session(elf, **opts) as session:
            assert session.feed(data) == want and session.feed(data) == []
            assert session.finish() == []
    return want


def test_rtos_shapes_equal_top_json(shapes, tmp_path):
    for shape, (elf, data, itm) in shapes.items():
        memory = (["--mem", f"0x{RAM:08x}:{data}"], {"mem": {RAM: data}})
        wants = [check_same(tmp_path, elf, itm, memory, flags, options, "1000000")
                 for flags, options in OPTIONS]
        # names from target memory (the summary's threads: every one); the image as bytes too
        names = {t["name"] for t in wants[0][-1]["threads"]}
        assert names >= {v[0] for v in SHAPES[shape][1].values() if v[0] != "?"}, names
        assert top.run(elf, itm, cpu_freq=1000000, mem={RAM: data.read_bytes()}) == cli_top(
            tmp_path, "-e", elf, "--input", itm, "-F", "1000000", *memory[0])
        # no target memory: threads are TCB addresses
        check_same(tmp_path, elf, itm, ([], {}), ["-I", "1"], {"interval": 1}, "1000000")


def test_sched_offline_and_live_equal_top_json(sched, tmp_path):
    elf, ram, itm, port = sched
    offline = (["--mem", f"0x{RAM:08x}:{ram}"], {"mem": {RAM: ram}})
    want = [check_same(tmp_path, elf, itm, offline, flags, options, "25000000")
            for flags, options in OPTIONS][0]
    exceptions = check_same(tmp_path, elf, itm, offline, ["-E", "-I", "1"],
                            {"exceptions": True, "interval": 1}, "25000000")
    # the schedule's numbers (test_top_sched.py checks them against the schedule itself)
    assert exceptions[0]["exceptions"][0]["num"] == 15 and exceptions[0]["cpu_usage"] == 80.0
    assert {t["name"] for t in want[0]["threads"]} == set(TASKS)
    # the same TCBs read from the parked target through QEMU's gdbstub
    stop_parked(port)
    live = (["--gdb", f"127.0.0.1:{port}"], {"gdb": f"127.0.0.1:{port}"})
    got = check_same(tmp_path, elf, itm, live, ["-E", "-I", "1"],
                     {"exceptions": True, "interval": 1}, "25000000")
    assert got == exceptions


def test_tpiu_streams_equal_top_json(shapes, tmp_path):
    elf, data, itm = shapes["RTX5"]
    memory = (["--mem", f"0x{RAM:08x}:{data}"], {"mem": {RAM: data}})
    plain = cli_top(tmp_path, "-e", elf, "--input", itm, "-F", "1000000", "-I", "1", *memory[0])
    framed, id2 = tmp_path / "framed.tpiu", tmp_path / "id2.tpiu"
    framed.write_bytes(tpiu(itm.read_bytes()))
    id2.write_bytes(tpiu(itm.read_bytes(), itm_id=2, other_id=1))
    for path, flags, options in [(framed, ["-p", "TPIU"], {"tpiu": True}),
                                 (framed, ["--tpiu=1"], {"tpiu": 1}),
                                 (id2, ["--tpiu=2"], {"tpiu": 2})]:
        want = check_same(tmp_path, elf, path, memory, flags + ["-I", "1"],
                          dict(options, interval=1), "1000000")
        assert want == plain, flags
    # ID 1 of id2.tpiu is the other source's: no switch
    got = top.run(elf, id2, cpu_freq=1000000, tpiu=True, interval=1, mem={RAM: data})
    assert got == cli_top(tmp_path, "-e", elf, "--input", id2, "-F", "1000000", "-I", "1", "-t",
                          *memory[0])
    assert not any(t["switches"] for t in got[-1]["threads"])


def test_no_rtos(tmp_path):
    """An ELF without any RTOS: threads are TCB addresses, a warning says why."""
    elf, _ = harness.example("crash", "m3")
    itm = tmp_path / "s.itm"
    itm.write_bytes(stream([0x20000100, 0x20000200, 0x20000100]))
    r = cli("top", "-e", elf, "--input", itm, "-F", "1000000", "-j", tmp_path / "o.jsonl")
    want = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    with top.Session(elf, cpu_freq=1000000) as session:
        assert fed(session, itm.read_bytes())[1] == want
        warning = re.search(r"spoor top: warning: (.*)", r.stderr).group(1)
        assert session.warnings == [warning]
    assert [t["tcb"] for t in want[-1]["threads"]] == ["0x20000100", "0x20000200"]


def test_live_stream_without_timestamps_is_timed_by_the_host(shapes):
    """live=True (what -s implies) on a stream without local timestamps: the host's clock
    times it once 16 packets came without one; each quiet moment (idle(), as spoor top's loop
    after 100 ms without a byte) releases what the decoder held. Every switch is counted."""
    elf, data, _ = shapes["FREERTOS"]
    symbols = harness.symbol_addresses(elf)
    tcbs = [symbols["sensor_tcb"], symbols["net_tcb"]]
    reports = []
    with top.Session(elf, cpu_freq=1000000, interval=20, mem={RAM: data}, live=True) as s:
        reports += s.feed(b"\x00" * 5 + b"\x80")
        for i in range(40):  # data trace values of comparator 1, no timestamp
            reports += s.feed(bytes([0x9F]) + tcbs[i % 2].to_bytes(4, "little"))
            time.sleep(0.005)
            reports += s.idle()
        running = len(reports)
        reports += s.finish()
        assert any("timed by the host's clock" in w for w in s.warnings), s.warnings
    assert running >= 3, reports  # 200 ms and more of 20 ms intervals, while the stream ran
    assert reports[-1]["summary"]
    assert {t["name"] for t in reports[-1]["threads"]} == {"Sensor", "Net"}
    assert sum(t["switches"] for r in reports[:-1] for t in r["threads"]) == 40
    assert sum(t["switches"] for t in reports[-1]["threads"]) == 40


def test_dump_as_target_memory(crash_dump, tmp_path):
    """DUMP: a crash dump's path or bytes (here an ELF without an RTOS: the dump is opened, a
    broken one refused as spoor top refuses it)."""
    elf, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault")
    itm = tmp_path / "s.itm"
    itm.write_bytes(stream([0x20000100, 0x20000200]))
    want = cli_top(tmp_path, "-e", elf, "--input", itm, "-F", "1000000", dump)
    assert top.run(elf, itm, cpu_freq=1000000, dump=dump) == want
    assert top.run(elf, itm, cpu_freq=1000000, dump=dump.read_bytes()) == want
    broken = tmp_path / "broken.bin"
    broken.write_bytes(dump.read_bytes()[:40])
    with pytest.raises(spoor.Error) as e:
        top.Session(elf, cpu_freq=1000000, dump=broken)
    assert str(e.value) == cli_error("-e", elf, "--input", itm, "-F", "1000000", broken)


def cli_warnings(stderr):
    return re.findall(r"^spoor top: warning: (.*)$", stderr, re.M)


def test_warnings_are_the_cli_warnings(shapes, tmp_path):
    """What the session says while reading: a TCB that is no thread (RTX5), a comparator that
    sends match packets without a value."""
    elf, data, itm = shapes["RTX5"]
    r = cli("top", "-e", elf, "--input", itm, "-F", "1000000", "--mem", f"0x{RAM:08x}:{data}")
    with top.Session(elf, cpu_freq=1000000, mem={RAM: data}) as session:
        fed(session, itm.read_bytes())
        assert session.warnings == cli_warnings(r.stderr)
        assert any("not a RTX5 thread (id 0xf5)" in w for w in session.warnings)
    # a data trace match packet of comparator 1 (discriminator 8 + 2n, one byte: ARMv7-M D4.3)
    match = tmp_path / "match.itm"
    match.write_bytes(b"\x00" * 5 + b"\x80" + b"\x55\x01" + b"\xc0\xe8\x07")
    r = cli("top", "-e", elf, "--input", match, "-F", "1000000")
    with top.Session(elf, cpu_freq=1000000) as session:
        fed(session, match.read_bytes())
        said = cli_warnings(r.stderr)
        assert session.warnings and set(session.warnings) <= set(said), (session.warnings, said)
        assert "comparator 1 sends data trace match packets" in session.warnings[0]


def test_errors_are_the_cli_messages(shapes, tmp_path):
    elf, data, itm = shapes["FREERTOS"]
    base = ["-e", elf, "--input", itm, "-F", "1000000"]
    with pytest.raises(spoor.Error) as e:
        top.Session(elf, cpu_freq=1000000, rtos="rtx5")
    assert str(e.value) == cli_error(*base, "-T", "rtx5")
    bare = build("FREERTOS", tmp_path, debug=False)
    with pytest.raises(spoor.Error) as e:
        top.Session(bare, cpu_freq=1000000)
    assert str(e.value) == cli_error("-e", bare, "--input", itm, "-F", "1000000")
    missing = tmp_path / "no-such.bin"
    with pytest.raises(spoor.Error) as e:
        top.Session(elf, cpu_freq=1000000, mem={RAM: missing})
    assert str(e.value) == cli_error(*base, "--mem", f"0x{RAM:08x}:{missing}")
    # an empty stream is an error, as spoor top exits 2
    (tmp_path / "empty.itm").write_bytes(b"")
    assert "the stream is empty (no byte)" in cli_error("-e", elf, "--input",
                                                        tmp_path / "empty.itm", "-F", "1")
    with pytest.raises(spoor.Error, match="the stream is empty"):
        top.run(elf, b"", cpu_freq=1)
    for bad in ({"cpu_freq": 0}, {"cpu_freq": 1000, "interval": 0}, {"interval": 1.5},
                {"comparator": 4}, {"prescaler": 3}, {"tpiu": 112}, {"tpiu": 0},
                {"stack": True}, {"gdb": "127.0.0.1:1", "telnet": "4444"},
                {"cpu_freq": 1, "interval": 1}):  # 1 ms at 1 Hz: less than a cycle
        with pytest.raises(spoor.Error):
            top.Session(elf, **dict({"cpu_freq": 1000000}, **bad))
    session = top.Session(elf, cpu_freq=1000000)
    session.feed(itm.read_bytes())
    session.finish()
    with pytest.raises(spoor.Error):
        session.feed(b"\x00")
    session.close()
    with pytest.raises(spoor.Error):
        session.finish()


def test_no_leak_over_many_feeds(shapes):
    elf, data, itm = shapes["FREERTOS"]
    chunk = itm.read_bytes()
    image = data.read_bytes()
    with spoor.Elf(elf) as opened:
        session = top.Session(opened, cpu_freq=1000000, interval=1, exceptions=True,
                              mem={RAM: data})

        def rounds(n):
            intervals = 0
            for i in range(n):
                intervals += len(session.feed(chunk))  # the stream goes on and on
                if i % 100 == 0:
                    top.run(opened, chunk, cpu_freq=1000000, mem={RAM: image}, stack=True)
            return intervals

        rounds(1000)
        before = rss_kib()
        assert rounds(10000) > 10000
        grown = rss_kib() - before
        session.close()
    # a lost report text a feed would be ~20 MB; a lost session (its pump's decoder, ~50 KB)
    # per run() ~5 MB
    assert grown < 4096, f"RSS grew {grown} KiB over 10,000 feeds and 100 sessions"


def doc_block(heading):
    """The ```python block under docs/python.md's heading."""
    text = (SOURCE / "docs" / "python.md").read_text()
    section = text.split(f"\n{heading}\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_python_md_top_example(sched):
    elf, ram, itm, _ = sched
    code = doc_block("## spoor.top")
    for k, v in {"ELF": elf, "RAM": ram, "STREAM": itm}.items():
        code = code.replace(f'"{k}"', repr(str(v)))
    exec(compile(code, "docs/python.md", "exec"), {})
