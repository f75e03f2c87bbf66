"""The Python package (python/, docs/python.md) end to end: built with Debian's python3 and
python3-cffi against this build's libspoor.so (pip install --target, offline), then every result
compared with the same build's CLI on the same input:

- spoor.Elf.symbolize / symbolize_many == the lines of `spoor sym --json [-r]` for every symbol
  of an example firmware (from arm-none-eabi-nm, whose names the answers must also carry), inside
  and outside functions, and an address nothing holds;
- spoor.crash == `spoor crash --json` of a QEMU-made crash dump (given as a path and as bytes),
  and with --threads of the scheduler's snapshot (regs.json + memory image, docs/crash.md's gdb
  recipe), and of QEMU halted at a breakpoint through its gdbstub (--gdb);
- spoor.triage == the lines of `spoor triage --json` on dumps of several crash scenarios;
- spoor.itm.decode (a path, bytes, a file; Decoder fed 7-byte chunks) == `spoor itm --json
  [--wait-sync]` on the shared captures, 64 KiB of random bytes and docs/itm.md's hello stream
  (whose port values are known);
- errors are spoor.Error with libspoor's message (the CLI's message says the same);
- no leak: RSS stays put over 10,000 calls;
- `pip wheel` gives one abi3 wheel, which installs into a fresh venv (with Debian's cffi) and
  imports;
- docs/python.md's example runs.

With an ASan build of libspoor, the test re-runs itself with the sanitizer runtimes preloaded
(Python itself is not instrumented) and leak detection off (CPython keeps memory to the end)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

DEBIAN_PYTHON = "/usr/bin/python3"  # the interpreter with Debian's python3-cffi
HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", HERE.parent.parent))
BUILD = Path(os.environ.get("SPOOR_BUILD_DIR", "."))
SPOOR = os.environ.get("SPOOR_BIN", "spoor")
REEXEC = "SPOOR_PY_TEST_CHILD"


def sanitized_build():
    cache = BUILD / "CMakeCache.txt"
    return cache.is_file() and "SPOOR_SANITIZE:BOOL=ON" in cache.read_text()


def reexec():
    """Runs this file again under Debian's python3, with the ASan/UBSan runtimes preloaded when
    libspoor is instrumented."""
    env = dict(os.environ, **{REEXEC: "1"})
    if sanitized_build():
        runtimes = [subprocess.run(["cc", f"-print-file-name={name}"], capture_output=True,
                                   text=True, check=True).stdout.strip()
                    for name in ("libasan.so", "libubsan.so")]
        env["LD_PRELOAD"] = " ".join(runtimes)
        env["ASAN_OPTIONS"] = "detect_leaks=0:quarantine_size_mb=1"
    os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON, str(Path(__file__).resolve()), *sys.argv[1:]], env)


if __name__ == "__main__" and os.environ.get(REEXEC) != "1":
    reexec()
# the sanitizer runtimes for the Python programs this test runs (the wheel's venv)
PRELOAD = {k: os.environ[k] for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ}
os.environ.pop("LD_PRELOAD", None)  # the other programs this test runs are not Python

sys.path.insert(0, str(HERE))
import harness  # noqa: E402

WORK = None
spoor = None


def run(*command, check=True):
    r = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError(f"{command} exit {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def build_package(work):
    """pip install --target of a copy of python/ (the source tree stays clean), offline."""
    src = work / "python-src"
    shutil.copytree(SOURCE / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                          "__pycache__"))
    env = dict(os.environ, SPOOR_BUILD_DIR=str(BUILD.resolve()), SPOOR_SOURCE_DIR=str(SOURCE),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("ASAN_OPTIONS", None)
    r = subprocess.run([DEBIAN_PYTHON, "-m", "pip", "install", "--no-build-isolation",
                        "--no-deps", "--target", str(work / "site"), str(src)],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"pip install failed:\n{r.stdout}\n{r.stderr}")
    sys.path.insert(0, str(work / "site"))
    import spoor as module
    return module


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def setUpModule():
    global WORK, spoor, TMP
    TMP = tempfile.TemporaryDirectory(prefix="spoor-python-")
    WORK = Path(TMP.name)
    spoor = build_package(WORK)


def tearDownModule():
    TMP.cleanup()


class Crashes:
    """Crash dumps of the crash example on the M3, made once."""
    made = {}

    @classmethod
    def dump(cls, scenario, copy=""):
        from test_crash_scenarios import CrashQemu
        key = (scenario, copy)
        if key not in cls.made:
            elf, machine = harness.example("crash", "m3")
            folder = WORK / "dumps"
            folder.mkdir(exist_ok=True)
            path = folder / f"m3-{scenario}{copy}.bin"
            with CrashQemu(elf, machine, ["crash", scenario, str(path)]) as qemu:
                result = qemu.wait(30)
            if result.returncode != 0 or not path.is_file():
                raise AssertionError(f"{scenario}: QEMU exit {result.returncode}: {result.output}")
            cls.made[key] = path
        return cls.made[key]


class TestSymbolize(unittest.TestCase):
    def test_symbolize_equals_sym_json(self):
        elf_path, _ = harness.example("crash", "m3")
        names = {}  # function symbols, from readelf (an independent reader of the symbol table)
        for line in run("arm-none-eabi-readelf", "-sW", elf_path).stdout.splitlines():
            f = line.split()
            if len(f) == 8 and f[3] == "FUNC" and f[6] != "UND":
                # DWARF names a clone by its source name: "f.isra.0" is f
                names.setdefault(int(f[1], 16) & ~1, set()).add(f[7].split(".")[0])
        self.assertGreater(len(names), 10)
        addrs = sorted({a for a in names} | {a + 2 for a in names} | {0xFFFFFFF0})
        want = [json.loads(line) for line in
                run(SPOOR, "sym", "--json", "-e", elf_path, *map(hex, addrs)).stdout.splitlines()]
        want_r = [json.loads(line) for line in run(SPOOR, "sym", "--json", "-r", "-e", elf_path,
                                                   *map(hex, addrs)).stdout.splitlines()]
        with spoor.Elf(elf_path) as elf:
            got = elf.symbolize_many(addrs)
            self.assertEqual(got, want)
            self.assertEqual(elf.symbolize_many(addrs, return_address=True), want_r)
            self.assertEqual([elf.symbolize(a) for a in addrs[:50]], want[:50])
        # the answers name the functions the symbol table names (the outermost function of an
        # inline chain)
        for a, answer in zip(addrs, got):
            if a in names:
                outer = answer["inlined"][-1]["function"] if answer["inlined"] else answer["function"]
                self.assertIn(outer, names[a], hex(a))
        self.assertIsNone(got[-1]["function"])  # 0xfffffff0: nothing there

    def test_closed_elf_raises(self):
        elf = spoor.Elf(harness.example("crash", "m3")[0])
        elf.close()
        with self.assertRaises(spoor.Error):
            elf.symbolize(0x100)


class TestCrash(unittest.TestCase):
    def test_crash_dump_path_and_bytes(self):
        elf_path, _ = harness.example("crash", "m3")
        dump = Crashes.dump("busfault")
        want = json.loads(run(SPOOR, "crash", "--json", "-e", elf_path, dump).stdout)
        self.assertEqual(want["fault"]["type"], "BusFault")  # what the scenario does
        elf = spoor.Elf(elf_path)
        self.assertEqual(spoor.crash(elf, dump=dump), want)
        self.assertEqual(spoor.crash(elf_path, dump=str(dump)), want)
        from_bytes = spoor.crash(elf, dump=dump.read_bytes())
        # the input's name is the one difference: bytes have no path
        self.assertEqual(_without_input(from_bytes), _without_input(want))

    def test_crash_snapshot_threads(self):
        from test_docs import gdb_snapshot
        elf_path, _ = harness.example("sched", "m3")
        snap = WORK / "sched-snap"
        gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], snap)
        image = snap / "0x20000000.bin"
        want = json.loads(run(SPOOR, "crash", "--json", "--threads", "-e", elf_path, "--regs",
                              snap / "regs.json", "--mem", f"0x20000000:{image}").stdout)
        self.assertGreaterEqual(len(want["threads"]), 4)
        got = spoor.crash(elf_path, regs=snap / "regs.json", mem={0x20000000: image},
                          threads=True)
        self.assertEqual(got, want)
        self.assertEqual(spoor.crash(elf_path, regs=snap / "regs.json",
                                     mem={0x20000000: image.read_bytes()}, threads=True), want)
        self.assertEqual(list(Path(tempfile.gettempdir()).glob("spoor-mem-*")), [])  # removed
        plain = json.loads(run(SPOOR, "crash", "--json", "-e", elf_path, "--regs",
                               snap / "regs.json", "--mem", f"0x20000000:{image}").stdout)
        self.assertEqual(spoor.crash(elf_path, regs=snap / "regs.json",
                                     mem={0x20000000: image}), plain)

    def test_crash_live_gdb(self):
        """A live target halted at a breakpoint, read through QEMU's gdbstub."""
        elf_path, machine = harness.example("calls", "m3")
        with harness.Qemu(elf_path, machine, gdb=True) as qemu:
            harness.run_gdb(elf_path, qemu.gdb_port, ["break level_three", "continue",
                                                      "disconnect"])
            where = f"127.0.0.1:{qemu.gdb_port}"
            want = json.loads(run(SPOOR, "crash", "--json", "-e", elf_path, "--gdb",
                                  where).stdout)
            got = spoor.crash(elf_path, gdb=where)
        self.assertEqual(got["backtrace"][0]["function"], "level_three")  # where gdb stopped
        self.assertEqual(got, want)


def _without_input(report):
    return {k: v for k, v in report.items() if k not in ("input", "dump")}


class TestTriage(unittest.TestCase):
    def test_triage_equals_cli(self):
        elf_path, _ = harness.example("crash", "m3")
        elfs = WORK / "elfs"
        elfs.mkdir(exist_ok=True)
        shutil.copy(elf_path, elfs / "crash-m3.elf")
        for scenario in ("busfault", "div0", "badptr"):
            Crashes.dump(scenario)
        Crashes.dump("busfault", copy="-again")
        dumps = WORK / "dumps"
        want = [json.loads(line) for line in
                run(SPOOR, "triage", "--elf-dir", elfs, "--json", dumps).stdout.splitlines()]
        got = spoor.triage([dumps], elf_dir=elfs)
        self.assertEqual(got, want)
        buckets = [o for o in got if "count" in o]
        self.assertEqual(sum(b["count"] for b in buckets), 4)
        self.assertEqual(max(b["count"] for b in buckets), 2)  # the two busfault runs
        self.assertEqual(spoor.triage(dumps, elf_dir=elfs, k=2),
                         [json.loads(line) for line in
                          run(SPOOR, "triage", "--elf-dir", elfs, "-k", "2", "--json",
                              dumps).stdout.splitlines()])

    def test_triage_shards_merge(self):
        """Shards signed apart (per dump), merged: == spoor triage --merge of the CLI's shards
        == one triage of all the dumps."""
        elf_path, _ = harness.example("crash", "m3")
        elfs = WORK / "elfs"
        elfs.mkdir(exist_ok=True)
        shutil.copy(elf_path, elfs / "crash-m3.elf")
        parts = [[Crashes.dump("busfault"), Crashes.dump("div0")],
                 [Crashes.dump("badptr"), Crashes.dump("busfault", copy="-again")]]
        files = []
        for i, part in enumerate(parts):
            out = run(SPOOR, "triage", "--elf-dir", elfs, "--json", "--per-dump", *part).stdout
            files.append(WORK / f"shard{i}.jsonl")
            files[-1].write_text(out)
            self.assertEqual(spoor.triage(part, elf_dir=elfs, per_dump=True),
                             [json.loads(line) for line in out.splitlines()])
        for per_dump in (False, True):
            flags = ["--per-dump"] if per_dump else []
            want = [json.loads(line) for line in run(SPOOR, "triage", "--merge", "--json", *flags,
                                                     *files).stdout.splitlines()]
            shards = [spoor.triage(part, elf_dir=elfs, per_dump=True) for part in parts]
            self.assertEqual(spoor.triage_merge(shards, per_dump=per_dump), want)
            self.assertEqual(spoor.triage_merge(files, per_dump=per_dump), want)
            self.assertEqual(spoor.triage_merge([f.read_bytes() for f in reversed(files)],
                                                per_dump=per_dump), want)
        whole = spoor.triage([p for part in parts for p in part], elf_dir=elfs)
        merged = spoor.triage_merge(files)
        self.assertEqual([o for o in merged if "count" in o], [o for o in whole if "count" in o])
        with self.assertRaises(spoor.Error) as caught:
            spoor.triage_merge([files[0], files[0]])  # a shard merged twice
        self.assertIn("merged twice", str(caught.exception))


class TestWheel(unittest.TestCase):
    def test_wheel_in_fresh_venv(self):
        """pip wheel gives one abi3 wheel; installed into a new venv that sees Debian's cffi,
        it imports and answers as spoor sym --json does."""
        work = WORK / "wheel"
        src = work / "src"
        shutil.copytree(SOURCE / "python", src, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__"))
        env = dict(os.environ, SPOOR_BUILD_DIR=str(BUILD.resolve()), SPOOR_SOURCE_DIR=str(SOURCE),
                   PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        r = subprocess.run([DEBIAN_PYTHON, "-m", "pip", "wheel", "--no-build-isolation",
                            "--no-deps", "-w", str(work / "wheels"), str(src)],
                           capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        wheels = [w.name for w in (work / "wheels").iterdir()]
        self.assertEqual(len(wheels), 1, wheels)
        self.assertRegex(wheels[0], r"^spoor-[0-9.]+-cp39-abi3-linux_x86_64\.whl$")
        venv = work / "venv"
        run(DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", venv)
        run(venv / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-deps",
            work / "wheels" / wheels[0])
        elf_path, _ = harness.example("crash", "m3")
        r = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import json, sys, spoor; "
                            "print(json.dumps(spoor.Elf(sys.argv[1]).symbolize(0x100)))",
                            str(elf_path)], capture_output=True, text=True, cwd=work,
                           env=dict(os.environ, **PRELOAD), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        want = run(SPOOR, "sym", "--json", "-e", elf_path, "0x100").stdout
        self.assertEqual(json.loads(r.stdout), json.loads(want))


class TestItm(unittest.TestCase):
    def captures(self):
        shared = Path(os.environ.get("SPOOR_SHARED_DIR", SOURCE.parent / "shared"))
        itm = shared / "testdata" / "itm"
        # one packet of every type (ARMv7-M ARM D4, ARMv8-M ARM D3); random bytes (errors)
        packets = bytes.fromhex(
            "000000000080"  # sync
            "70"  # overflow
            "c005" "30"  # local timestamps, formats 1 and 2
            "9481808000" "b481808000"  # global timestamps 1 and 2
            "18" "0141" "08"  # page 1, a software packet, page 0
            "0521"  # event counter: CPI and Cyc wrapped
            "0e1010"  # exception 16 entered
            "1700010020" "1500"  # PC samples: a PC, asleep
            "4701020304" "4e3412" "8555" "8d66" "4577")  # DWT PC, address, data r/w, match
        made = WORK / "packets.itm"
        made.write_bytes(packets)
        noise = WORK / "noise.itm"
        import random
        noise.write_bytes(random.Random(36).randbytes(1 << 16))
        hello = WORK / "hello.itm"  # docs/itm.md: port 0 'H', 'i', '!', '\n', port 1 42
        hello.write_bytes(b"\x01H\x01i\x10\x01!\x01\n\x0b\x2a\x00\x00\x00")
        return [itm / "cmsis-ctrace-blinky" / "Blinky+Arm.SWO.raw", itm / "rust-itm" / "itm.bin",
                made, noise, hello]

    def test_decode_equals_itm_json(self):
        from spoor import itm
        types = set()
        for path in self.captures():
            with self.subTest(capture=path.name):
                want = [json.loads(line) for line in
                        run(SPOOR, "itm", "--json", path).stdout.splitlines()]
                self.assertTrue(want)
                self.assertEqual(list(itm.decode(path)), want)
                self.assertEqual(list(itm.decode(path.read_bytes())), want)
                with open(path, "rb") as f:
                    self.assertEqual(list(itm.decode(f)), want)
                decoder, got, data = itm.Decoder(), [], path.read_bytes()
                for at in range(0, len(data), 7):  # a live source's small chunks
                    got += decoder.feed(data[at:at + 7])
                self.assertEqual(got + decoder.finish(), want)
                wait = [json.loads(line) for line in
                        run(SPOOR, "itm", "--json", "--wait-sync", path).stdout.splitlines()]
                self.assertEqual(list(itm.decode(path, wait_sync=True)), wait)
                types |= {p["type"] for p in want}
        self.assertEqual(len(types), 15, types)  # every type but the list end
        # the hand-made packets decode to what they were made of
        made = list(itm.decode((WORK / "packets.itm").read_bytes()))
        self.assertEqual([p["type"] for p in made][:18], [
            "sync", "overflow", "ts_local", "ts_local", "ts_global1", "ts_global2", "ext", "sw",
            "ext", "event_counter", "exception", "pc_sample", "pc_sample", "dwt_pc", "dwt_addr",
            "dwt_data", "dwt_data", "dwt_match"])
        self.assertEqual((made[7]["port"], made[7]["value"]), (32, 0x41))
        self.assertEqual((made[9]["cpi"], made[9]["cyc"], made[9]["exc"]), (1, 1, 0))
        self.assertEqual((made[10]["number"], made[10]["action"]), (16, "enter"))
        self.assertEqual((made[11]["pc"], made[12]["pc"]), (0x20000100, None))
        self.assertEqual((made[13]["pc"], made[14]["addr_offset"]), (0x04030201, 0x1234))
        self.assertEqual([(p["write"], p["value"]) for p in made[15:17]], [(False, 0x55),
                                                                            (True, 0x66)])
        hello = list(itm.decode(self.captures()[-1].read_bytes()))
        self.assertEqual([(p["port"], p["value"]) for p in hello if p["type"] == "sw"],
                         [(0, ord("H")), (0, ord("i")), (0, ord("!")), (0, ord("\n")), (1, 42)])


class TestErrors(unittest.TestCase):
    def test_missing_elf(self):
        missing = WORK / "no-such.elf"
        with self.assertRaises(spoor.Error) as caught:
            spoor.Elf(missing)
        cli = run(SPOOR, "sym", "-e", missing, "0x0", check=False)
        self.assertNotEqual(cli.returncode, 0)
        self.assertTrue(str(caught.exception))
        self.assertIn(str(caught.exception), cli.stderr)

    def test_bad_dump(self):
        elf_path, _ = harness.example("crash", "m3")
        data = Crashes.dump("busfault").read_bytes()
        bad = WORK / "truncated.bin"
        bad.write_bytes(data[:20])
        cli = run(SPOOR, "crash", "--json", "-e", elf_path, bad, check=False)
        self.assertNotEqual(cli.returncode, 0)
        with self.assertRaises(spoor.Error) as caught:
            spoor.crash(elf_path, dump=bad)
        self.assertIn(str(caught.exception), cli.stderr)
        with self.assertRaises(spoor.Error):
            spoor.crash(elf_path, dump=data[:20])
        with self.assertRaises(spoor.Error):
            spoor.crash(elf_path)  # no input
        port = harness.free_port()  # nothing listens there
        cli = run(SPOOR, "crash", "-e", elf_path, "--gdb", f"127.0.0.1:{port}", check=False)
        self.assertNotEqual(cli.returncode, 0)
        with self.assertRaises(spoor.Error) as caught:
            spoor.crash(elf_path, gdb=f"127.0.0.1:{port}")
        self.assertIn(str(caught.exception), cli.stderr)
        with self.assertRaises(spoor.Error):
            spoor.triage([WORK / "no-such-folder"], elf_dir=WORK)


class TestLeaks(unittest.TestCase):
    def test_rss_steady(self):
        elf_path, _ = harness.example("crash", "m3")
        dump = Crashes.dump("busfault").read_bytes()
        elf = spoor.Elf(elf_path)

        def calls(n):
            for i in range(n):
                elf.symbolize(0x100 + 2 * (i % 512))
                if i % 10 == 0:
                    spoor.crash(elf, dump=dump)
                if i % 100 == 0:
                    spoor.Elf(elf_path).close()
                    try:
                        spoor.Elf(WORK / "no-such.elf")
                    except spoor.Error:
                        pass

        calls(1000)  # warm: tables built, allocator pools filled
        before = rss_kib()
        calls(10000)
        grown = rss_kib() - before
        # one lost spoor_location array per call would be ~20 MiB, a lost report per crash call
        # far more
        print(f"RSS grew {grown} KiB over 10,000 calls", file=sys.stderr)
        self.assertLess(grown, 4096, f"RSS grew {grown} KiB over 10,000 calls")


class TestDocs(unittest.TestCase):
    def test_python_md_example(self):
        """docs/python.md's example (its first ```python block), with ELF, DUMP and ELF_DIR
        given."""
        text = (SOURCE / "docs" / "python.md").read_text()
        block = text.split("```python\n", 1)[1].split("```", 1)[0]
        elf_path, _ = harness.example("crash", "m3")
        elfs = WORK / "doc-elfs"
        elfs.mkdir(exist_ok=True)
        shutil.copy(elf_path, elfs)
        names = {"ELF": str(elf_path), "DUMP": str(Crashes.dump("busfault")),
                 "ELF_DIR": str(elfs), "DUMPS": str(WORK / "dumps")}
        code = block
        for k, v in names.items():
            code = code.replace(f'"{k}"', repr(v))
        exec(compile(code, "docs/python.md", "exec"), {})


if __name__ == "__main__":
    unittest.main()
