"""spoor triage end to end: dumps of every scenario of examples/crash on the M0, M3, M4F and M33,
from two builds of the firmware, grouped into buckets.

The truth is how each dump was made: QEMU ran build A or B of crash-<core>.elf with
`arg=crash,arg=SCENARIO,arg=DUMP`, so the scenario of every dump is known here, not from spoor.
Build B is crash.c compiled again into this test's temp dir with the firmware build's own
compile and link commands (flags.make, link.txt) and one more object linked first: a padding
function that shifts every address of the program, so the build-ids and addresses differ while
the functions are the same. Build A also runs twice with a different dump path (another command
line); the copies get file times of their own. Checked:

- every bucket holds dumps of one scenario only (pure);
- a scenario's dumps whose raw fault status (read from the dump bytes here, with the parser of
  test_crash_scenarios.py) is the same are in one bucket: both builds, every run, and the cores
  whose hardware reports the same fault;
- the versions of a bucket are the build-ids of its dumps' ELFs (from arm-none-eabi-readelf);
- a truncated dump, a dump with flipped bytes and a dump whose ELF is not in --elf-dir are
  listed apart with their errors, and counted in no bucket;
- `--merge` of per-shard --json (and --json --per-dump) outputs equals the single run's output;
- `--html OUT`: OUT/index.html opened by headless Chromium with the network cut off (test_report's
  proxy records every request): one row per bucket of `spoor triage --json` with its values,
  the dumps not signed, every error and warning of the page's JSON said on the page
  (test_report.check_partials), no console message, no request; each row's link is a file in OUT holding
  spoor report's page of the example (its embedded report is `spoor crash --json` of the
  example); a dump path with `</script>` and `<!--` in it stays text; --merge --html gives the
  page's buckets of the single run. A screenshot is kept in BUILD/test_triage/.
"""
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_crash_scenarios import CrashQemu, Dump  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
ARTIFACTS = Path(os.environ.get("SPOOR_BUILD_DIR", ".")) / "test_triage"
SCENARIOS = {
    "m3": ["badptr", "busfault", "div0", "undef", "overflow", "nested", "psp", "assert"],
    "m4f": ["badptr", "busfault", "div0", "undef", "overflow", "nested", "psp", "assert"],
    "m33": ["badptr", "busfault", "div0", "undef", "overflow", "nested", "psp", "assert"],
    "m0": ["badptr", "busfault", "undef", "overflow", "psp", "assert"],
}
PAD = """
/* Padding linked before crash.c: every function after it moves. */
__attribute__((used, section(".text.a_triage_pad"))) void triage_shift_pad(void)
{
    __asm__ volatile(".rept 96\\n\\tnop\\n\\t.endr");
}
"""


def make_var(text, name):
    m = re.search(rf"^{name} = (.*)$", text, re.M)
    return m.group(1) if m else ""


def build_b(core, out_dir):
    """crash-<core>.elf built again with a padding object first: (elf path)."""
    fw = harness.firmware_dir() / "examples"
    obj_dir = fw / "CMakeFiles" / f"crash-{core}.dir"
    flags = (obj_dir / "flags.make").read_text()
    cflags = shlex.split(make_var(flags, "C_DEFINES")) + shlex.split(
        make_var(flags, "C_INCLUDES")) + shlex.split(make_var(flags, "C_FLAGS"))
    link = shlex.split((obj_dir / "link.txt").read_text())
    gcc = link[0]
    work = Path(out_dir) / f"build-b-{core}"
    work.mkdir()
    pad = work / "pad.c"
    pad.write_text(PAD)
    objects = []
    sources = {"crash/crash.c.obj": "examples/crash/crash.c",
               "common/startup.c.obj": "examples/common/startup.c",
               "common/semihost.c.obj": "examples/common/semihost.c"}
    source_dir = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
    for src in [pad] + [source_dir / s for s in sources.values()]:
        obj = work / (src.name + ".obj")
        subprocess.run([gcc] + cflags + ["-c", str(src), "-o", str(obj)], check=True,
                       cwd=fw, timeout=120)
        objects.append(str(obj))
    args, elf = [], work / f"crash-{core}.elf"
    skip = False
    for a in link[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a.endswith(".obj") or a.startswith("-Wl,-Map="):
            continue
        args.append(a)
    subprocess.run([gcc] + objects + args + ["-Wl,--undefined=triage_shift_pad", "-o", str(elf)],
                   check=True, cwd=fw, timeout=120)
    return elf


def elf_build_id(elf):
    out = subprocess.run(["arm-none-eabi-readelf", "-n", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def function_address(elf, name):
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    return int(re.search(rf"^([0-9a-f]+) T {name}$", out, re.M).group(1), 16)


def run_qemu(elf, machine, scenario, dump):
    with CrashQemu(str(elf), machine, ["crash", scenario, str(dump)]) as qemu:
        result = qemu.wait(30)
    if result.returncode != 0 or not Path(dump).is_file():
        raise AssertionError(f"{elf} {scenario}: QEMU exit {result.returncode}:\n{result.output}")


def spoor(*args, stderr=None):
    r = subprocess.run([SPOOR, "triage", *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"spoor triage {args}: exit {r.returncode}: {r.stderr}")
    if stderr is not None:
        stderr.append(r.stderr)
    return r.stdout


def page_data(page):
    """The JSON in script#spoor-triage as the page file holds it."""
    m = re.search(r'<script type="application/json" id="spoor-triage">(.*?)</script>',
                  page.read_text(), re.S)
    return json.loads(m.group(1))


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class TriageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-triage-")
        root = Path(cls.tmp.name)
        cls.elfs = root / "elfs"
        cls.dumps = root / "dumps"
        cls.elfs.mkdir()
        cls.dumps.mkdir()
        cls.truth = {}  # dump path -> (core, scenario, build)
        cls.build_ids = {}  # (core, build) -> build-id of its ELF
        jobs = []
        for core in SCENARIOS:
            elf_a, machine = harness.example("crash", core)
            elf_b = build_b(core, root)
            # the padding moved the code: an independent check that build B is another layout
            assert function_address(elf_a, "main") != function_address(elf_b, "main")
            for build, elf in (("a", elf_a), ("b", elf_b)):
                shutil.copy(elf, cls.elfs / f"crash-{core}-{build}.elf")
                cls.build_ids[(core, build)] = elf_build_id(elf)
            for scenario in SCENARIOS[core]:
                for build, elf, run in (("a", elf_a, 1), ("a", elf_a, 2), ("b", elf_b, 1)):
                    sub = cls.dumps / f"{build}{run}"
                    sub.mkdir(exist_ok=True)
                    name = f"{core}-{scenario}" + ("-second-run" if run == 2 else "") + ".bin"
                    jobs.append((elf, machine, scenario, sub / name))
                    cls.truth[str(sub / name)] = (core, scenario, build)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda j: run_qemu(*j), jobs))
        for i, path in enumerate(sorted(cls.truth)):  # distinct times, one minute apart
            os.utime(path, (1700000000 + 60 * i, 1700000000 + 60 * i))
        # damaged and foreign dumps
        good = (cls.dumps / "a1" / "m3-div0.bin").read_bytes()
        bad = cls.dumps / "bad"
        bad.mkdir()
        (bad / "truncated.bin").write_bytes(good[:len(good) // 2])
        flipped = bytearray(good)
        for at in range(200, 220):
            flipped[at] ^= 0xFF
        (bad / "flipped.bin").write_bytes(bytes(flipped))
        _, foreign_machine = harness.example("crash", "m3")
        # a dump of a build not in --elf-dir: build B of the M3 with another padding size
        global PAD
        saved = PAD
        PAD = PAD.replace("96", "40")
        (root / "foreign").mkdir()
        foreign_elf = build_b("m3", root / "foreign")
        PAD = saved
        run_qemu(foreign_elf, foreign_machine, "undef", bad / "foreign.bin")
        cls.bad = {str(bad / "truncated.bin"): "truncated", str(bad / "flipped.bin"): "CRC",
                   str(bad / "foreign.bin"): "no ELF with build-id"}
        cls.lines = json_lines(spoor("--elf-dir", cls.elfs, "--json", "--per-dump", cls.dumps))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def buckets(self):
        return [line for line in self.lines if "bucket" in line and "dump" not in line]

    def per_dump(self):
        return {line["dump"]: line for line in self.lines if "dump" in line}

    def test_buckets_are_pure_and_builds_share_them(self):
        per_dump = self.per_dump()
        members = {}
        for path, (core, scenario, build) in self.truth.items():
            self.assertIn("bucket", per_dump[path], path)
            members.setdefault(per_dump[path]["bucket"], []).append((core, scenario, build, path))
        for bucket, dumps in members.items():
            self.assertEqual(len({s for _, s, _, _ in dumps}), 1, f"bucket {bucket} mixes {dumps}")
        # one bucket per scenario and raw fault status, whatever the build or the run
        by_status = {}
        for path, (core, scenario, build) in self.truth.items():
            d = Dump(Path(path).read_bytes())
            status = (d.reason, d.code) if d.reason != 1 else (d.reason, d.cfsr,
                                                                d.hfsr & (1 << 30))
            by_status.setdefault((scenario, status), set()).add(per_dump[path]["bucket"])
        for key, buckets in by_status.items():
            self.assertEqual(len(buckets), 1, f"{key} split into {buckets}")
        # both builds of a core in the bucket of each scenario
        for core in SCENARIOS:
            for scenario in SCENARIOS[core]:
                got = {per_dump[p]["bucket"] for p, t in self.truth.items()
                       if t[:2] == (core, scenario)}
                self.assertEqual(len(got), 1, f"{core} {scenario}: {got}")

    def test_versions_counts_and_times(self):
        per_dump = self.per_dump()
        for b in self.buckets():
            paths = [p for p in self.truth if per_dump[p].get("bucket") == b["bucket"]]
            self.assertEqual(b["count"], len(paths))
            want = {}
            for p in paths:
                core, _, build = self.truth[p]
                bid = self.build_ids[(core, build)]
                want[bid] = want.get(bid, 0) + 1
            self.assertEqual({v["build_id"]: v["count"] for v in b["versions"]}, want)
            times = sorted((int(os.stat(p).st_mtime), p) for p in paths)
            self.assertEqual(b["example"], times[0][1])
            self.assertEqual(b["first"][:4], "2023")  # 1700000000 + minutes: November 2023
            self.assertIn(b["reason"], ("fault", "assert"))
            # application frames wherever the dump holds a state to unwind from: a stacked frame
            # or a software capture (the M0's overflow faults before it can stack one: pc 0)
            raw = Dump(Path(paths[0]).read_bytes())
            if raw.flags & 0x0101:
                self.assertTrue(b["frames"], b)
            else:
                self.assertEqual(raw.pc, 0)
            self.assertFalse(any(re.search(r"0x|\+", f) for f in b["frames"]), b)

    def test_damaged_and_foreign_dumps_listed_apart(self):
        per_dump = self.per_dump()
        for path, why in self.bad.items():
            self.assertIn(why, per_dump[path].get("error", ""), per_dump[path])
        self.assertEqual(sum(b["count"] for b in self.buckets()), len(self.truth))
        text = spoor("--elf-dir", self.elfs, self.dumps)
        self.assertIn(f"from {len(self.truth)} dumps; 3 not signed", text)

    def test_merge_of_shards_equals_one_run(self):
        root = Path(self.tmp.name)
        for flags in (["--json"], ["--json", "--per-dump"]):
            whole = spoor("--elf-dir", self.elfs, *flags, self.dumps)
            shards = []
            for i, sub in enumerate(sorted(self.dumps.iterdir())):
                out = root / f"shard{i}{len(flags)}.jsonl"
                out.write_text(spoor("--elf-dir", self.elfs, "--jobs", 1, *flags, sub))
                shards.append(out)
            # the lines after the shard line are the one run's; the shard line names the shards
            ids = sorted(json.loads(s.read_text().splitlines()[0])["shards"][0] for s in shards)
            merged = spoor("--merge", *flags, *shards).split("\n", 1)
            self.assertEqual(json.loads(merged[0]), {"spoor_triage": 1, "shards": ids})
            self.assertEqual(merged[1], whole.split("\n", 1)[1])
            # associative: merging merged halves gives the same
            half = len(shards) // 2
            left, right = root / f"left{len(flags)}", root / f"right{len(flags)}"
            left.write_text(spoor("--merge", *flags, *shards[:half]))
            right.write_text(spoor("--merge", *flags, *shards[half:]))
            self.assertEqual(spoor("--merge", *flags, right, left).split("\n", 1),
                             ["\n".join(merged[:1]), merged[1]])
            # a shard merged twice, alone or inside a merged output: refused, nothing printed
            for twice in ([shards[0], shards[0]], [left, shards[0]]):
                r = subprocess.run([SPOOR, "triage", "--merge", *map(str, twice)],
                                   capture_output=True, text=True)
                self.assertEqual((r.returncode, r.stdout), (2, ""), twice)
                first = json.loads(shards[0].read_text().splitlines()[0])["shards"][0]
                self.assertRegex(r.stderr, rf"^spoor triage: {re.escape(str(twice[1]))}: shard "
                                 rf"{first} is merged twice \(from {re.escape(str(twice[0]))} "
                                 rf"and {re.escape(str(twice[1]))}\)\n$")

    def check_page(self, out, lines, name):
        """OUT/index.html rendered by Chromium: its rows are the buckets and errors of lines
        (spoor triage --json); returns {bucket id: href} of the rows with a link."""
        from test_report import Dom, Proxy, check_partials, chromium, page_shell
        page = out / "index.html"
        shell = page_shell(page)
        for pattern in (r"\ssrc=", r"\shref=", r"url\(", r"@import", r"fetch\(", r"XMLHttpRequest",
                        r"https?://"):
            self.assertIsNone(re.search(pattern, shell, re.I), f"{name}: {pattern} in the page")
        proxy = Proxy()
        dom_text, console = chromium(page, proxy)
        self.assertEqual(console, [], f"{name}: the console says something")
        self.assertEqual(proxy.requests, [], f"{name}: requests left the page")
        ARTIFACTS.mkdir(exist_ok=True)
        chromium(page, proxy, screenshot=ARTIFACTS / f"{name}.png")
        self.assertGreater((ARTIFACTS / f"{name}.png").stat().st_size, 10000)
        dom = Dom(dom_text).root
        self.assertEqual(dom.find(tag="html").attrs.get("data-rendered"), "yes")
        # every error and warning of the page's JSON is said on the page
        check_partials(dom, page_data(page), name)
        buckets = [line for line in lines if "bucket" in line and "dump" not in line]
        rows = list(dom.find_all("bucket", "tr"))
        self.assertEqual(len(rows), len(buckets), name)
        links = {}
        for row, b in zip(rows, buckets):
            at = f"{name} bucket {b['bucket']}"
            texts = lambda cls: [n.text() for n in row.find_all(cls)]  # noqa: E731
            self.assertEqual(row.attrs["data-bucket"], b["bucket"], at)
            self.assertEqual(row.find("id").text(), b["bucket"], at)
            self.assertEqual(row.find("count").find("n").text(), str(b["count"]), at)
            self.assertEqual(row.attrs["title"], b["signature"], at)
            self.assertEqual(texts("reason"), [b["reason"]], at)
            self.assertEqual(texts("fault"), [b["fault"]] if b["fault"] else [], at)
            self.assertEqual(texts("bit"), b["bits"], at)
            self.assertEqual(texts("assert"), [b["assert"]] if b["assert"] else [], at)
            self.assertEqual(texts("frame"), b["frames"], at)
            builds = list(row.find_all("build"))
            self.assertEqual(len(builds), len(b["versions"]), at)
            for li, v in zip(builds, b["versions"]):
                self.assertEqual(li.find("bid").attrs["title"], v["build_id"], at)
                self.assertEqual(li.find("bid").text(), v["build_id"][:12], at)
                self.assertEqual(li.find("n").text(), f"\u00d7{v['count']}", at)
                version = li.find("version")
                self.assertEqual(version.text() if version else None, v["version"], at)
            self.assertEqual(row.find("first").text(), b["first"], at)
            self.assertEqual(row.find("last").text(), b["last"], at)
            example = row.find("example")
            self.assertEqual(example.text().startswith(b["example"]), True, at)
            a = example.find(tag="a")
            if a is not None:
                self.assertEqual(a.text(), b["example"], at)
                links[b["bucket"]] = a.attrs["href"]
        errors = [(line["dump"], line["error"]) for line in lines if "error" in line]
        shown = [(r.find("dump").text(), r.find("error").text())
                 for r in dom.find_all("unsigned", "tr")]
        self.assertEqual(shown, errors, name)
        return links

    def test_html(self):
        root = Path(self.tmp.name)
        # a small set: one dump of each scenario of build A on the M3 and M0, the damaged and
        # foreign dumps, and a copy whose name holds markup, made the earliest (the example)
        small = root / "html-dumps"
        small.mkdir()
        for path, (core, _, build) in self.truth.items():
            if build == "a" and core in ("m3", "m0") and "second-run" not in path:
                shutil.copy2(path, small / f"{core}-{Path(path).parent.name}-{Path(path).name}")
        for path in self.bad:
            shutil.copy2(path, small / Path(path).name)
        (small / "<").mkdir()
        evil = small / "<" / "script><!--x--><b>.bin"  # its path holds </script><!--
        shutil.copy(self.dumps / "a1" / "m3-div0.bin", evil)
        os.utime(evil, (1600000000, 1600000000))
        out = root / "pages"
        err = []
        self.assertEqual(spoor("--elf-dir", self.elfs, "--html", out, small, stderr=err), "")
        self.assertEqual(err, [""])
        lines = json_lines(spoor("--elf-dir", self.elfs, "--json", small))
        links = self.check_page(out, lines, "index")
        buckets = [line for line in lines if "bucket" in line and "dump" not in line]
        self.assertEqual(set(links), {b["bucket"] for b in buckets})
        self.assertIn(str(evil), [b["example"] for b in buckets])
        from test_report import Proxy, chromium, embedded_report
        for b in buckets:
            target = out / links[b["bucket"]]
            self.assertTrue(target.is_file(), target)
            self.assertEqual(target.parent, out)
            crash = subprocess.run([SPOOR, "crash", "--json", "--elf-dir", str(self.elfs), "--",
                                    b["example"]], capture_output=True, text=True, check=True)
            self.assertEqual(embedded_report(target), json.loads(crash.stdout), b["bucket"])
        # one linked page renders offline too
        proxy = Proxy()
        dom_text, console = chromium(out / links[buckets[0]["bucket"]], proxy)
        self.assertEqual((console, proxy.requests), ([], []))
        self.assertIn('data-rendered="yes"', dom_text)
        # --merge --html: the same buckets; without --elf-dir, no links and a warning
        shard = root / "html-shard.jsonl"
        shard.write_text(spoor("--elf-dir", self.elfs, "--json", small))
        merged = root / "pages-merged"
        spoor("--merge", "--html", merged, "--elf-dir", self.elfs, shard)
        self.assertEqual(page_data(merged / "index.html")["buckets"], buckets)
        self.assertEqual(page_data(merged / "index.html")["reports"],
                         page_data(out / "index.html")["reports"])
        bare = root / "pages-bare"
        err = []
        spoor("--merge", "--html", bare, shard, stderr=err)
        self.assertEqual(err, ["spoor triage: warning: no --elf-dir: the page links no report of "
                               "the examples\n"])
        self.assertEqual(self.check_page(bare, lines, "merged-no-elf-dir"), {})
        self.assertEqual(sorted(p.name for p in bare.iterdir()), ["index.html"])

    def test_html_into_a_file(self):
        not_dir = Path(self.tmp.name) / "not-a-folder"
        not_dir.write_text("x")
        r = subprocess.run([SPOOR, "triage", "--elf-dir", str(self.elfs), "--html", str(not_dir),
                            str(self.dumps)], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr, f"spoor triage: --html {not_dir}: not a folder\n")

    def test_bad_merge_input(self):
        bad = Path(self.tmp.name) / "bad.jsonl"
        line = json.dumps(self.buckets()[0])
        bad.write_text(line.replace('"count": ', '"count": 1') + "\n")
        r = subprocess.run([SPOOR, "triage", "--merge", str(bad)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, r"^spoor triage: .*bad.jsonl: line 1: ")
        self.assertEqual(len(r.stderr.splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
