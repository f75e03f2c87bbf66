"""spoor triage says what it could not read and refuses shards it cannot trust.

Real inputs: crash-m3.elf and the crash example's div0 and nested dumps (QEMU), then:

1. ELF folders with one build-id in two files: a .build-id tree as distributions and debuginfod
   lay it out (arm-none-eabi-strip's stripped xx/rest beside arm-none-eabi-objcopy
   --only-keep-debug's xx/rest.debug): the dump is signed as with crash-m3.elf itself, no
   warning (one program); crash-m3.elf beside a copy with one byte of .text changed (the same
   build-id note): one warning naming both, the dump signed.
2. Dump folders: a dump 34 folders deep, and a folder spoor cannot read (the run drops root's
   capabilities with setpriv so permissions count): each said in a warning on stderr (and on
   the --html page); a crash-m3.elf whose second FDE's length runs into the next entries
   (test_crash_corrupt_frame's damage, which arm-none-eabi-readelf reports): its .debug_frame
   warning said by triage too.
3. --merge of hand-edited shards: no shard line, another format version, a key twice, a count
   above 2^53, counts adding up beyond it, one bucket twice in a shard: exit 2, one line naming
   the file and line; a shard given twice is test_triage.py's.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_docs import crash_dump  # noqa: E402
from test_crash_corrupt_frame import long_fde  # noqa: E402
from test_sym_corrupt import sections  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")


def triage(*args, user=None):
    cmd = [SPOOR, "triage", *map(str, args)]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
               "--inh-caps=-all", "--bounding-set=-all"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def build_id(elf):
    out = subprocess.run(["arm-none-eabi-readelf", "-n", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    return next(line.split()[-1] for line in out.splitlines() if "Build ID" in line)


class TriageInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-triage-inputs-")
        cls.work = Path(cls.tmp.name)
        os.chmod(cls.work, 0o755)
        cls.elf, _ = harness.example("crash", "m3")
        cls.dumps = cls.work / "dumps"
        cls.dumps.mkdir()
        crash_dump("m3", "div0", cls.dumps / "div0.bin")
        crash_dump("m3", "nested", cls.dumps / "nested.bin")
        cls.elfs = cls.work / "elfs"
        cls.elfs.mkdir()
        shutil.copy(cls.elf, cls.elfs / "crash-m3.elf")
        r = triage("--elf-dir", cls.elfs, "--json", cls.dumps)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        cls.shard = r.stdout
        cls.buckets = [json.loads(x) for x in r.stdout.splitlines()[1:]]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_build_id_tree(self):
        tree = self.work / "tree"
        bid = build_id(self.elf)
        sub = tree / ".build-id" / bid[:2]
        sub.mkdir(parents=True)
        subprocess.run(["arm-none-eabi-strip", "-o", sub / bid[2:], self.elf], check=True)
        subprocess.run(["arm-none-eabi-objcopy", "--only-keep-debug", self.elf,
                        sub / (bid[2:] + ".debug")], check=True)
        r = triage("--elf-dir", tree, "--json", self.dumps)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual([json.loads(x) for x in r.stdout.splitlines()[1:]], self.buckets)

    def test_one_build_id_two_programs(self):
        data = bytearray(Path(self.elf).read_bytes())
        off, size = sections(bytes(data))[0][".text"]
        data[off + size // 2] ^= 0x01
        two = self.work / "two"
        two.mkdir()
        shutil.copy(self.elf, two / "a.elf")
        (two / "b.elf").write_bytes(data)
        self.assertEqual(build_id(two / "b.elf"), build_id(self.elf))
        r = triage("--elf-dir", two, "--json", self.dumps)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr, f"spoor triage: WARNING: build-id {build_id(self.elf)} is in "
                                   f"two ELFs whose code differs: {two / 'a.elf'} and "
                                   f"{two / 'b.elf'} ({two / 'a.elf'} used)\n")
        self.assertEqual([json.loads(x) for x in r.stdout.splitlines()[1:]], self.buckets)

    def test_folders_skipped(self):
        root = self.work / "walk"
        deep = root / Path(*[f"d{i}" for i in range(34)])
        deep.mkdir(parents=True)
        shutil.copy(self.dumps / "div0.bin", deep / "deep.bin")
        shut = root / "shut"
        shut.mkdir()
        shutil.copy(self.dumps / "div0.bin", shut / "hidden.bin")
        shutil.copy(self.dumps / "nested.bin", root / "nested.bin")
        for d in [root, *root.rglob("*")]:
            os.chmod(d, 0o755 if d.is_dir() else 0o644)
        os.chmod(shut, 0)
        beyond = root / Path(*[f"d{i}" for i in range(33)])
        out = self.work / "walk-html"
        out.mkdir()
        os.chmod(out, 0o777)
        r = triage("--elf-dir", self.elfs, "--html", out, root, user=65534)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stderr.splitlines()), sorted([
            f"spoor triage: WARNING: {beyond}: skipped: a folder deeper than 32 levels",
            f"spoor triage: WARNING: {shut}: skipped: Permission denied"]))
        from test_report import Dom, Proxy, chromium, check_partials
        page = out / "index.html"
        dom_text, console = chromium(page, Proxy())
        self.assertEqual(console, [])
        from test_triage import page_data
        fields = dict(check_partials(Dom(dom_text).root, page_data(page), "walk"))
        self.assertEqual(len(fields["warnings"]), 2)

    def test_elf_warnings(self):
        bad = long_fde(Path(self.elf).read_bytes())
        badelfs = self.work / "badelfs"
        badelfs.mkdir()
        (badelfs / "crash-m3.elf").write_bytes(bad)
        readelf = subprocess.run(["arm-none-eabi-readelf", "--debug-dump=frames",
                                  str(badelfs / "crash-m3.elf")], capture_output=True, text=True)
        self.assertIn("arning", readelf.stderr)  # the referee sees the damage
        r = triage("--elf-dir", badelfs, self.dumps)
        self.assertEqual(r.returncode, 0)
        self.assertIn(".debug_frame: call frame information unreadable", r.stderr)
        self.assertTrue(all(x.startswith("spoor triage: WARNING: ") for x in
                            r.stderr.splitlines()), r.stderr)

    def test_hand_edited_shards(self):
        head, first = self.shard.splitlines()[:2]
        b = json.loads(first)

        def bucket(**change):
            return json.dumps({**b, **change})

        big = 2 ** 53
        cases = [
            (first, "line 1: no shard line"),
            ('{"spoor_triage":2,"shards":["0123456789abcdef"]}\n' + first,
             "line 1: shard format version 2, this spoor reads version 1"),
            (head + "\n" + first.replace('"count":', '"count":1,"count":', 1),
             'line 2: the key "count" twice in one object'),
            (head + "\n" + bucket(count=big + 1, versions=[{**b["versions"][0], "count": big + 1}]),
             'line 2: "count": expected a count of 1 to 2^53'),
            (head + "\n" + bucket(count=big, versions=[{**b["versions"][0], "count": big}]) +
             '\n{"spoor_triage":1,"shards":["0123456789abcdef"]}\n' + first,
             f"line 4: bucket {b['bucket']}: counts add up to more than 2^53"),
            (head + "\n" + first + "\n" + first, f"bucket {b['bucket']} twice in one shard"),
        ]
        for i, (text, message) in enumerate(cases):
            f = self.work / f"edited{i}.jsonl"
            f.write_text(text + "\n")
            r = triage("--merge", f)
            self.assertEqual((r.returncode, r.stdout), (2, ""), message)
            self.assertTrue(r.stderr.startswith(f"spoor triage: {f}: {message}"), r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
