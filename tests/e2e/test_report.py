"""spoor report: the page of a crash, opened by headless Chromium with the network cut off.

Inputs, all real:
- the M3 crash example's `badptr` dump (QEMU);
- the example scheduler stopped at sched_checkpoint, saved by gdb-multiarch's spoor-snapshot
  (`--threads`);
- calls_trace_ts-m3's `fault` dump (QEMU with -icount): call records with times (SysTick);
- calls_trace_mtb-m33's `fault` dump, which holds both the MTB record (a virtual MTB made from
  QEMU's execution log, as test_crash_sections.py makes it) and the call recorder's ring: the
  last branches and the last calls;
- tests/e2e/fw/rtos_ctx_fw.c built for RTX5 and for FreeRTOS without pxEndOfStack (as
  test_crash_stacks.py builds it), stopped by gdb-multiarch at fw_checkpoint with every task
  parked, saved with spoor-snapshot and a RAM image (`--threads`): every thread's stack use,
  gamma's overflowed (and, without pxEndOfStack, of unknown size).

For each page:
1. The report in the page (script#spoor-crash, as the file holds it) is `spoor crash --json`'s
   document of the same input.
2. Chromium (`--dump-dom`) renders it: one backtrace row per entry of `spoor crash --json`'s
   backtrace (kind, pc, function, file:line, method), numbered as `spoor crash`'s text; every
   thread with its backtrace; every branch row, in order, with its addresses, kind, the
   instruction objdump finds at its source and destination, the function+offset nm gives and
   the file:line addr2line gives; every call-tree entry, in order, with its function, depth and
   caller, marked open exactly when no exit record of the same function and depth follows it
   (the open ones are the backtrace's functions), one timeline bar each (with times: each entry's
   time and duration, each bar placed and sized by them); every stack bar (main
   stack, each thread) with the JSON's low, high, size, used, peak, free_min, overflowed and
   nearly_full, its words and its bar widths; and for the RTOS pages the JSON's free_min is what
   the RTOS's own high-water function counts on the RAM image (test_crash_stacks.rtos_free).
   The source line marked for a frame is that line of the file in spoor's tree; the
   instruction marked for a caller's frame is, per objdump, the one that ends at the frame's
   return address.
3. The console has no message (no error, no exception), and no request leaves the page: Chromium
   runs with a proxy served by this test, which records every connection. A page that loads an
   image from the web must be seen by it (the detector works).
4. A screenshot of each page, 1280 wide and as high as the page, is kept in BUILD/test_report/.
   The page of docs/report.md's worked example is made as a user makes it: from a directory
   holding crash-m3.elf, crash.bin and the example's sources, with those relative names, so
   no path of the build machine shows (checked on the rendered text); its screenshot is
   BUILD/test_report/report.png, and SPOOR_DOCS_UPDATE=1 copies it to docs/report.png.
Then input errors: no -o, a --from-json file that is no JSON, a cut dump: one line, exit 2; and
a warning holding `</script>` and `<!--` (added to a real report, through --from-json) is shown
as text.
"""
import html.parser
import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from test_crash_sections import calls_mtb_dump  # noqa: E402
from test_crash_stacks import RAM, RTOSES, STACK_BYTES, TASKS, rtos_free  # noqa: E402
from test_docs import crash_dump, gdb_snapshot  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE = Path(os.environ["SPOOR_SOURCE_DIR"])
BUILD = Path(os.environ["SPOOR_BUILD_DIR"])
ARTIFACTS = BUILD / "test_report"


def spoor(*args, check=True, cwd=None):
    result = subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True, timeout=120,
                            cwd=cwd)
    if check and result.returncode != 0:
        raise AssertionError(f"spoor {' '.join(map(str, args))}: exit {result.returncode}\n"
                             f"{result.stderr}")
    return result


# ---------------------------------------------------------------- the network detector

# The browser's own services (component updater, network time, sign-in), which Debian's
# Chromium calls whatever the flags say: not the page's requests.
BROWSER_OWN = re.compile(r"^(?:[\w-]+\.)*(?:google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$")


class Proxy:
    """A TCP server Chromium uses as its proxy: every connection that sends a request line is a
    request that left (those to the browser's own services are kept apart, in .browser); one
    closed before its first byte is a connection Chromium opened ahead and never used (seen on
    a loaded machine), counted in .preconnects."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests, self.browser, self.preconnects = [], [], 0
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
                if not line:  # closed before a byte: a preconnect the browser dropped unused
                    self.preconnects += 1
                    conn.close()
                    continue
                m = re.match(r"^\w+ (?:\w+://)?([^/:\s]+)", line)
                (self.browser if m and BROWSER_OWN.match(m.group(1)) else self.requests).append(line)
                conn.sendall(b"HTTP/1.1 503 No\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            conn.close()


def chromium(page, proxy, screenshot=None, height=2000):
    """(DOM as Chromium renders it, console lines) of a file opened with the network cut off;
    with screenshot, a PNG of the window (1280 x height) instead of the DOM."""
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
            flags += [f"--screenshot={screenshot}", f"--window-size=1280,{height}"]
        else:
            flags += ["--dump-dom", "--window-size=1280,800"]
        result = subprocess.run([browser, *flags, page.as_uri()], capture_output=True, text=True,
                                timeout=120)
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if result.returncode != 0:
        raise AssertionError(f"chromium exit {result.returncode}: {result.stderr[-2000:]}")
    return result.stdout, console


def page_height(page, proxy):
    """The height of the page as Chromium lays it out 1280 wide: a copy of it with a script at
    the end that writes document.documentElement.scrollHeight into the DOM."""
    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.documentElement.dataset.height = "
                   "document.documentElement.scrollHeight;</script></body>"))
    dom, _ = chromium(probe, proxy)
    probe.unlink()
    return int(re.search(r'<html[^>]* data-height="(\d+)"', dom).group(1))


def png_size(path):
    """(width, height) from a PNG's IHDR."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    return struct.unpack(">II", data[16:24])


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


def embedded(page, ident):
    """The JSON in script#ident as the page file holds it."""
    text = page.read_text()
    m = re.search(rf'<script type="application/json" id="{ident}">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def embedded_report(page):
    return embedded(page, "spoor-crash")


def embedded_annex(page):
    return embedded(page, "spoor-annex")


# ---------------------------------------------------------------- what is partial or unknown

# A member whose name says something is partial, cut, lost or unknown (threads_partial,
# threads_not_shown, threads_error, a thread's error, a stack's unreadable, branches_info's and
# calls_info's error, wrapped and empty_slots, a call record's after_gap, a frame's
# tailcalls_possible, a triage dump's error, ...): found by name, so that a new one cannot be
# left off the page unseen. A stack's overflowed is null when it is unknown.
PARTIAL = re.compile(r"partial|not_shown|error|unreadable|unknown|missing|lost|truncated|cut|"
                     r"wrapped|empty_slots|after_gap|possible|skipped|warnings")
NULL_IS_UNKNOWN = {"overflowed"}


def partial_fields(value, path=""):
    """(JSON path "threads.3.stack.unreadable", value) of every member of value that says
    something is partial or unknown (a value that is not null, false, 0 or empty; or null for
    NULL_IS_UNKNOWN)."""
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, v in items:
        at = f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and (PARTIAL.search(key) and v not in (None, False, 0, "", [], {})
                                     or key in NULL_IS_UNKNOWN and v is None):
            yield at, v
        yield from partial_fields(v, at)


def check_partials(dom, document, where):
    """Every partial field of the page's JSON document is said on the page: an element names it
    in data-partial and its text holds the value (a string, a number; each string of a list)."""
    marked = {}
    for node in dom.find_all():
        for at in (node.attrs.get("data-partial") or "").split():
            marked.setdefault(at, []).append(node)
    fields = list(partial_fields(document))
    for at, value in fields:
        nodes = marked.get(at)
        if not nodes:
            raise AssertionError(f"{where}: {at} = {value!r} is in the JSON, not on the page")
        texts = " ".join(n.text() for n in nodes)
        for want in (value if isinstance(value, list) else [value]):
            if isinstance(want, (str, int)) and not isinstance(want, bool) and \
                    str(want) not in texts:
                raise AssertionError(f"{where}: {at} = {want!r}: the page says {texts!r}")
    return fields


# ---------------------------------------------------------------- references

def objdump(elf):
    """{address: (mnemonic, operands, next address)} of the ELF's code, per objdump."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    insns = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{4} ?){1,2})\s+(\S+)\s*(.*)$", line)
        if m:
            addr = int(m.group(1), 16)
            size = 2 * len(m.group(2).split())
            insns[addr] = (m.group(3), m.group(4), addr + size)
    return insns


def functions(elf):
    """[(start, size, name)] of the ELF's functions, per nm."""
    out = subprocess.run([harness.require_tool(harness.NM), "-S", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW" and int(parts[1], 16):
            found.append((int(parts[0], 16) & ~1, int(parts[1], 16), parts[3]))
    return found


def function_offset(funcs, addr):
    """name+0xOFF of addr (name at the function's start), '' outside every function."""
    for start, size, name in funcs:
        if start <= addr < start + size:
            return name + (f"+{addr - start:#x}" if addr > start else "")
    return ""


def addr2line(elf, addrs):
    """{address: 'file:line'} per arm-none-eabi-addr2line ('' where it knows none)."""
    addrs = sorted(set(addrs))
    out = subprocess.run([harness.require_tool("arm-none-eabi-addr2line"), "-e", str(elf),
                          *[hex(a) for a in addrs]], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return {a: "" if line.startswith("??") else line.split(" (discriminator")[0]
            for a, line in zip(addrs, out)}


def mnemonic(text):
    """The mnemonic without the width suffix objdump and capstone spell differently."""
    return re.sub(r"\.[nw]$", "", text.split()[0])


def text_frame_numbers(text):
    """[(number, pc)] of spoor crash's text backtrace."""
    return [(int(m.group(1)), int(m.group(2), 16))
            for m in re.finditer(r"^  #(\d+)(?:-#\d+)? +0x([0-9a-f]{8}) ", text, re.M)]


def rtos_snapshot(rtos, work):
    """rtos_ctx_fw built for rtos (test_crash_stacks.RTOSES) on the M3, stopped at fw_checkpoint
    (every task parked): (ELF, the spoor-snapshot input with a RAM image up to __stack_top, each
    task's stack bounds from its TCB as gdb reads them, the RAM image)."""
    defines, low_expr, high_expr, _ = RTOSES[rtos]
    elf = build_test_firmware("rtos_ctx_fw", ["-mcpu=cortex-m3"], 0, RAM, work / f"{rtos}.elf",
                              extra=defines)
    top = harness.symbol_addresses(elf)["__stack_top"]
    snap = work / f"snap-{rtos}"
    commands = ["break fw_checkpoint", "continue"]
    for name in TASKS:
        t = f"{name}_tcb"
        commands.append(f'printf "@@{name} low %u\\n", {low_expr.format(t=t)}')
        if high_expr:
            commands.append(f'printf "@@{name} high %u\\n", {high_expr.format(t=t)}')
    # the snapshot's images hold the ELF's sections; this firmware's main stack lies past them
    commands += [f"source {SOURCE / 'gdb' / 'spoor.py'}", f"spoor-snapshot {snap}",
                 f"dump binary memory {snap / 'ram.bin'} {RAM:#x} {top:#x}", "disconnect"]
    with harness.Qemu(elf, "mps2-an385", gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, commands)
    bounds = {name: {} for name in TASKS}
    for name, key, value in re.findall(r"^@@(\w+) (\w+) (\d+)$", text, re.M):
        bounds[name][key] = int(value)
    if not (snap / "ram.bin").is_file() or not all(b.get("low") for b in bounds.values()):
        raise AssertionError(f"{rtos}: no snapshot:\n{text}")
    inp = ["--regs", snap / "regs.json", "--mem", f"{RAM:#x}:{snap / 'ram.bin'}"]
    return elf, inp, bounds, (snap / "ram.bin").read_bytes()


def percent(part, whole):
    """part of whole in whole percent, halves up (as JavaScript's Math.round)."""
    return math.floor(100 * part / whole + 0.5)


def width(node):
    """The width (percent) in a node's style."""
    return float(re.search(r"width: ([\d.e+-]+)%", node.attrs["style"]).group(1))


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
        both = cls.work / "both"
        both.mkdir()
        cls.both_elf, _, cls.both_dump, _, _, _ = calls_mtb_dump(both)
        # records with times: SysTick's count, which -icount ties to the instructions run
        cls.ts_elf, machine = harness.example("calls_trace_ts", "m3")
        cls.ts_dump = cls.work / "ts.dump"
        subprocess.run(harness.qemu_command(cls.ts_elf, machine, icount=0, semihosting_args=(
            f"arg=calls_trace,arg=fault,arg={cls.ts_dump}")), check=True, capture_output=True,
            timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def render(self, name, *args, cwd=None, artifact=None):
        """Writes the page, renders it, takes its screenshot (artifact: its file name in
        ARTIFACTS); (page path, parsed DOM)."""
        page = (cwd or self.work) / f"{name}.html"
        spoor("report", *args, "-o", page, cwd=cwd)
        shell = page_shell(page)
        for pattern in (r"\ssrc=", r"\shref=", r"url\(", r"@import", r"fetch\(", r"XMLHttpRequest",
                        r"https?://(?!www\.w3\.org/2000/svg\b)"):
            self.assertIsNone(re.search(pattern, shell, re.I), f"{name}: {pattern} in the page")
        dom_text, console = chromium(page, self.proxy)
        self.assertEqual(console, [], f"{name}: the console says something")
        self.assertEqual(self.proxy.requests, [], f"{name}: requests left the page")
        height = page_height(page, self.proxy)
        shot = ARTIFACTS / (artifact or f"{name}.png")
        chromium(page, self.proxy, screenshot=shot, height=min(height, 16000))
        self.assertEqual(png_size(shot), (1280, min(height, 16000)))
        dom = Dom(dom_text).root
        self.assertEqual(dom.find(tag="html").attrs.get("data-rendered"), "yes")
        check_partials(dom, embedded_report(page), name)
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

    def check_stack(self, node, s, where):
        """The stack bar in node shows the JSON's stack object s (null: no bar)."""
        bars = [b for b in node.find_all("stack") if b.tag == "div"]
        if s is None:
            self.assertEqual(bars, [], where)
            return
        self.assertEqual(len(bars), 1, where)
        st = bars[0]
        for key in ("low", "high", "size", "used", "peak", "free_min"):
            self.assertEqual(st.attrs[f"data-{key.replace('_', '-')}"],
                             "" if s[key] is None else str(s[key]), f"{where} {key}")
        for key in ("overflowed", "nearly_full"):
            self.assertEqual(st.attrs[f"data-{key.replace('_', '-')}"],
                             "true" if s[key] else "false", f"{where} {key}")
        words = st.find("words").text()
        size, used, peak = s["size"], s["used"], s["peak"]
        if used is not None:
            self.assertIn(f"used {used} of {size} bytes ({percent(used, size)}%)"
                          if size else f"used {used} bytes", words, where)
        elif size:
            self.assertIn(f"{size} bytes, use unknown", words, where)
        if peak is not None:
            self.assertIn(f"peak {peak} ({percent(peak, size)}%)" if size else f"peak {peak}",
                          words, where)
        if s["free_min"] is not None:
            self.assertIn(f"{s['free_min']} never written", words, where)
        self.assertIn(f"{s['low']}\u2013{s['high']}" if s["high"] else
                      f"from {s['low']}, size unknown", words, where)
        badges = [b.text() for b in st.find_all("badge")]
        self.assertEqual("overflowed" in badges, s["overflowed"], where)
        self.assertEqual("nearly full" in badges, s["nearly_full"] and not s["overflowed"], where)
        self.assertIn(f"({s['from']})", st.text(), where)
        bar = st.find("bar")
        if not size:
            self.assertIsNone(bar, where)
            return
        for part, value in (("used", used), ("peak", peak)):
            div = bar.find(part)
            if value is None:
                self.assertIsNone(div, f"{where} {part}")
            else:
                self.assertAlmostEqual(width(div), min(100, 100 * value / size), places=4,
                                       msg=f"{where} {part}")

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

    def test_branches_and_calls_page(self):
        """A real dump with the MTB record and the call ring: every branch row, every call."""
        args = ["-e", self.both_elf, self.both_dump]
        report = json.loads(spoor("crash", *args, "--json").stdout)
        page, dom = self.render("branches_calls", *args, "--source-dir", SOURCE)
        self.assertEqual(embedded_report(page), report)
        self.check_backtrace(list(dom.by_id("backtrace").find_all("bt-row")), report["backtrace"],
                             self.both_elf, "backtrace")
        # the branches: the JSON's, in order; the code at each end per objdump, nm, addr2line
        branches, info = report["branches"], report["branches_info"]
        self.assertEqual(len(branches), 16)
        section = dom.by_id("branches")
        wrapped = ("the buffer wrapped, older branches were overwritten" if info["wrapped"]
                   else "not wrapped")
        self.assertIn(f"newest 16 of {info['total']} branches; from the dump's MTB record; "
                      f"oldest first; {wrapped}", section.find("trace-note").text())
        rows = list(section.find_all("branch"))
        self.assertEqual([(r.attrs["data-src"], r.attrs["data-dst"], r.attrs["data-kind"])
                          for r in rows], [(b["src"], b["dst"], b["kind"]) for b in branches])
        insns, funcs = objdump(self.both_elf), functions(self.both_elf)
        ends = [int(b[k], 16) & ~1 for b in branches for k in ("src", "dst")]
        lines = addr2line(self.both_elf, ends)
        in_elf = 0
        for i, (row, b) in enumerate(zip(rows, branches)):
            cells = [c for c in row.children if isinstance(c, Node) and c.tag == "td"]
            self.assertEqual(cells[0].text(), "last" if i == 15 else f"-{15 - i}")
            self.assertEqual(cells[1].text(), b["kind"].replace("_", " "))
            for cell, insn, key in ((cells[2], cells[3], "src"), (cells[4], cells[5], "dst")):
                at = f"branch {i} {key} {b[key]}"
                addr = int(b[key], 16) & ~1
                self.assertEqual(cell.find("a").text(), b[key], at)
                self.assertEqual(cell.find("sym").text(), function_offset(funcs, addr), at)
                if addr in insns:
                    self.assertEqual(cell.find("muted").text(), lines[addr], at)
                    self.assertEqual(mnemonic(insn.text()), mnemonic(insns[addr][0]), at)
                    in_elf += 1
                else:  # the bad pointer's target: a variable in RAM (addr2line names its line)
                    self.assertEqual((cell.find("muted").text(), insn.text()), ("", ""), at)
        self.assertGreaterEqual(in_elf, 30)
        self.assertEqual(branches[-1]["kind"], "exception_entry")
        self.assertIn("last", rows[-1].classes)
        # the calls: every enter record a tree entry, in order; open when no exit of the same
        # function at the same depth follows it
        calls, info = report["calls"], report["calls_info"]
        section = dom.by_id("calls")
        self.assertIn(f"newest {len(calls)} of {info['total']} records; oldest first; "
                      f"{'the ring wrapped' if info['wrapped'] else 'not wrapped'}",
                      section.find("trace-note").text())
        self.assertEqual(section.find("gap").text(),
                         f"{info['total'] - len(calls)} older records not shown")
        enters = [(i, c) for i, c in enumerate(calls) if c["kind"] == "enter"]
        tree = list(section.find_all("call"))
        self.assertEqual(len(tree), len(enters))
        open_names = []
        for node, (i, c) in zip(tree, enters):
            at = f"call record {i}"
            self.assertEqual((node.attrs["data-fn"], int(node.attrs["data-depth"]),
                              node.attrs["data-function"]), (c["fn"], c["depth"], c["function"]))
            self.assertEqual(node.find("fname").text(), c["function"], at)
            self.assertEqual(node.find("site").text(), f"from {c['caller']}", at)
            self.assertEqual(node.find("t").text(), f"#{i}", at)
            self.assertEqual(node.find("guide").text(), "\u2502 " * c["depth"], at)
            returned = any(x["kind"] == "exit" and x["fn"] == c["fn"] and x["depth"] == c["depth"]
                           for x in calls[i + 1:])
            self.assertEqual("open" in node.classes, not returned, at)
            if not returned:
                open_names.append(c["function"])
        # the calls still open at the fault are the functions the backtrace walks through
        walked = [f["function"] for f in report["backtrace"] if f["kind"] == "frame"]
        self.assertEqual(open_names, ["DEMO_Run", "decide"])
        self.assertTrue(set(open_names) <= set(walked), walked)
        rects = [r for r in section.find(tag="svg").find_all(tag="rect")]
        self.assertEqual([r.find(tag="title").text().split()[0] for r in rects],
                         [c["function"] for _, c in enters])
        self.check_stack(dom.by_id("summary"), report["main_stack"], "main stack")

    def test_timed_calls_page(self):
        """Call records with times (calls_trace_ts): each tree entry's time and duration, each
        timeline bar placed and sized by the JSON's times."""
        args = ["-e", self.ts_elf, self.ts_dump]
        report = json.loads(spoor("crash", *args, "--json").stdout)
        calls = report["calls"]
        self.assertGreater(len({c["time"] for c in calls}), 8, "times that move")
        page, dom = self.render("timed_calls", *args)
        self.assertEqual(embedded_report(page), report)
        section = dom.by_id("calls")
        enters = [(i, c) for i, c in enumerate(calls) if c["kind"] == "enter"]
        tree = list(section.find_all("call"))
        svg = section.find(tag="svg")
        rects = list(svg.find_all(tag="rect"))
        self.assertEqual((len(tree), len(rects)), (len(enters), len(enters)))
        t0, t1 = enters[0][1]["time"], max(calls[-1]["time"] + 1, enters[0][1]["time"] + 1)
        span = float(svg.attrs["width"]) - 8

        def x(t):
            return 4 + span * (t - t0) / (t1 - t0)
        for node, rect, (i, c) in zip(tree, rects, enters):
            at = f"call record {i}"
            self.assertEqual(node.find("t").text(), f"t={c['time']}", at)
            back = next((e for e in calls[i + 1:] if e["kind"] == "exit" and e["fn"] == c["fn"]
                         and e["depth"] == c["depth"]), None)
            if back:
                n = back["time"] - c["time"]
                self.assertEqual(node.find("dur").text(), f"{n} tick{'' if n == 1 else 's'}", at)
            else:
                self.assertEqual(node.find("dur").text(), "still running (no return recorded)")
            end = back["time"] if back else t1
            self.assertAlmostEqual(float(rect.attrs["x"]), x(c["time"]), places=3, msg=at)
            self.assertAlmostEqual(float(rect.attrs["width"]), max(2, x(end) - x(c["time"])),
                                   places=3, msg=at)
            self.assertEqual(float(rect.attrs["y"]), 18 * c["depth"] + 2, at)
        # a counter that does not move (every record at one time, as QEMU's DWT cycle counter
        # gives): drawn in record order, and said so
        for c in calls:
            c["time"] = 7
        still = self.work / "still.json"
        still.write_text(json.dumps(report))
        _, dom = self.render("still_calls", "-e", self.ts_elf, "--from-json", still)
        section = dom.by_id("calls")
        self.assertIn("every record has time 7: drawn in record order",
                      section.find(tag="h3").text())
        self.assertEqual([n.find("t").text() for n in section.find_all("call")],
                         [f"#{i}" for i, _ in enters])

    def test_stack_pages(self):
        """RTOS snapshots (--threads): every thread's stack bar against spoor crash --json, whose
        free_min is what the RTOS's own high-water function counts."""
        for rtos in ("rtx5", "freertos-noend"):
            with self.subTest(rtos=rtos):
                work = self.work / rtos
                work.mkdir()
                elf, inp, bounds, ram = rtos_snapshot(rtos, work)
                args = ["-e", elf, *inp, "--threads"]
                report = json.loads(spoor("crash", *args, "--json").stdout)
                threads = {t["name"]: t for t in report["threads"]}
                self.assertEqual(sorted(threads), sorted(TASKS))
                for name in TASKS:
                    low = bounds[name]["low"]
                    high = bounds[name].get("high", low + STACK_BYTES)
                    self.assertEqual(threads[name]["stack"]["free_min"],
                                     rtos_free(rtos, ram, low, high), f"{rtos} {name}")
                    self.assertEqual(threads[name]["stack"]["overflowed"], name == "gamma")
                page, dom = self.render(f"stacks-{rtos}", *args, "--source-dir", SOURCE)
                self.assertEqual(embedded_report(page), report)
                nodes = list(dom.by_id("threads").find_all("thread"))
                self.assertEqual([n.attrs["data-name"] for n in nodes],
                                 [t["name"] for t in report["threads"]])
                for node, t in zip(nodes, report["threads"]):
                    self.check_stack(node, t["stack"], f"{rtos} {t['name']}")
                    self.check_backtrace(list(node.find_all("bt-row")), t["backtrace"], elf,
                                         f"{rtos} {t['name']}")
                self.check_stack(dom.by_id("summary"), report["main_stack"], f"{rtos} main")
                self.assertIsNotNone(report["main_stack"]["peak"])
                if rtos == "freertos-noend":
                    self.assertIsNone(threads["gamma"]["stack"]["size"])

    def test_docs_page(self):
        """docs/report.md's page, made as a user makes it: relative names, no build paths."""
        d = self.work / "docs-page"
        d.mkdir()
        (d / "crash-m3.elf").symlink_to(self.crash_elf)
        shutil.copy(self.work / "badptr.bin", d / "crash.bin")
        for tree in ("examples", "target"):  # the sources, where DWARF's relative names lead
            (d / tree).symlink_to(SOURCE / tree)
        page, dom = self.render("crash", "-e", "crash-m3.elf", "crash.bin", cwd=d,
                                artifact="report.png")
        meta = dom.by_id("meta").text()
        self.assertEqual(meta, f"firmware crash-m3.elf  \u00b7  input crash.bin  \u00b7  "
                               f"spoor {embedded_annex(page)['spoor']}")
        shown = "".join(n.text() for n in (dom.find(tag="header"), dom.by_id("report"),
                                            dom.by_id("footer")))
        for machine in (str(SOURCE), str(BUILD), str(self.work), "/tmp/", "/work/", "/home/"):
            self.assertNotIn(machine, shown)
        paths = [n.text() for n in dom.find_all("path")]
        self.assertIn("examples/crash/crash.c", paths)
        if os.environ.get("SPOOR_DOCS_UPDATE"):
            shutil.copy(ARTIFACTS / "report.png", SOURCE / "docs" / "report.png")
        # the screenshot in docs/ is of this page as it renders now (a changed page changes its
        # height; the pixels depend on the fonts installed, the height far less)
        self.assertEqual(png_size(SOURCE / "docs" / "report.png"),
                         png_size(ARTIFACTS / "report.png"),
                         "docs/report.png is not this page's screenshot: SPOOR_DOCS_UPDATE=1 "
                         "ctest -R e2e/test_report makes it")

    def test_hostile_strings(self):
        """A warning holding </script> and <!--, added to a real report: shown as text."""
        report = json.loads(spoor("crash", "-e", self.crash_elf, self.work / "badptr.bin",
                                  "--json").stdout)
        hostile = "a </script><script>document.title='owned'</script> <!-- b & c > d"
        report["warnings"].append(hostile)
        saved = self.work / "fixture.json"
        saved.write_text(json.dumps(report))
        page, dom = self.render("hostile", "-e", self.crash_elf, "--from-json", saved,
                                "--source-dir", SOURCE)
        self.assertEqual(embedded_report(page), report)
        self.assertIn(hostile, [li.text() for li in dom.by_id("warnings").find_all(tag="li")])
        self.assertNotIn("owned", dom.find(tag="title").text())

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
