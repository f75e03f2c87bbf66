"""What spoor prints of a dump's and an ELF's strings cannot forge a line, reach the terminal as
an escape sequence, make its JSON invalid or reorder a page; the files it reads and writes are
the ones it means.

Inputs are real, then edited the ways a damaged or hostile dump or ELF is:
- the M3 crash example's assert dump with its REASON record's file name and message replaced by
  bytes holding a newline with a forged "spoor crash:" line after it, ESC sequences, bytes that
  are not UTF-8 (0xFF 0xFE) and U+202E (RIGHT-TO-LEFT OVERRIDE); the record and the CRC are
  rewritten as docs/dump-format.md says;
- crash-m3.elf with the name scenario_div0 (its symbol and DWARF strings) and the file name
  crash.c replaced, byte for byte, by names of the same length holding ESC and a newline; the
  div0 dump symbolized with it by spoor crash and spoor sym;
- dumps copied under names holding a newline, ESC and a byte that is not UTF-8, triaged.
Checked: no ESC byte and no forged line reaches the text output (stdout, stderr); every JSON
output decodes as strict UTF-8 and parses with Python's json, the strings read back as the
dump holds them (a byte that is not UTF-8 as the code point of its value); spoor report's page
(headless Chromium) shows U+202E as "<U+202E>", never the character.

Files: --merge and --from-json of a FIFO, of /dev/zero and of a sparse file over 256 MiB fail
at once with one line (exit 2) instead of hanging or reading without end; report -o and triage
--html refuse to write through a symbolic link planted at the page's path, and a page path that
is a hard link of another file is replaced, not written through.
"""
import codecs
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_docs import crash_dump, crc_fixed, dump_records  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
FORGED_FILE = b"crash.c\nspoor crash: forged\x1b[31m"
FORGED_MESSAGE = b"msg \xff\xfe then \xe2\x80\xae reversed"


def run(*args, timeout=60):
    return subprocess.run([SPOOR, *map(os.fsencode, map(str, args))], capture_output=True,
                          timeout=timeout)


def with_reason(data, file, message):
    """The dump with its REASON record's file name and message replaced (docs/dump-format.md)."""
    out = bytearray(data[:16])
    for _, rtype, payload in dump_records(data):
        if rtype == 5:
            payload = payload[:12] + struct.pack("<HH", len(file), len(message)) + file + message
        if rtype == 0:
            break
        out += struct.pack("<HHI", rtype, 0, len(payload)) + payload
        out += b"\0" * (-len(payload) % 4)
    out += struct.pack("<HHI", 0, 0, 0)
    struct.pack_into("<I", out, 8, len(out))
    return crc_fixed(out)


def clean_text(test, raw, where):
    """stdout or stderr bytes of a text output: UTF-8, no ESC, no forged line."""
    text = raw.decode("utf-8")  # strict
    test.assertNotIn("\x1b", text, where)
    test.assertNotIn("\u202e", text, where)
    for line in text.splitlines():
        test.assertFalse(re.match(r"^(spoor \w+: )?forged", line), f"{where}: {line!r}")
    return text


def strict_json(test, raw, where):
    """A JSON output (one document or JSON Lines) read as Python reads it: strict UTF-8."""
    text = raw.decode("utf-8")
    test.assertNotIn("\u202e", text, f"{where}: U+202E raw in the JSON text")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    try:
        return [json.loads(ln) for ln in lines] if len(lines) > 1 else json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(ln) for ln in lines]


class HostileOutputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-hostile-")
        cls.work = Path(cls.tmp.name)
        cls.elf, _ = harness.example("crash", "m3")
        crash_dump("m3", "assert", cls.work / "assert.bin")
        crash_dump("m3", "div0", cls.work / "div0.bin")
        cls.forged = cls.work / "forged.bin"
        cls.forged.write_bytes(with_reason((cls.work / "assert.bin").read_bytes(), FORGED_FILE,
                                           FORGED_MESSAGE))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_reason_record(self):
        r = run("crash", "-e", self.elf, self.forged)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = clean_text(self, r.stdout, "crash text")
        self.assertIn("reason: assert failed at crash.c?spoor crash: forged?[31m:", text)
        clean_text(self, r.stderr, "crash stderr")
        r = run("crash", "-e", self.elf, self.forged, "--json")
        report = strict_json(self, r.stdout, "crash --json")
        self.assertEqual(report["assert"]["file"], FORGED_FILE.decode())
        self.assertEqual(report["assert"]["message"], "msg \u00ff\u00fe then \u202e reversed")

    def test_report_page_isolates_bidi(self):
        from test_report import Dom, Proxy, chromium
        page = self.work / "forged.html"
        r = run("report", "-e", self.elf, self.forged, "-o", page)
        self.assertEqual(r.returncode, 0, r.stderr)
        dom_text, console = chromium(page, Proxy())
        self.assertEqual(console, [])
        dom = Dom(dom_text).root
        self.assertNotIn("\u202e", dom.find(tag="body").text())
        self.assertIn("then <U+202E> reversed", dom.by_id("title").text())

    def test_elf_strings(self):
        data = (self.work / "div0.bin").read_bytes()
        self.assertTrue(data)
        elf = bytearray(Path(self.elf).read_bytes())
        for old, new in ((b"scenario_div0\0", b"s\x1b[2J\nforged!\0"),
                         (b"crash.c\0", b"c\x1b[1m\nX\0")):
            self.assertEqual(len(old), len(new))
            self.assertIn(old, elf)
            elf = bytearray(bytes(elf).replace(old, new))
        patched = self.work / "patched.elf"
        patched.write_bytes(elf)
        r = run("crash", "-e", patched, self.work / "div0.bin")
        text = clean_text(self, r.stdout, "crash text, patched ELF")
        clean_text(self, r.stderr, "crash stderr, patched ELF")
        self.assertIn("s?[2J?forged!", text)
        r = run("crash", "-e", patched, self.work / "div0.bin", "--json")
        report = strict_json(self, r.stdout, "crash --json, patched ELF")
        self.assertIn("s\x1b[2J\nforged!", [f["function"] for f in report["backtrace"]])
        addr = next(f["pc"] for f in report["backtrace"] if f["function"] == "s\x1b[2J\nforged!")
        r = run("sym", "-e", patched, addr)
        self.assertIn("s?[2J?forged!", clean_text(self, r.stdout, "sym text"))
        strict_json(self, run("sym", "-e", patched, "--json", addr).stdout, "sym --json")

    def test_triage_paths(self):
        dumps, elfs = self.work / "tdumps", self.work / "telfs"
        dumps.mkdir()
        elfs.mkdir()
        shutil.copy(self.elf, elfs / "crash-m3.elf")
        names = [b"x\nforged\x1b[2J.bin", b"\xff\xfe.bin", b"plain.bin"]
        for name in names:
            with open(os.path.join(os.fsencode(dumps), name), "wb") as f:
                f.write((self.work / "div0.bin").read_bytes())
        with open(os.path.join(os.fsencode(dumps), b"cut\n\x1b[1mforged.bin"), "wb") as f:
            f.write((self.work / "div0.bin").read_bytes()[:100])
        r = run("triage", "--elf-dir", elfs, dumps)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = clean_text(self, r.stdout, "triage text")
        self.assertIn("1 bucket from 3 dumps; 1 not signed", text)
        r = run("triage", "--elf-dir", elfs, "--json", "--per-dump", dumps)
        lines = strict_json(self, r.stdout, "triage --json")
        paths = sorted(ln["dump"] for ln in lines if "dump" in ln)
        # a byte that is not UTF-8 reads back as the code point of its value
        codecs.register_error("byte_value", lambda e: (
            "".join(chr(b) for b in e.object[e.start:e.end]), e.end))
        expect = sorted(os.path.join(os.fsencode(dumps), n).decode("utf-8", "byte_value")
                        for n in names + [b"cut\n\x1b[1mforged.bin"])
        self.assertEqual(paths, expect)

    def test_inputs_that_are_not_files(self):
        fifo = self.work / "fifo"
        os.mkfifo(fifo)
        big = self.work / "big.jsonl"
        with open(big, "wb") as f:
            f.truncate(300 << 20)  # sparse
        for args, message in (
                (["triage", "--merge", fifo], f"{fifo}: not a regular file (a FIFO)"),
                (["triage", "--merge", "/dev/zero"],
                 "/dev/zero: not a regular file (a character device)"),
                (["triage", "--merge", big], f"{big}: 314572800 bytes, larger than 256 MiB"),
                (["report", "-e", self.elf, "--from-json", fifo, "-o", self.work / "f.html"],
                 f"{fifo}: not a regular file (a FIFO)"),
                (["report", "-e", self.elf, "--from-json", "/dev/zero", "-o",
                  self.work / "f.html"], "/dev/zero: not a regular file (a character device)")):
            r = run(*args, timeout=20)
            err = r.stderr.decode()
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(message, err)

    def test_pages_not_written_through_links(self):
        victim = self.work / "victim.txt"
        out = self.work / "out"
        out.mkdir()
        victim.write_text("keep me")
        link = out / "page.html"
        link.symlink_to(victim)
        r = run("report", "-e", self.elf, self.work / "div0.bin", "-o", link)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode(), f"spoor report: {link}: not a regular file (a "
                                            "symbolic link): not written over\n")
        self.assertEqual(victim.read_text(), "keep me")
        # a hard link at the page's path: a new file takes its place
        link.unlink()
        os.link(victim, link)
        r = run("report", "-e", self.elf, self.work / "div0.bin", "-o", link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(victim.read_text(), "keep me")
        self.assertIn(b"spoor-crash", link.read_bytes())
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["page.html"])
        # triage --html OUT with OUT/index.html planted
        elfs = self.work / "lelfs"
        elfs.mkdir()
        shutil.copy(self.elf, elfs)
        html = self.work / "html"
        html.mkdir()
        (html / "index.html").symlink_to(victim)
        r = run("triage", "--elf-dir", elfs, "--html", html, self.work / "div0.bin")
        self.assertEqual(r.returncode, 2)
        self.assertIn("index.html: not a regular file (a symbolic link)", r.stderr.decode())
        self.assertEqual(victim.read_text(), "keep me")


if __name__ == "__main__":
    unittest.main(verbosity=2)
