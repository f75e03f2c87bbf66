"""spoor core: the ELF core it writes opens in gdb-multiarch as the input's target.

Crash examples (every scenario of test_crash_scenarios, on M0, M3, M4F, M33): the firmware's
own dump, `spoor core` of it, then gdb-multiarch FW.elf FW.core: its registers equal the
dump's (read from `spoor crash --json` of the dump, itself checked against QEMU by
test_crash_scenarios), its `bt` equals spoor's backtrace as far as gdb walks, and `spoor crash`
of the core (text and JSON) equals `spoor crash` of the dump byte for byte.

RTOS firmware (tests/e2e/fw/rtos_ctx_fw.c -DFW_STATES: RTX5, ThreadX, FreeRTOS, Zephyr shapes on
M0, M3, M4F, M33, every thread parked in its kernel's own state), stopped at fw_checkpoint in
QEMU: `spoor core --threads --gdb` of the live target. gdb-multiarch on the core: `info threads`
lists as many threads as `spoor crash --threads --gdb`; each thread's `bt` equals spoor's
backtrace of it as far as gdb walks (gdb stops at the thread's root or goes on into
"<signal handler called>"); each thread's registers equal those gdb shows through `spoor
gdbserver --threads` at the same stop (test_rtos_states checks that path against gdb's own
unwinding), the current thread's equal QEMU's own (FP registers too on M4F and M33); `spoor
crash --threads` of the core gives the same threads, states and backtraces.

A core of 300 MiB (a sparse segment added) reads as the core without it, in little memory.
A Zephyr coredump of the div0 dumps (M3, M4F): gdb shows its registers from `spoor core`'s
output, and `spoor crash` of the core equals `spoor crash` of the Zephyr dump.

Bad inputs and outputs: a truncated dump gives one line and exit 2 and writes nothing; an
output path in a missing folder gives one line and exit 2, and no file is left.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import test_crash_scenarios as scenarios  # noqa: E402
from harness import Qemu, fp_values, gdb_core, parse_backtraces, run_gdb, spoor  # noqa: E402
from test_crash_threads import through_gdbserver  # noqa: E402
from test_elf_core import FP  # noqa: E402
from test_rtos_states import CORES, RTOSES, THREADS, firmware_record  # noqa: E402
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, exit_status  # noqa: E402

SPOOR = harness.SPOOR
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
SIGNAL = "<signal handler called>"


def registers(text):
    """`info registers` output: name -> value (the core registers only)."""
    got = {}
    for line in text.splitlines():
        m = re.match(r"^(r\d+|sp|lr|pc|xpsr)\s+(0x[0-9a-f]+)", line)
        if m:
            got[m.group(1)] = int(m.group(2), 16)
    return got


def per_thread(text):
    """`thread apply all ...` output: {LWP: the chunk of that thread}."""
    chunks = {}
    for chunk in re.split(r"\n(?=Thread \d+ )", "\n" + text):
        m = re.match(r"Thread \d+ \(LWP (\d+)\)", chunk)
        if m:
            chunks[int(m.group(1))] = chunks.get(int(m.group(1)), "") + chunk
    return chunks


def same_walk(label, mine, gdb):
    """spoor's frames equal gdb's as far as both go (gdb's walk ends at its first "??"); a frame
    spoor leaves unnamed (a PC outside code: gdb names the nearest symbol, a variable) matches
    any name. At least one frame is compared."""
    gdb = [f for f in gdb if f != SIGNAL]
    if "??" in gdb:
        gdb = gdb[:gdb.index("??")]
    n = min(len(mine), len(gdb))
    same = all(a is None or a == b for a, b in zip(mine[:n], gdb[:n]))
    check(n >= 1 and same, f"{label}: spoor {mine} != gdb's bt {gdb}")
    return n


def functions(backtrace):
    return [f["function"] for f in backtrace if f["kind"] == "frame"]


def crash_example(core, scenario, work):
    label = f"crash {core} {scenario}"
    elf, _machine, dump, _out = scenarios.crash_and_collect(core, scenario, work)
    path = work / f"{core}-{scenario}.core"
    made = spoor("core", "-e", elf, dump, "-o", path)
    check(made.returncode == 0 and path.is_file(), f"{label}: spoor core: {made.stderr}")
    if made.returncode:
        return
    ref = spoor("crash", "--json", "-e", elf, dump)
    report = json.loads(ref.stdout)
    text = gdb_core(elf, path, ["info threads", "bt", "info registers"])
    check(text.count("LWP 1") >= 1 and "LWP 2" not in text, f"{label}: threads: {text[-600:]}")
    got = registers(text)
    want = {r: int(report["registers"][r], 16) for r in REGS}
    check(got == want, f"{label}: gdb's registers {got} != the dump's {want}")
    traces = parse_backtraces(text)
    methods = [f.get("method") for f in report["backtrace"]]
    if report["registers"]["pc"] == "0x00000000" and "scan" in methods:
        # the fault was taken while stacking: PC 0 is no state gdb unwinds from (it names the
        # code at 0 and walks on from there); spoor's frames after it come from a stack scan
        print(f"{label}: PC 0, spoor's frames from a stack scan: gdb's walk not compared")
    else:
        n = same_walk(label, functions(report["backtrace"]), traces[-1] if traces else [])
        print(f"{label}: gdb and spoor agree on {n} frames")
    for args in (["crash"], ["crash", "--json"]):
        a = spoor(*args, "-e", elf, dump)
        b = spoor(*args, "-e", elf, path)
        check((a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr.replace(
            str(path), str(dump))), f"{label}: {' '.join(args)} of the core differs from the "
              f"dump's:\n{b.stdout[-1500:]}{b.stderr}\n---\n{a.stdout[-1500:]}{a.stderr}")


def rtos_example(rtos, core, work):
    flags, machine, flash, ram, fpu = CORES[core]
    define = RTOSES[rtos][0]
    label = f"{rtos} {core}"
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram, work / f"core-{rtos}-{core}.elf",
                              [f"-D{define}", "-DFW_STATES"])
    path = work / f"{rtos}-{core}.core"
    qemu = Qemu(elf, machine, gdb=True).__enter__()
    try:
        firmware_record(elf, qemu.gdb_port, work)
        stop_parked(qemu.gdb_port)
        target = ["-e", elf, "--gdb", f"127.0.0.1:{qemu.gdb_port}"]
        live = spoor("crash", "--json", "--threads", *target)
        check(live.returncode == 0, f"{label}: spoor crash: {live.stderr}")
        made = spoor("core", "--threads", *target, "-o", path)
        check(made.returncode == 0, f"{label}: spoor core: {made.stderr}")
        served = through_gdbserver(elf, qemu.gdb_port,
                                   ["thread apply all info registers"])
        fp = ["info registers " + " ".join(FP)] if fpu else []
        cpu_text = run_gdb(elf, qemu.gdb_port, ["info registers", *fp, "detach"])
        cpu, cpu_fp = registers(cpu_text), fp_values(cpu_text)
    finally:
        qemu.close()
    if live.returncode or made.returncode:
        return
    report = json.loads(live.stdout)
    check(len(report["threads"]) == len(THREADS),
          f"{label}: spoor reads {len(report['threads'])} threads")
    check_threads_core(label, elf, path, report, served, cpu, cpu_fp if fpu else None)
    first = spoor("crash", "-e", elf, path).stdout.split("\n")[0]
    check(first == "reason: none recorded (a live target over GDB, saved by spoor core)",
          f"{label}: the core of a live target says {first!r}")


def check_threads_core(label, elf, path, report, served, cpu, cpu_fp=None):
    """gdb-multiarch on the core at path, written with --threads from an input whose `spoor
    crash --threads --json` is report: `info threads` lists report's threads, each thread's
    `bt` equals spoor's backtrace of it as far as gdb walks, its registers equal those gdb
    showed through `spoor gdbserver --threads` at the same stop (served: `thread apply all info
    registers`), the current thread's equal cpu (QEMU's own), and with cpu_fp its FP registers
    too; `spoor crash --threads` of the core gives report's threads, backtrace and fault
    (where its status came from included)."""
    threads = report["threads"]
    text = gdb_core(elf, path, ["info threads", "thread apply all bt",
                                "thread apply all info registers"])
    listed = re.findall(r"^\*?\s+\d+\s+LWP \d+", text, re.M)
    check(len(listed) == len(threads) > 1,
          f"{label}: gdb lists {len(listed)} threads, spoor {len(threads)}: {text[:1500]}")
    chunks = per_thread(text)
    via_server = list(per_thread_server(served).values())
    for i, t in enumerate(threads):
        name = t["name"]
        chunk = chunks.get(i + 1, "")
        traces = parse_backtraces(chunk)
        n = same_walk(f"{label}: {name}", functions(t["backtrace"]), traces[0] if traces else [])
        got = registers(chunk)
        want = registers(via_server[i]) if i < len(via_server) else {}
        check(got and got == want, f"{label}: {name}: the core's registers {got} != through "
              f"spoor gdbserver {want}")
        if t["current"]:
            check(got == cpu, f"{label}: {name}: the core's registers {got} != QEMU's {cpu}")
        print(f"{label}: {name}: {n} frames agree; registers equal")
    if cpu_fp is not None:  # the thread that ran: its FP registers (NT_ARM_VFP) are QEMU's
        got = fp_values(gdb_core(elf, path, ["info registers " + " ".join(FP)]))
        check(len(cpu_fp) == 33 and got == cpu_fp,
              f"{label}: the core's FP registers {got} != QEMU's {cpu_fp}")
    back = spoor("crash", "--json", "--threads", "-e", elf, path)
    check(back.returncode == 0, f"{label}: spoor crash of the core: {back.stderr}")
    if back.returncode == 0:
        again = json.loads(back.stdout)
        check(again["threads"] == threads and again["backtrace"] == report["backtrace"],
              f"{label}: spoor crash --threads of the core differs from its input's")
        check(again["fault"] == report["fault"], f"{label}: the core's fault {again['fault']} "
              f"!= its input's {report['fault']}")


def raw_inputs(work):
    """--regs/--mem inputs of the M3's div0 crash (its registers and fault status registers as
    `spoor crash --json` of its dump gives them, the dump's memory as --mem images), and the
    same with the fault status only in a --mem image of the System Control Space page: `spoor
    crash` of the core each writes says what `spoor crash` of the input says, where the fault
    status came from included ("registers file", "memory (System Control Space)", not "dump")."""
    elf, _machine = harness.example("crash", "m3")
    own = work / "m3-div0.bin"
    ref = json.loads(spoor("crash", "--json", "-e", elf, own).stdout)
    dump = scenarios.Dump(own.read_bytes())
    mem = []
    for i, (_, rtype, payload) in enumerate(dump.records):
        if rtype == 3:  # MEMORY: u32 address, u16 kind, u16 reserved, bytes
            image = work / f"raw-mem{i}.bin"
            image.write_bytes(payload[8:])
            mem += ["--mem", f"{struct.unpack_from('<I', payload, 0)[0]:#x}:{image}"]
    fault = ["cfsr", "hfsr", "dfsr", "mmfar", "bfar", "afsr"]
    regs = {k: v for k, v in ref["registers"].items() if v is not None}
    with_status = work / "raw-regs.json"
    with_status.write_text(json.dumps(regs))
    without = work / "raw-regs-nofault.json"
    without.write_text(json.dumps({k: v for k, v in regs.items() if k not in fault}))
    scs = work / "raw-scs.bin"
    scs.write_bytes(struct.pack("<6I", *(int(regs[k], 16) for k in fault)))
    for label, args, source in (
            ("--regs with the fault status", ["--regs", with_status, *mem], "registers file"),
            ("--mem of the System Control Space", ["--regs", without, *mem, "--mem",
                                                   f"0xe000ed28:{scs}"],
             "memory (System Control Space)")):
        path = work / "raw.core"
        made = spoor("core", "-e", elf, *args, "-o", path)
        check(made.returncode == 0, f"{label}: spoor core: {made.stderr}")
        for flags in (["--json"], []):
            want = spoor("crash", *flags, "-e", elf, *args)
            got = spoor("crash", *flags, "-e", elf, path)
            check(want.returncode == 0 and got.stdout == want.stdout,
                  f"{label}: spoor crash {flags} of the core:\n{got.stdout}{got.stderr}---\n"
                  f"{want.stdout}")
        status = json.loads(spoor("crash", "--json", "-e", elf, path).stdout)["fault"]
        check(status["status_from"] == source, f"{label}: status from {status['status_from']}")
        print(f"{label}: the core's report is the input's (status from: {source})")


def core_info(work, threads_core=None):
    """gdb/spoor.py's spoor-core-info in gdb-multiarch on cores spoor core wrote: MSP, PSP,
    CONTROL, EXC_RETURN and the fault status registers are those `spoor crash --json` gives for
    the dump (itself checked against QEMU by test_crash_scenarios), the convenience variables
    hold them, and a probe-rs dump's EXC_RETURN is unknown; on a --threads core each thread's
    LWP, TCB and name are spoor crash --threads's."""
    script = Path(__file__).resolve().parents[2] / "gdb" / "spoor.py"
    elf, _machine = harness.example("crash", "m3")
    ref = json.loads(spoor("crash", "--json", "-e", elf, work / "m3-div0.bin").stdout)["registers"]
    text = gdb_core(elf, work / "m3-div0.core",
                    ["spoor-core-info", "printf \"@@%#x %#x\\n\", $spoor_cfsr, $spoor_msp"],
                    source=script)
    r = ref
    want = (f"  msp {r['msp']}  psp {r['psp']}  control {r['control']}  exc_return "
            f"{r['exc_return']}")
    status = "  " + "  ".join(f"{n.upper()} {r[n]}" for n in
                              ("cfsr", "hfsr", "dfsr", "mmfar", "bfar", "afsr") if n in r)
    check(want in text.splitlines() and status in text.splitlines() and
          "  fault status from: dump" in text.splitlines() and
          f"@@{int(r['cfsr'], 16):#x} {int(r['msp'], 16):#x}" in text,
          f"spoor-core-info on the div0 core:\n{text}\nwanted\n{want}\n{status}")
    if threads_core:
        elf = threads_core.parent / "zephyr-m3.elf"
        report = json.loads(spoor("crash", "--json", "--threads", "-e", elf, threads_core).stdout)
        text = gdb_core(elf, threads_core, ["spoor-core-info"], source=script)
        rows = re.findall(r"^([* ]) (\d+)\s+(0x[0-9a-f]{8})  (\S+)", text, re.M)
        check(rows == [("*" if t["current"] else " ", str(i + 1), t["tcb"], t["name"])
                       for i, t in enumerate(report["threads"])],
              f"spoor-core-info's threads {rows} != spoor's {report['threads']}:\n{text}")
        print(f"spoor-core-info: {len(rows)} threads as spoor crash --threads names them")
    # a probe-rs dump of the same crash (MSP, PSP, CONTROL, no EXC_RETURN): unknown in the core
    from test_probers_coredump import generate, spec
    elf, _machine = harness.example("crash", "m3")
    probers = generate(spec("m3", scenarios.Dump((work / "m3-div0.bin").read_bytes()), work,
                            "info"), work / "m3-div0.coredump")
    made = spoor("core", "-e", elf, probers, "-o", work / "m3-div0-probers.core")
    check(made.returncode == 0, f"spoor core of the probe-rs dump: {made.stderr}")
    text = gdb_core(elf, work / "m3-div0-probers.core",
                    ["spoor-core-info", "p $spoor_exc_return"], source=script)
    want = (f"  msp {r['msp']}  psp {r['psp']}  control {r['control']}  exc_return unknown "
            "(not in the input)")
    check(want in text.splitlines() and "= void" in text,
          f"spoor-core-info on the probe-rs core:\n{text}\nwanted\n{want}")
    for args in (["crash"], ["crash", "--json"]):  # and spoor reads the core as the dump
        a = spoor(*args, "-e", elf, probers)
        b = spoor(*args, "-e", elf, work / "m3-div0-probers.core")
        check(a.returncode == 0 and a.stdout == b.stdout,
              f"probe-rs core: {' '.join(args)}:\n{b.stdout}{b.stderr}---\n{a.stdout}")
    bare = subprocess.run([harness.require_tool(harness.GDB), "-batch", "-nx", "-ex",
                           f"source {script}", "-ex", f"file {elf}", "-ex", "spoor-core-info"],
                          capture_output=True, text=True, timeout=60)
    check("spoor-core-info: no core file open" in bare.stderr, f"no core: {bare.stderr}")


def foreign_threads(core, work):
    """The Zephyr-shaped firmware (rtos_ctx_fw -DCTX_ZEPHYR, four threads that really switch)
    stopped at fw_checkpoint in QEMU, saved as another tool would: a Zephyr coredump whose
    _kernel is only in the threads-metadata block (as test_zephyr_coredump writes it), and a
    probe-rs .coredump with QEMU's registers (FP ones too on the M4F) and the RAM (as
    test_probers_coredump writes it). `spoor core --threads` of each: check_threads_core against
    spoor's reading of the same input, whose threads must be those of the live target."""
    import zephyr_coredump
    from test_crash_threads_freertos_zephyr import CORES as FZ_CORES, gdb_reference
    from test_probers_coredump import CORE_TYPE, generate
    flags, machine, flash, ram_origin, fpu = FZ_CORES[core]
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin,
                              work / f"zephyr-{core}.elf", extra=["-DCTX_ZEPHYR"])
    symbols = harness.symbol_addresses(elf)
    qemu, _saved = gdb_reference(elf, machine, ram_origin, "zephyr", core, work, symbols)
    try:
        stop_parked(qemu.gdb_port)
        live = spoor("crash", "--json", "--threads", "-e", elf, "--gdb",
                     f"127.0.0.1:{qemu.gdb_port}")
        served = through_gdbserver(elf, qemu.gdb_port, ["thread apply all info registers"])
        fp = ["info registers " + " ".join(FP)] if fpu else []
        cpu_text = run_gdb(elf, qemu.gdb_port, ["info registers", *fp, "detach"])
    finally:
        qemu.close()
    check(live.returncode == 0, f"zephyr {core}: spoor crash --gdb: {live.stderr}")
    if live.returncode:
        return
    ref = json.loads(live.stdout)
    cpu, cpu_fp = registers(cpu_text), fp_values(cpu_text)
    ram = (work / "ram.bin").read_bytes()
    k_addr, k_size = harness.symbol_addresses(elf)["_kernel"], 0
    nm = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True,
                        check=True).stdout
    k_size = next(int(line.split()[1], 16) for line in nm.splitlines()
                  if line.split()[-1] == "_kernel")
    k_at = k_addr - ram_origin
    regions = [(start, data) for start, data in
               [(ram_origin, ram[:k_at]), (k_addr + k_size, ram[k_at + k_size:])] if data]
    zephyr = work / f"zephyr-{core}.bin"
    zephyr.write_bytes(zephyr_coredump.binary(
        2, cpu, cpu["sp"], regions,
        extra=zephyr_coredump.threads_block(ram[k_at:k_at + k_size])))
    ram_file = work / "ram-all.bin"
    ram_file.write_bytes(ram)
    spec = [f"core_type {CORE_TYPE[core]}", f"fpu {1 if fpu else 0}",
            f"mem {ram_origin:#x} {ram_file}"]
    order = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
    spec += [f"reg {i} {cpu[r]:#x}" for i, r in enumerate(order)]
    if fpu:
        spec += [f"reg {64 + i} {cpu_fp[f's{i}']:#x}" for i in range(32)]
        spec += [f"reg 33 {cpu_fp['fpscr']:#x}"]
    probers = generate("\n".join(spec) + "\n", work / f"zephyr-{core}.coredump")
    for name, dump, fp_want in (("zephyr", zephyr, None), ("probe-rs", probers, cpu_fp)):
        label = f"{name} dump of the Zephyr-shaped firmware, {core}"
        mine = spoor("crash", "--json", "--threads", "-e", elf, dump)
        check(mine.returncode == 0, f"{label}: spoor crash: {mine.stderr}")
        if mine.returncode:
            continue
        report = json.loads(mine.stdout)
        check([(t["name"], t["tcb"], functions(t["backtrace"])) for t in report["threads"]] ==
              [(t["name"], t["tcb"], functions(t["backtrace"])) for t in ref["threads"]],
              f"{label}: spoor's threads of the dump differ from the live target's")
        path = work / f"{name}-{core}.core"
        made = spoor("core", "--threads", "-e", elf, dump, "-o", path)
        check(made.returncode == 0 and made.stdout.startswith(f"{path}: 4 threads"),
              f"{label}: spoor core: {made.stdout}{made.stderr}")
        if made.returncode == 0:
            check_threads_core(label, elf, path, report, served, cpu,
                               fp_want if fpu else None)


def per_thread_server(text):
    """`thread apply all` through spoor gdbserver: each thread's chunk, in gdb's order (the
    server's thread ids are 1..n in spoor's order)."""
    chunks = {}
    for chunk in re.split(r"\n(?=Thread \d+ )", "\n" + text):
        m = re.match(r"Thread (\d+) ", chunk)
        if m:
            chunks[int(m.group(1))] = chunks.get(int(m.group(1)), "") + chunk
    return dict(sorted(chunks.items()))


def bad_inputs(work):
    elf, _machine = harness.example("crash", "m3")
    dump = next(work.glob("m3-div0.bin"))
    cut = work / "cut.bin"
    cut.write_bytes(dump.read_bytes()[:40])
    out = work / "cut.core"
    r = spoor("core", "-e", elf, cut, "-o", out)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and not out.exists(),
          f"truncated dump: exit {r.returncode}, {r.stderr!r}, file left: {out.exists()}")
    missing = work / "no-such-folder" / "x.core"
    r = spoor("core", "-e", elf, dump, "-o", missing)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "cannot write" in r.stderr,
          f"bad output path: exit {r.returncode}, {r.stderr!r}")
    folder = work / "ro"
    folder.mkdir()
    target = folder / "x.core"
    target.write_bytes(b"old")
    os.chmod(folder, 0o500)
    try:
        r = spoor("core", "-e", elf, dump, "-o", target)
        if os.geteuid() != 0:
            check(r.returncode == 2 and target.read_bytes() == b"old" and
                  sorted(p.name for p in folder.iterdir()) == ["x.core"],
                  f"read-only folder: exit {r.returncode}, {r.stderr!r}, "
                  f"{sorted(p.name for p in folder.iterdir())}")
    finally:
        os.chmod(folder, 0o700)
    r = spoor("core", "-e", elf, dump)
    check(r.returncode == 2 and "-o" in r.stderr, f"no -o: {r.stderr!r}")
    # spoor's own notes damaged: one line, exit 2, as any damaged core
    core = work / "m3-div0.core"
    data = core.read_bytes()
    at = data.find(b"SPOOR\0\0\0")
    check(at > 0 and struct.unpack_from("<I", data, at - 4)[0] == 1, "no SPOOR state note")
    other = bytearray(data)
    struct.pack_into("<I", other, at + 8, 2)  # the state's version
    cut = bytearray(data)
    struct.pack_into("<I", cut, at - 8, 90)  # descsz: shorter than the state's words
    for name, blob, words in (("another version", other, "another version"),
                              ("state cut short", cut, "another version"),
                              ("file cut", data[:300], "ELF core: truncated")):
        bad = work / "bad.core"
        bad.write_bytes(bytes(blob))
        r = spoor("crash", "-e", elf, bad)
        check(r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and
              words in r.stderr, f"{name}: exit {r.returncode}, {r.stderr!r}")


def inflated(core, out, extra):
    """The core with one more PT_LOAD segment of `extra` bytes at 0x60000000 whose bytes are a
    hole of the file (sparse: nothing written), as gdb's gcore of a target with large RAM
    regions makes a core of hundreds of MiB."""
    data = core.read_bytes()
    phoff, = struct.unpack_from("<I", data, 28)
    phnum, = struct.unpack_from("<H", data, 44)
    body = data[phoff + 32 * phnum:]
    shift = 32
    headers = bytearray(data[:phoff])
    struct.pack_into("<H", headers, 44, phnum + 1)
    for i in range(phnum):
        ph = bytearray(data[phoff + 32 * i:phoff + 32 * (i + 1)])
        struct.pack_into("<I", ph, 4, struct.unpack_from("<I", ph, 4)[0] + shift)
        headers += ph
    end = (len(data) + shift + 4095) & ~4095
    headers += struct.pack("<8I", 1, end, 0x60000000, 0x60000000, extra, extra, 6, 4)
    with open(out, "wb") as f:
        f.write(bytes(headers) + body)
        f.truncate(end + extra)


def big_core(work):
    """An ELF core beyond the 256 MiB bound on files read whole is mapped, and read as the same
    core without the large segment is."""
    elf, _machine = harness.example("crash", "m3")
    big = work / "big.core"
    inflated(work / "m3-div0.core", big, 300 << 20)
    check(big.stat().st_size > 300 << 20 and big.stat().st_blocks * 512 < 1 << 20,
          f"the inflated core: {big.stat()}")
    want = spoor("crash", "--threads", "-e", elf, work / "m3-div0.core")
    got = spoor("crash", "--threads", "-e", elf, big)
    check(got.returncode == 0 and got.stdout == want.stdout,
          f"a core of 300 MiB: exit {got.returncode}, {got.stderr}{got.stdout[-800:]}")
    sized = spoor("crash", "--threads", "-e", elf, big, "--format", "elfcore")
    check(sized.returncode == 0 and sized.stdout == want.stdout, f"--format elfcore: "
          f"{sized.stderr}")
    # the file is mapped: the pages of the large segment are never read (a read of the whole
    # file would hold 300 MiB)
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True);"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    rss = subprocess.run([sys.executable, "-c", probe, SPOOR, "crash", "-e", str(elf), str(big)],
                         capture_output=True, text=True, timeout=120).stdout
    check(rss.strip().isdigit() and int(rss) < 200 << 10, f"spoor crash of the 300 MiB core "
          f"kept {rss.strip()} KiB")
    print(f"a 300 MiB core read as the small one; max RSS {rss.strip()} KiB")


def other_formats(work):
    """A Zephyr coredump (tests/e2e/zephyr_coredump.py writes Zephyr's layout, arch block
    version 3, CRC) of the crash examples' div0 dumps: `spoor core` of it opens in gdb with the
    Zephyr dump's registers, and `spoor crash` of the core equals `spoor crash` of the Zephyr
    dump."""
    import test_zephyr_coredump
    import zephyr_coredump
    for core in ("m3", "m4f"):
        label = f"zephyr {core} div0"
        elf, _machine = harness.example("crash", core)
        dump = scenarios.Dump((work / f"{core}-div0.bin").read_bytes())
        regs, regions = test_zephyr_coredump.regs_and_regions(dump)
        zephyr = work / f"{core}-div0.zephyr"
        zephyr.write_bytes(zephyr_coredump.binary(3, regs, dump.sp, regions, crc=True))
        path = work / f"{core}-div0-zephyr.core"
        made = spoor("core", "-e", elf, zephyr, "-o", path)
        check(made.returncode == 0, f"{label}: spoor core: {made.stderr}")
        want = spoor("crash", "--json", "-e", elf, zephyr)
        got = registers(gdb_core(elf, path, ["info registers"]))
        ref = {r: int(json.loads(want.stdout)["registers"][r], 16) for r in REGS}
        check(got == ref, f"{label}: gdb's registers {got} != the Zephyr dump's {ref}")
        for args in (["crash"], ["crash", "--json"]):
            a, b = spoor(*args, "-e", elf, zephyr), spoor(*args, "-e", elf, path)
            check(a.returncode == 0 and a.stdout == b.stdout,
                  f"{label}: {' '.join(args)} of the core differs:\n{b.stdout}{b.stderr}---\n"
                  f"{a.stdout}")


def main():
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        threads_core = None
        if not only or "foreign" in only:
            for core in ("m3", "m4f"):
                sub = work / f"foreign-{core}"
                sub.mkdir()
                foreign_threads(core, sub)
            threads_core = work / "foreign-m3" / "probe-rs-m3.core"
        if not only or "crash" in only:
            for core, scenario in scenarios.CASES:
                crash_example(core, scenario, work)
            bad_inputs(work)
            big_core(work)
            other_formats(work)
        if not only or "crash" in only or "raw" in only:
            if not (work / "m3-div0.core").exists():
                crash_example("m3", "div0", work)
            raw_inputs(work)
            core_info(work, threads_core)
        if not only or "rtos" in only:
            for rtos in RTOSES:
                for core in CORES:
                    sub = work / f"{rtos}-{core}"
                    sub.mkdir()
                    rtos_example(rtos, core, sub)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
