"""Every worked example in the docs is run: docs/*.md and README.md stay true.

A worked example is a fenced block with a `$ COMMAND` line that runs spoor (`spoor`, `./spoor`,
`/opt/spoor/bin/spoor`, `scripts/demo_crash.sh`); the lines after a command, up to the next
`$ ` line or the end of the block, are its output (stdout and stderr together). The test makes
the inputs the pages' recipes make (RECIPES, one function per page, in a temporary directory
that also holds every example ELF under its own name and, as the repository's root does, the
sources gdb and spoor show lines from), runs each block's commands with bash
there (with this build's spoor first on the PATH) and compares.

Rules, all explicit:
- PATHS: the paths the docs use, mapped to this build's.
- NORMALISE: the volatile parts of an output (a mktemp directory) replaced on both sides.
- An expected line `...` stands for any number of lines (the docs' "shortened").
- NOT_RUN: the blocks this test cannot run, each with the reason. A spoor block that is neither
  run nor listed fails the test, and so does a listed block that no longer exists.

`--help` blocks: every block that starts with `usage: spoor CMD` is compared with the real
`spoor CMD --help`.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPOOR = Path(os.environ["SPOOR_BIN"])
SOURCE = Path(os.environ["SPOOR_SOURCE_DIR"])
BUILD = Path(os.environ["SPOOR_BUILD_DIR"])
FIRMWARE = Path(os.environ["SPOOR_FIRMWARE_DIR"])
SHARED = Path(os.environ.get("SPOOR_SHARED_DIR", SOURCE.parent / "shared"))
EXAMPLES = FIRMWARE / "examples"
ITM_DATA = SHARED / "testdata" / "itm"

# The docs' paths -> this build's (applied to the command text, longest first).
PATHS = {
    "/opt/spoor/bin/spoor": "spoor",
    "build/demo/firmware/examples/": f"{EXAMPLES}/",
    "scripts/demo_crash.sh build/demo": f"{SOURCE}/scripts/demo_crash.sh {BUILD}",
    "source gdb/spoor.py": f"source {SOURCE}/gdb/spoor.py",
}

# Volatile parts of outputs: (pattern, replacement), applied to expected and actual lines.
NORMALISE = [
    (re.compile(r"/tmp/tmp\.\w+/"), "/tmp/TMPDIR/"),  # scripts/demo_crash.sh's mktemp -d
    # a flipped byte's CRCs: the dump holds stack words that differ from run to run
    (re.compile(r"bad CRC \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)"), "bad CRC (...)"),
]

SPOOR_COMMAND = re.compile(r"(?:^|[\s;|(&])(?:\./|/opt/spoor/bin/)?spoor\s|scripts/demo_crash\.sh")

# (page, the start of the block's first command) -> why this test does not run it.
NOT_RUN = {
    ("crash-capture.md", "spoor crash -e crash-m3.elf crash.bin"):
        "a dump from a firmware whose stack pointer was set to 0x7ffffff0: no example "
        "firmware does that",
    ("dump-format.md", "spoor crash -e crash-m4f.elf cut.bin"):
        "damaged copies of a dump the page's own firmware wrote; not an example firmware",
    ("integrating.md", "qemu-system-arm -M mps2-an385"):
        "needs `make install` into /opt/spoor and the page's sensor firmware; "
        "tests/e2e/test_install.py builds and runs both",
    ("integrating.md", "/opt/spoor/bin/spoor calls -e build/sensor.elf"):
        "needs `make install` into /opt/spoor and the page's sensor firmware; "
        "tests/e2e/test_install.py builds and runs both",
    ("memory.md", "qemu-system-arm -M mps2-an385"):
        "a live QEMU halted by gdb, with fixed ports; tests/e2e/test_crash_gdb.py runs it",
    ("top.md", "spoor vprobe --gdb 46001"): "live: thread CPU shares per interval vary",
    ("top.md", "spoor top -e freertos-m3.elf"):
        "test firmware (tests/e2e/fw/rtos_ctx_fw.c), not an example: "
        "tests/e2e/test_top_thread_entry.py builds it, runs this command and compares",
    ("vprobe.md", "spoor vprobe --gdb 0 -o sched.itm"):
        "live: how far the firmware runs before the stream is cut varies",
    ("vprobe.md", "spoor vprobe -q --gdb 0 -p 0 --swo-baud 115200"):
        "live: how far the firmware runs before the stream is cut varies",
    ("vprobe.md", "spoor vprobe --gdb 47021"): "live: the intervals' figures vary",
}


# ---------------------------------------------------------------- reading the docs

def fenced_blocks(path, with_indent=False):
    """(line number, lines) of every fenced block, its indentation removed (and the
    indentation, with_indent)."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```", lines[i])
        if not m:
            i += 1
            continue
        indent, start, body = len(m.group(1)), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        yield (start, body, indent) if with_indent else (start, body)


def commands(body, spans=None):
    """[(command, expected output lines)] of a block's `$ ` lines (`\\` continues a command);
    spans, when given, gets the (first, end) indexes into body of each output."""
    out = []
    i = 0
    while i < len(body):
        if not body[i].startswith("$ "):
            i += 1
            continue
        command = body[i][2:]
        while command.endswith("\\") and i + 1 < len(body):
            i += 1
            command = command[:-1].rstrip() + " " + body[i].strip()
        i += 1
        expected = []
        out_start = i
        while i < len(body) and not body[i].startswith("$ "):
            expected.append(body[i])
            i += 1
        while expected and expected[-1] == "":
            expected.pop()
        if spans is not None:
            spans.append((out_start, out_start + len(expected)))
        out.append((command, expected))
    return out


def spoor_blocks():
    for path in sorted((SOURCE / "docs").glob("*.md")) + [SOURCE / "README.md"]:
        for line, body in fenced_blocks(path):
            cmds = commands(body)
            if any(SPOOR_COMMAND.search(" " + c) for c, _ in cmds):
                yield path.name, line, cmds


def help_blocks():
    for path in sorted((SOURCE / "docs").glob("*.md")) + [SOURCE / "README.md"]:
        for line, body in fenced_blocks(path):
            m = re.match(r"^usage: spoor (\w+)", body[0]) if body else None
            if m:
                yield path.name, line, m.group(1), body


# ---------------------------------------------------------------- comparing

def normalise(line):
    for pattern, replacement in NORMALISE:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def matches(expected, actual):
    """True when actual fits expected, whose `...` lines stand for any number of lines."""
    expected = [normalise(x) for x in expected]
    actual = [normalise(x) for x in actual]

    def fit(e, a):
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(fit(e + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and expected[e] == actual[a] and fit(e + 1, a + 1)
    return fit(0, 0)


def diff(expected, actual):
    import difflib
    return "\n".join(difflib.unified_diff(expected, actual, "docs", "real", lineterm="", n=2))


# ---------------------------------------------------------------- the recipes' inputs

def qemu_run(elf, machine, args, cwd, timeout=60):
    command = harness.qemu_command(elf, machine, semihosting_args=args)
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise harness.HarnessError(f"{' '.join(command)}: exit {result.returncode}: "
                                   f"{result.stdout}{result.stderr}")
    return result.stdout


def crash_dump(cpu, scenario, out):
    """The crash example's dump of one scenario (docs/crash.md, 'The crash firmware')."""
    elf, machine = harness.example("crash", cpu)
    qemu_run(elf, machine, f"arg=crash,arg={scenario},arg={out}", out.parent)
    if not out.is_file():
        raise harness.HarnessError(f"crash-{cpu} {scenario}: no dump written")


def gdb_snapshot(program, cpu, stops, directory, semihosting=None, scs=False, icount=None):
    """docs/crash.md's recipe: gdb-multiarch stopped at a breakpoint, then spoor-snapshot.
    icount: QEMU's clock in instructions (-icount), for a program whose stop depends on when its
    timer interrupts land (the scheduler)."""
    elf, machine = harness.example(program, cpu)
    with harness.Qemu(elf, machine, gdb=True, semihosting_args=semihosting,
                      icount=icount) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, [
            *stops, f"source {SOURCE}/gdb/spoor.py",
            f"spoor-snapshot {'--scs ' if scs else ''}{directory}", "disconnect"])
    if not (directory / "regs.json").is_file():
        raise harness.HarnessError(f"spoor-snapshot wrote nothing:\n{text}")


def dump_records(data):
    """(offset, type, payload) of a crash dump's records (docs/dump-format.md)."""
    offset = struct.unpack_from("<H", data, 6)[0]
    records = []
    while offset + 8 <= len(data):
        rtype, _, length = struct.unpack_from("<HHI", data, offset)
        records.append((offset, rtype, data[offset + 8:offset + 8 + length]))
        if rtype == 0:
            break
        offset += 8 + ((length + 3) & ~3)
    return records


def crc_fixed(data):
    data = bytearray(data)
    struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[:12] + data[16:])))
    return bytes(data)


def recipe_crash(work):
    crash_dump("m3", "busfault", work / "busfault.bin")
    data = (work / "busfault.bin").read_bytes()
    records = dump_records(data)
    flipped = bytearray(data)
    flipped[records[0][0] + 20] ^= 0x01  # a byte of the first record (the registers)
    (work / "flipped.bin").write_bytes(flipped)
    (work / "cut.bin").write_bytes(data[:len(data) // 2])
    v7 = bytearray(data)
    struct.pack_into("<H", v7, 4, 7)
    (work / "v7.bin").write_bytes(crc_fixed(v7))
    # the first memory record again, 8 bytes higher, before the end record
    at, _, payload = next(r for r in records if r[1] == 3)
    end_at = records[-1][0]
    record = bytearray(data[at:at + 8 + ((len(payload) + 3) & ~3)])
    struct.pack_into("<I", record, 8, struct.unpack_from("<I", payload, 0)[0] + 8)
    overlap = bytearray(data[:end_at] + record + data[end_at:])
    struct.pack_into("<I", overlap, 8, len(overlap))
    (work / "overlap.bin").write_bytes(crc_fixed(overlap))
    crash_dump("m33", "overflow", work / "overflow.bin")
    gdb_snapshot("crash", "m3", ["break *average", "continue"], work / "snap",
                 "arg=crash,arg=div0,arg=/dev/null")
    gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], work / "sched",
                 icount=5)
    # "Last branches and calls": the virtual MTB of a run of calls_trace_mtb-m33 (fault mode),
    # then the run again with its images in the fake MTB area: the dump holds both
    elf, machine = harness.example("calls_trace_mtb", "m33")
    command = harness.qemu_command(elf, machine,
                                   semihosting_args="arg=calls_trace,arg=fault,arg=first.dump")
    subprocess.run(command + ["-icount", "shift=0", "-singlestep", "-d", "exec,nochain,int",
                              "-D", str(work / "exec.log")],
                   cwd=work, check=True, capture_output=True, timeout=120)
    subprocess.run([sys.executable, str(SOURCE / "tools" / "virtual_mtb.py"), "--elf", str(elf),
                    "--log", str(work / "exec.log"), "--size", "1024", "--base", "0x38101000",
                    "--regs-out", "regs.bin", "--buffer-out", "buf.bin"],
                   cwd=work, check=True, timeout=120)
    (work / "exec.log").unlink()
    command = harness.qemu_command(elf, machine,
                                   semihosting_args="arg=calls_trace,arg=fault,arg=both.dump")
    subprocess.run(command + ["-device", "loader,file=regs.bin,addr=0x38100000,force-raw=on",
                              "-device", "loader,file=buf.bin,addr=0x38101000,force-raw=on"],
                   cwd=work, check=True, capture_output=True, timeout=120)


def recipe_memory(work):
    gdb_snapshot("crash", "m3", ["break *BusFault_Handler", "continue"], work / "snap",
                 "arg=crash,arg=busfault,arg=/dev/null", scs=True)


def recipe_gdbserver(work):
    recipe_mtb(work)  # loop.dump: the MTB's history in GDB
    gdb_snapshot("calls", "m3", ["break *tick_work", "continue"], work / "snap")
    gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], work / "sched",
                 icount=5)


def recipe_cli(work):
    subprocess.run(["arm-none-eabi-objcopy", "--strip-all", "calls-m3.elf", "stripped.elf"],
                   cwd=work, check=True)
    (work / "truncated.elf").write_bytes((work / "calls-m3.elf").read_bytes()[:4096])


def recipe_itm(work):
    for name in ("cmsis-ctrace-blinky/Blinky+Arm.SWO.raw", "cmsis-ctrace-blinky/Blinky+Arm.TB.raw",
                 "rust-itm/itm.bin"):
        (work / Path(name).name).symlink_to(ITM_DATA / name)


def recipe_calls(work):
    elf, machine = harness.example("calls_trace", "m3")
    qemu_run(elf, machine, f"arg=calls_trace,arg=plain,arg={work / 'ram.bin'}", work)
    qemu_run(elf, machine, f"arg=calls_trace,arg=fault,arg={work / 'fault.dump'}", work)


def recipe_mtb(work):
    """docs/mtb.md, 'Making the inputs': the virtual MTB of a run, then the run again with the
    images in RAM, whose fault handler writes the dump."""
    for cpu, name, scenario, area, buffer_at in (
            ("m33", "loop", "loop", 0x38100000, 0x38101000),
            ("m33", "badjump", "badjump", 0x38100000, 0x38101000),
            ("m33", "preempt", "preempt", 0x38100000, 0x38101000),
            ("m0", "m0", "loop", 0x20002000, 0x20002400)):
        elf, machine = harness.example("mtb", cpu)
        log = work / "exec.log"
        command = harness.qemu_command(elf, machine,
                                       semihosting_args=f"arg=mtb,arg={scenario},arg=first.dump")
        subprocess.run(command + ["-icount", "shift=0", "-singlestep", "-d",
                                  "exec,nochain,int", "-D", str(log)],
                       cwd=work, check=True, capture_output=True, timeout=120)
        subprocess.run([sys.executable, str(SOURCE / "tools" / "virtual_mtb.py"), "--elf",
                        str(elf), "--log", str(log), "--size", "1024", "--base",
                        hex(buffer_at), "--regs-out", "regs.bin", "--buffer-out", "buf.bin"],
                       cwd=work, check=True, timeout=120)
        log.unlink()
        if cpu == "m0":
            break  # the M0 block reads the images
        command = harness.qemu_command(elf, machine,
                                       semihosting_args=f"arg=mtb,arg={scenario},arg={name}.dump")
        subprocess.run(command + [
            "-device", f"loader,file=regs.bin,addr={area:#x},force-raw=on",
            "-device", f"loader,file=buf.bin,addr={buffer_at:#x},force-raw=on"],
            cwd=work, check=True, capture_output=True, timeout=120)


def recipe_triage(work):
    """docs/triage.md: fw/ with the crash example's ELFs, dumps/ with a few scenarios on three
    cores (one of them twice), a damaged copy, file times fixed a minute apart."""
    (work / "fw").mkdir()
    dumps = work / "dumps"
    dumps.mkdir()
    for cpu in ("m3", "m33", "m0"):
        shutil.copy(EXAMPLES / f"crash-{cpu}.elf", work / "fw")
    made = []
    for cpu, scenario, name in (("m3", "div0", "dev1-m3-div0.bin"),
                                ("m33", "div0", "dev2-m33-div0.bin"),
                                ("m3", "div0", "dev3-m3-div0.bin"),
                                ("m3", "assert", "dev4-m3-assert.bin"),
                                ("m0", "assert", "dev5-m0-assert.bin"),
                                ("m0", "undef", "dev6-m0-undef.bin")):
        crash_dump(cpu, scenario, dumps / name)
        made.append(dumps / name)
    data = made[0].read_bytes()
    (dumps / "dev7-cut.bin").write_bytes(data[:len(data) // 2])
    made.append(dumps / "dev7-cut.bin")
    for i, path in enumerate(made):
        os.utime(path, (1717200000 + 60 * i, 1717200000 + 60 * i))


def recipe_report(work):
    crash_dump("m3", "badptr", work / "crash.bin")


def recipe_core(work):
    """docs/core.md: the crash example's div0 dump on the M3; the scheduler's snapshot."""
    crash_dump("m3", "div0", work / "crash.bin")
    gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], work / "sched",
                 icount=5)


def recipe_dump_formats(work):
    """docs/dump-formats.md: the crash example's div0 fault on the M3 as a Zephyr coredump
    (tests/e2e/zephyr_coredump.py writes Zephyr's layout): a #CD: console log and a flash
    partition image; and as a probe-rs .coredump."""
    import test_crash_scenarios
    import test_zephyr_coredump
    import zephyr_coredump
    crash_dump("m3", "div0", work / "m3-div0.bin")
    dump = test_crash_scenarios.Dump((work / "m3-div0.bin").read_bytes())
    regs, regions = test_zephyr_coredump.regs_and_regions(dump)
    binary = zephyr_coredump.binary(3, regs, dump.sp, regions, crc=True)
    (work / "uart.log").write_bytes(zephyr_coredump.log(binary))
    (work / "partition.img").write_bytes(zephyr_coredump.flash_image(binary))
    # the same crash as probe-rs's .coredump (test_probers_coredump.py writes probe-rs's layout)
    import test_probers_coredump
    test_probers_coredump.generate(test_probers_coredump.spec("m3", dump, work, "doc"),
                                   work / "fw.coredump")


RECIPES = {
    "dump-formats.md": recipe_dump_formats,
    "core.md": recipe_core,
    "triage.md": recipe_triage,
    "crash.md": recipe_crash,
    "report.md": recipe_report,
    "memory.md": recipe_memory,
    "gdbserver.md": recipe_gdbserver,
    "cli.md": recipe_cli,
    "itm.md": recipe_itm,
    "calls.md": recipe_calls,
    "mtb.md": recipe_mtb,
}


# ---------------------------------------------------------------- running

def update_block(page, line, actuals):
    """SPOOR_DOCS_UPDATE=1: the block's outputs replaced by the real ones (blocks without
    `...` only: a shortened output is edited by hand)."""
    path = SOURCE / ("README.md" if page == "README.md" else f"docs/{page}")
    lines = path.read_text().splitlines()
    for start, body, indent in fenced_blocks(path, with_indent=True):
        if start != line:
            continue
        spans = []
        cmds = commands(body, spans)
        if any(x.strip() == "..." for _, expected in cmds for x in expected):
            return False
        for (first, end), actual in reversed(list(zip(spans, actuals))):
            lines[start + first:start + end] = [(" " * indent + x).rstrip() for x in actual]
        path.write_text("\n".join(lines) + "\n")
        return True
    return False


def run_block(work, cmds, env, actuals=None):
    """Runs the commands one by one. A command ending in `&` (a server) runs in the background
    once it printed its first line; its output is compared when the block's commands are done."""
    problems, results, background = [], [], []
    for command, expected in cmds:
        text = command
        for docs_path in sorted(PATHS, key=len, reverse=True):
            text = text.replace(docs_path, PATHS[docs_path])
        if text.endswith("&"):
            process = subprocess.Popen(["bash", "-c", f"exec 2>&1; exec {text[:-1]}"], cwd=work,
                                       env=env, stdout=subprocess.PIPE, text=True)
            first = process.stdout.readline()
            background.append((len(results), process, first))
            results.append(None)
            continue
        result = subprocess.run(["bash", "-c", f"exec 2>&1\n{text}"], cwd=work, env=env,
                                stdout=subprocess.PIPE, text=True, timeout=300)
        results.append(result.stdout)
    for index, process, first in background:
        # Not communicate(): it reads the pipe's descriptor, past what readline() above already
        # took into the file object's buffer (a server's second line, written at once after
        # the first, is often there).
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        results[index] = first + process.stdout.read()
        process.stdout.close()
    for (command, expected), output in zip(cmds, results):
        actual = output.splitlines()
        while actual and actual[-1] == "":
            actual.pop()
        if actuals is not None:
            actuals.append(actual)
        if not matches(expected, actual):
            problems.append(f"$ {command}\n{diff(expected, actual)}")
    return problems


def main():
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    bindir = root / "bin"
    bindir.mkdir()
    (bindir / "spoor").symlink_to(SPOOR)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", LC_ALL="C")
    workdirs = {}
    failed = ran = 0
    seen = set()
    for page, line, cmds in spoor_blocks():
        first = cmds[0][0]
        key = next((k for k in NOT_RUN if k[0] == page and first.startswith(k[1])), None)
        if key:
            seen.add(key)
            print(f"not run {page}:{line}: {NOT_RUN[key]}")
            continue
        if page not in workdirs:
            work = root / page
            work.mkdir()
            for elf in EXAMPLES.glob("*.elf"):
                (work / elf.name).symlink_to(elf)
            for tree in ("examples", "target"):  # the sources, as at the repository's root
                (work / tree).symlink_to(SOURCE / tree)
            try:
                if page in RECIPES:
                    RECIPES[page](work)
            except (harness.HarnessError, subprocess.SubprocessError, OSError) as e:
                print(f"FAIL {page}: the recipe's inputs: {e}")
                failed += 1
            workdirs[page] = work
        actuals = []
        problems = run_block(workdirs[page], cmds, env, actuals)
        ran += 1
        if problems and os.environ.get("SPOOR_DOCS_UPDATE") and update_block(page, line, actuals):
            print(f"updated {page}:{line}")
        for problem in problems:
            print(f"FAIL {page}:{line}\n{problem}\n")
        failed += bool(problems)
        if not problems:
            print(f"ok   {page}:{line}: {first[:70]}")
    for key in NOT_RUN:
        if key not in seen:
            print(f"FAIL NOT_RUN lists {key}, which is no block of the docs")
            failed += 1
    for page, line, command, body in help_blocks():
        real = subprocess.run([str(SPOOR), command, "--help"], capture_output=True,
                              text=True).stdout.splitlines()
        while real and real[-1] == "":
            real.pop()
        ran += 1
        if body != real:
            print(f"FAIL {page}:{line}: `spoor {command} --help` says otherwise\n"
                  f"{diff(body, real)}\n")
            failed += 1
        else:
            print(f"ok   {page}:{line}: spoor {command} --help")
    print(f"{ran} blocks run, {len(NOT_RUN)} not run (listed), {failed} failed")
    tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
