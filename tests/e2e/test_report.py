"""spoor report: the page of a crash, opened by headless Chromium with the network cut off.

Inputs, all real: the M3 crash example's `badptr` dump (QEMU), the example scheduler stopped at
sched_checkpoint and saved by gdb-multiarch's spoor-snapshot (`--threads`), and, for the
sections whose real data spoor crash --json does not give yet (the MTB's last branches, the
call recorder's last calls, stack use), that badptr report with them added by hand: branches
between real call instructions of the ELF (found with arm-none-eabi-objdump), the calls
`spoor calls --json` decodes from the calls_trace example's dump, stack figures made up, and a
warning that holds `</script>` and `<!--`, rendered with `spoor report --from-json`.

For each page:
1. The report in the page (script#spoor-crash, as the file holds it) is `spoor crash --json`'s
   document of the same input.
2. Chromium (`--dump-dom`) renders it: one backtrace row per entry of `spoor crash --json`'s
   backtrace (kind, pc, function, file:line, method), numbered as `spoor crash`'s text; every
   thread with its backtrace; every branch with the instruction objdump finds at its source;
   every call of the records in order with its depth; the stack bars. The source line marked for a
   frame is that line of the file in spoor's tree; the instruction marked for a caller's frame
   is, per objdump, the one that ends at the frame's return address.
3. The console has no message (no error, no exception), and no request leaves the page: Chromium
   runs with a proxy served by this test, which records every connection. A page that loads an
   image from the web must be seen by it (the detector works).
4. A screenshot (1280x2000) of each page is kept in BUILD/test_report/.
Then input errors: no -o, a --from-json file that is no JSON, a cut dump: one line, exit 2.
"""
import html.parser
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_docs import crash_dump, gdb_snapshot  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE = Path(os.environ["SPOOR_SOURCE_DIR"])
BUILD = Path(os.environ["SPOOR_BUILD_DIR"])
ARTIFACTS = BUILD / "test_report"


def spoor(*args, check=True):
    result = subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"spoor {' '.join(map(str, args))}: exit {result.returncode}\n"
                             f"{result.stderr}")
    return result


# ---------------------------------------------------------------- the network detector

# The browser's own services (component updater, network time, sign-in), which Debian's
# Chromium calls whatever the flags say: not the page's requests.
BROWSER_OWN = re.compile(r"^(?:[\w-]+\.)*(?:google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$")


class Proxy:
    """A TCP server Chromium uses as its proxy: every connection is a request that left (those
    to the browser's own services are kept apart, in .browser)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests, self.browser = [], []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            try:
                line = conn.recv(4096).split(b"\r\n")[0].decode(errors="replace")
                m = re.match(r"^\w+ (?:\w+://)?([^/:\s]+)", line)
                (self.browser if m and BROWSER_OWN.match(m.group(1)) else self.requests).append(line)
                conn.sendall(b"HTTP/1.1 503 No\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            conn.close()


def chromium(page, proxy, screenshot=None):
    """(DOM as Chromium renders it, console lines) of a file opened with the network cut off."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise AssertionError("chromium not installed (scripts/deps.sh installs it)")
    with tempfile.TemporaryDirectory() as profile:
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-default-apps", "--disable-extensions", f"--user-data-dir={profile}",
                 f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>",
                 "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000"]
        if screenshot:
            flags += [f"--screenshot={screenshot}", "--window-size=1280,2000"]
        else:
            flags += ["--dump-dom"]
        result = subprocess.run([browser, *flags, page.as_uri()], capture_output=True, text=True,
                                timeout=120)
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if result.returncode != 0:
        raise AssertionError(f"chromium exit {result.returncode}: {result.stderr[-2000:]}")
    return result.stdout, console


# ---------------------------------------------------------------- reading the DOM

class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, cls=None, tag=None):
        for c in self.children:
            if isinstance(c, Node):
                if (cls is None or cls in c.classes) and (tag is None or c.tag == tag):
                    yield c
                yield from c.find_all(cls, tag)

    def find(self, cls=None, tag=None):
        return next(self.find_all(cls, tag), None)

    def by_id(self, ident):
        return next((n for n in self.find_all() if n.attrs.get("id") == ident), None)


class Dom(html.parser.HTMLParser):
    VOID = {"meta", "link", "br", "img", "input", "hr", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("#root", {}, None)
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.at)
        self.at.children.append(node)
        if tag not in self.VOID:
            self.at = node

    def handle_endtag(self, tag):
        n = self.at
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.at = n.parent

    def handle_data(self, data):
        self.at.children.append(data)


def page_shell(page):
    """The page without its two JSON documents (the report's strings are data, not markup)."""
    return re.sub(r'(<script type="application/json" id="spoor-\w+">).*?</script>', r"\1</script>",
                  page.read_text(), flags=re.S)


def embedded_report(page):
    """The JSON in script#spoor-crash as the page file holds it."""
    text = page.read_text()
    m = re.search(r'<script type="application/json" id="spoor-crash">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


# ---------------------------------------------------------------- references

def objdump(elf):
    """{address: (mnemonic, operands, next address)} of the ELF's code, per objdump."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    insns = {}
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+((?:[0-9a-f]{4} ?){1,2})\s+(\S+)\s*(.*)$", line)
        if m:
            addr = int(m.group(1), 16)
            size = 2 * len(m.group(2).split())
            insns[addr] = (m.group(3), m.group(4), addr + size)
    return insns


def mnemonic(text):
    """The mnemonic without the width suffix objdump and capstone spell differently."""
    return re.sub(r"\.[nw]$", "", text.split()[0])


def text_frame_numbers(text):
    """[(number, pc)] of spoor crash's text backtrace."""
    return [(int(m.group(1)), int(m.group(2), 16))
            for m in re.finditer(r"^  #(\d+)(?:-#\d+)? +0x([0-9a-f]{8}) ", text, re.M)]


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-report-")
        cls.work = Path(cls.tmp.name)
        ARTIFACTS.mkdir(exist_ok=True)
        cls.proxy = Proxy()
        cls.crash_elf, _ = harness.example("crash", "m3")
        crash_dump("m3", "badptr", cls.work / "badptr.bin")
        cls.sched_elf, _ = harness.example("sched", "m3")
        gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], cls.work / "sched")
        cls.calls_elf, calls_machine = harness.example("calls_trace", "m3")
        subprocess.run(harness.qemu_command(cls.calls_elf, calls_machine, semihosting_args=(
            f"arg=calls_trace,arg=fault,arg={cls.work / 'fault.dump'}")), cwd=cls.work,
            check=True, capture_output=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def render(self, name, *args):
        """Writes the page, renders it; (page path, parsed DOM)."""
        page = self.work / f"{name}.html"
        spoor("report", *args, "-o", page)
        shell = page_shell(page)
        for pattern in (r"\ssrc=", r"\shref=", r"url\(", r"@import", r"fetch\(", r"XMLHttpRequest",
                        r"https?://(?!www\.w3\.org/2000/svg\b)"):
            self.assertIsNone(re.search(pattern, shell, re.I), f"{name}: {pattern} in the page")
        dom_text, console = chromium(page, self.proxy)
        self.assertEqual(console, [], f"{name}: the console says something")
        self.assertEqual(self.proxy.requests, [], f"{name}: requests left the page")
        chromium(page, self.proxy, screenshot=ARTIFACTS / f"{name}.png")
        self.assertTrue((ARTIFACTS / f"{name}.png").stat().st_size > 10000)
        dom = Dom(dom_text).root
        self.assertEqual(dom.find(tag="html").attrs.get("data-rendered"), "yes")
        return page, dom

    def check_backtrace(self, rows, frames, elf, where):
        """Every entry of a JSON backtrace is one row, in order, with its values."""
        self.assertEqual(len(rows), len(frames), where)
        insns = objdump(elf)
        for i, (row, f) in enumerate(zip(rows, frames)):
            at = f"{where} entry {i}"
            self.assertEqual(row.attrs["data-kind"], f["kind"], at)
            self.assertEqual(row.attrs["data-pc"], f["pc"], at)
            self.assertEqual(row.attrs["data-method"], f["method"], at)
            self.assertEqual(row.find("method").text(), f["method"], at)
            if f["kind"] == "exception":
                self.assertEqual(row.find("fn").text(),
                                 f"<exception {f['exception']}: {f['function']}>", at)
                continue
            self.assertEqual(row.find("fn").text(), f["function"] or "??", at)
            self.assertEqual(row.find("loc").text(),
                             f"{f['file']}:{f['line']}" if f["file"] else "", at)
            self.assertEqual(row.attrs["data-inlined"], "true" if f["inlined"] else "false", at)

    def check_views(self, section, frames, elf):
        """The source line and the instruction each frame's views mark."""
        insns = objdump(elf)
        views = list(section.find_all("bt-extra"))
        real = [f for f in frames if f["kind"] == "frame" and not f["inlined"]]
        self.assertGreater(len(views), 0)
        seen_source = seen_code = 0
        for det in views:
            row = det.parent.children[det.parent.children.index(det) - 1]
            while not isinstance(row, Node) or "bt-row" not in row.classes:
                row = det.parent.children[det.parent.children.index(row) - 1]
            pc = int(row.attrs["data-pc"], 16)
            hit = det.find("src")
            if hit is not None:
                line = int(row.attrs["data-line"])
                source = (SOURCE / row.attrs["data-file"]).read_text().splitlines()
                marked = hit.find("hit")
                self.assertEqual(marked.find("ln").text(), str(line))
                self.assertEqual(marked.text()[len(str(line)):], source[line - 1])
                seen_source += 1
            asm = det.find("asm")
            if asm is not None:
                marked = asm.find("hit")
                addr = int(marked.find("a").text(), 16)
                self.assertIn(addr, insns, f"no instruction at {addr:#x} per objdump")
                insn_text = marked.text()[len(marked.find("a").text()):]
                self.assertEqual(mnemonic(insn_text), mnemonic(insns[addr][0]), f"{addr:#x}")
                if row.attrs["data-method"] in ("registers", "exception"):
                    self.assertEqual(addr, pc)
                else:  # a caller: its call, which ends at the return address
                    self.assertEqual(insns[addr][2], pc, f"the call before {pc:#x}")
                    self.assertIn(mnemonic(insn_text), ("bl", "blx"))
                seen_code += 1
        self.assertGreaterEqual(seen_source, len(real) - 1)  # all but ?? (no line)
        self.assertGreaterEqual(seen_code, len(real) - 1)  # all but a PC in RAM

    def test_crash_page(self):
        args = ["-e", self.crash_elf, self.work / "badptr.bin"]
        report = json.loads(spoor("crash", *args, "--json").stdout)
        text = spoor("crash", *args).stdout
        page, dom = self.render("badptr", *args, "--source-dir", SOURCE)
        self.assertEqual(embedded_report(page), report)
        section = dom.by_id("backtrace")
        rows = list(section.find_all("bt-row"))
        self.check_backtrace(rows, report["backtrace"], self.crash_elf, "backtrace")
        numbered = [(int(r.find("num").text()[1:]), int(r.attrs["data-pc"], 16))
                    for r in rows if r.find("num").text()]
        self.assertEqual(numbered, text_frame_numbers(text))
        self.check_views(section, report["backtrace"], self.crash_elf)
        title = dom.by_id("title").text()
        self.assertIn(report["fault"]["type"], title)
        for bit in report["fault"]["bits"]:
            self.assertIn(bit["name"], title)
            self.assertIn(bit["meaning"], dom.by_id("summary").text())
        regs = {r.attrs["data-reg"]: r.find("v").text() for r in dom.by_id("registers").find_all("reg")}
        self.assertEqual(regs, {k: v or "unknown" for k, v in report["registers"].items()})
        self.assertIn(f"(stopped: {report['stop']})", section.text())

    def test_threads_page(self):
        snap = self.work / "sched"
        args = ["-e", self.sched_elf, "--regs", snap / "regs.json", "--mem",
                f"0x20000000:{snap / '0x20000000.bin'}", "--threads"]
        report = json.loads(spoor("crash", *args, "--json").stdout)
        page, dom = self.render("threads", *args, "--source-dir", SOURCE)
        self.assertEqual(embedded_report(page), report)
        threads = list(dom.by_id("threads").find_all("thread"))
        self.assertEqual(len(threads), len(report["threads"]))
        self.assertGreaterEqual(len(threads), 4)
        for node, t in zip(threads, report["threads"]):
            self.assertEqual(node.attrs["data-tcb"], t["tcb"])
            self.assertEqual(node.attrs["data-name"], t["name"])
            self.assertEqual(node.attrs["data-state"], t["state"])
            self.assertEqual("current" in node.classes, t["current"])
            self.check_backtrace(list(node.find_all("bt-row")), t["backtrace"], self.sched_elf,
                                 f"thread {t['name']}")

    def test_sections_from_json(self):
        """Branches, calls, stack use and a hostile string, added to a real report by hand."""
        report = json.loads(spoor("crash", "-e", self.crash_elf, self.work / "badptr.bin",
                                  "--json").stdout)
        insns = objdump(self.crash_elf)
        calls_at = [a for a, (m, _, _) in sorted(insns.items()) if mnemonic(m) == "bl"]
        branches = []
        for a in calls_at[:6]:
            target = int(re.match(r"([0-9a-f]+)", insns[a][1]).group(1), 16)
            branches.append({"src": f"{a:#010x}", "dst": f"{target:#010x}", "a": 0, "s": 0,
                             "kind": "branch"})
        calls = [json.loads(line) for line in spoor(
            "calls", "-e", self.calls_elf, "--json", self.work / "fault.dump").stdout.splitlines()]
        self.assertGreater(len(calls), 4)
        hostile = "a </script><script>document.title='owned'</script> <!-- b & c > d"
        report.update(branches=branches, calls=calls, warnings=report["warnings"] + [hostile],
                      main_stack={"low": "0x20001800", "high": "0x20002000", "size": 2048,
                                  "used": 176, "peak": 1024, "free_min": 1024,
                                  "overflowed": False, "from": "painted"})
        saved = self.work / "fixture.json"
        saved.write_text(json.dumps(report))
        page, dom = self.render("sections", "-e", self.crash_elf, "--from-json", saved,
                                "--source-dir", SOURCE)
        self.assertEqual(embedded_report(page), report)
        self.assertIn(hostile, [li.text() for li in dom.by_id("warnings").find_all(tag="li")])
        self.assertNotIn("owned", dom.find(tag="title").text())
        rows = list(dom.by_id("branches").find_all("branch"))
        self.assertEqual([(r.attrs["data-src"], r.attrs["data-dst"]) for r in rows],
                         [(b["src"], b["dst"]) for b in branches])
        for r, b in zip(rows, branches):
            insn = r.find("insn").text()
            self.assertEqual(mnemonic(insn), "bl", b["src"])
            self.assertIn(f"{int(b['dst'], 16):x}", insn)
        tree = list(dom.by_id("calls").find_all("call"))
        enters = [c for c in calls if c["kind"] == "enter"]
        self.assertEqual([(n.attrs["data-fn"], int(n.attrs["data-depth"])) for n in tree],
                         [(c["fn"], c["depth"]) for c in enters])
        self.assertEqual([n.find("fname").text() for n in tree], [c["function"] for c in enters])
        self.assertIsNotNone(dom.by_id("calls").find(tag="svg"))
        stack = dom.by_id("summary").find("stack")
        self.assertIn("used 176 of 2048 bytes (9%)", stack.text())
        self.assertIn("width: 8.59375%", stack.find("used").attrs["style"])

    def test_detector_sees_a_request(self):
        page = self.work / "leaky.html"
        page.write_text('<!DOCTYPE html><img src="http://spoor.example/x.png">')
        proxy = Proxy()
        chromium(page, proxy)
        self.assertTrue(any("spoor.example" in r for r in proxy.requests), proxy.requests)

    def test_errors(self):
        dump = self.work / "badptr.bin"
        cut = self.work / "cut.bin"
        cut.write_bytes(dump.read_bytes()[:1000])
        notjson = self.work / "not.json"
        notjson.write_text('{"reason": "fault",')
        for args, message in (
                (["-e", self.crash_elf, dump], "spoor report: no page to write"),
                (["-e", self.crash_elf, "--from-json", notjson, "-o", self.work / "x.html"],
                 f"spoor report: {notjson}: not a spoor crash --json report: byte 19"),
                (["-e", self.crash_elf, cut, "-o", self.work / "x.html"],
                 "spoor report: dump: truncated at byte 1000"),
                (["-e", self.crash_elf, dump, "-o", self.work / "no" / "x.html"],
                 f"spoor report: {self.work / 'no' / 'x.html'}: No such file")):
            result = spoor("report", *args, check=False)
            self.assertEqual(result.returncode, 2, args)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
            self.assertTrue(result.stderr.startswith(message), result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
