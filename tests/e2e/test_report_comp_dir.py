"""spoor report finds a source file that DWARF names relative to the unit's DW_AT_comp_dir.

A firmware built as make builds it (`gcc src/fw.c` from its project folder) has the relative
name `src/fw.c` in its line table and the project folder as DW_AT_comp_dir (readelf shows both).
A report made from another directory (here /), with no --source-dir, must show the text of the
line the program counter is on, read from COMP_DIR/src/fw.c, in its page's annex; the line
marked is the one addr2line gives (an absolute path: addr2line joins the name the same way).
Before, report tried the name from the current directory and --source-dir only."""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import require_tool  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SOURCE = """int scale(int x)
{
    return x * 7 + 1; /* the line the crash is on */
}

void _start(void)
{
    for (;;)
        scale(3);
}
"""


def annex(page):
    m = re.search(r'<script type="application/json" id="spoor-annex">(.*?)</script>',
                  page.read_text(), re.S)
    return json.loads(m.group(1))


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "fw.c").write_text(SOURCE)
        elf = project / "fw.elf"
        subprocess.run([require_tool("arm-none-eabi-gcc"), "-mcpu=cortex-m3", "-mthumb", "-g",
                        "-O0", "-nostdlib", "-Wl,-Ttext=0x1000", "src/fw.c", "-o", "fw.elf"],
                       cwd=project, check=True)
        info = subprocess.run([require_tool("arm-none-eabi-readelf"), "--debug-dump=info",
                               str(elf)], capture_output=True, text=True, check=True).stdout
        assert re.search(r"DW_AT_name\s*:.*\bsrc/fw\.c", info), "the name is no longer relative"
        assert str(project) in info, "DW_AT_comp_dir is not the project folder"
        nm = subprocess.run([require_tool("arm-none-eabi-nm"), str(elf)], capture_output=True,
                            text=True, check=True).stdout
        scale = next(int(l.split()[0], 16) & ~1 for l in nm.splitlines() if l.endswith(" scale"))
        pc = scale + 4
        a2l = subprocess.run([require_tool("arm-none-eabi-addr2line"), "-e", str(elf), hex(pc)],
                             capture_output=True, text=True, check=True).stdout.strip()
        file, line = a2l.rsplit(":", 1)
        line = int(line.split()[0])
        regs = Path(tmp) / "regs.json"
        regs.write_text(json.dumps({"pc": hex(pc), "lr": "0x1001", "sp": "0x20000ff0",
                                    "xpsr": "0x01000000"}))
        page = Path(tmp) / "page.html"
        subprocess.run([SPOOR, "report", "-e", str(elf), "--regs", str(regs), "-o", str(page)],
                       cwd="/", check=True)
        sources = annex(page)["sources"]
        print(f"addr2line: {a2l}; annex sources: {sources}")
        found = [s for s in sources if s.get("file") == "src/fw.c"]
        if not found or found[0].get("path") != str(project / "src" / "fw.c"):
            failures.append(f"src/fw.c not found through DW_AT_comp_dir: {sources}")
        elif file != found[0]["path"]:
            failures.append(f"addr2line names {file}, the page {found[0]['path']}")
        else:
            s = found[0]
            shown = s["lines"][line - s["first"]] if s["first"] <= line < s["first"] + len(
                s["lines"]) else None
            if shown != SOURCE.splitlines()[line - 1]:
                failures.append(f"line {line} shown as {shown!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
