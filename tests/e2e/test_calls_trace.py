"""spoor calls against QEMU's own record of every hook call.

The calls_trace example (examples/calls_trace) runs its demo program built with -finstrument-functions
on the M3 (mps2-an385), the M0 (microbit) and the M33 (mps2-an505): once plainly, once with
SysTick and a device interrupt firing inside instrumented calls, once wrapping the ring many
times, and once faulting (the ring then comes back in spoor's crash dump).

Ground truth: QEMU runs the firmware with -icount shift=0 -singlestep and logs the CPU state
(-d exec,nochain,cpu) at a few instructions only (-dfilter): the first instruction of each hook
(r0 = this_fn, r1 = call_site, IPSR from XPSR) and the instructions that claim the ring slot
(found with arm-none-eabi-objdump): the STREX and the instruction after it, which shows whether
the STREX succeeded, or on Armv6-M the first instruction after CPSID. An interrupt may arrive
between a hook's entry and its claim; its hooks then claim first. So the entry is kept per
exception level (one hook in flight per level) and lands in the sequence where its successful
STREX ran. With -icount a block can be logged and then left unexecuted (its instruction budget
ran out) and logged again when it runs; an exception taken in between clears the exclusive
monitor, so the STREX after it fails and only the repeat counts.

Checked: the records `spoor calls --json` prints are exactly the newest part of that sequence;
when the ring wrapped they are at least 90 % of its capacity (the ring's size from nm -S, 8
bytes a record); function and caller names agree with arm-none-eabi-nm; the depth agrees with
the nesting the log implies; records that ran in an exception handler (IPSR != 0) and only those
are shown in a handler context; the text output of the plain run is spoor calls' text format, rebuilt
here from the log and nm.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

CORES = ["m3", "m0", "m33"]
OBJDUMP = "arm-none-eabi-objdump"
RECORD_SIZE = 8
EXC_RETURN_MIN = 0xF0000000

_TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
_REG = re.compile(r"R(\d\d)=([0-9a-f]{8})")
_XPSR = re.compile(r"XPSR=([0-9a-f]{8})")


def spoor():
    return os.environ["SPOOR_BIN"]


def symbols_with_sizes(elf):
    """name -> (address without Thumb bit, size) from nm -S."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-nm"), "-S", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            table[parts[3]] = (int(parts[0], 16) & ~1, int(parts[1], 16))
    return table


def functions(elf):
    """Sorted (start, end, name) of the function symbols (nm -S, types T/t)."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-nm"), "-S", "--defined-only",
                          str(elf)], check=True, capture_output=True, text=True).stdout
    funcs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "Tt":
            start = int(parts[0], 16) & ~1
            funcs.append((start, start + int(parts[1], 16), parts[3]))
    return sorted(funcs)


def containing(funcs, addr):
    for start, end, name in funcs:
        if start <= addr < end:
            return name, addr - start
    return None, 0


def disassembly(elf, function):
    """[(address, mnemonic, operands)] of one function (arm-none-eabi-objdump)."""
    out = subprocess.run([harness.require_tool(OBJDUMP), "-d", str(elf),
                          f"--disassemble={function}"], check=True, capture_output=True,
                         text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{4}\s?)+\s+(\S+)\s*([^@;]*)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return insns


def primask_claims(insns):
    """Armv6-M: the STR instructions on every path from a CPSID to the MSR that ends the
    section (conditional branches followed both ways, B to its target)."""
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    claims, seen = set(), set()
    todo = [i + 1 for i, (_, m, _) in enumerate(insns) if m == "cpsid"]
    while todo:
        i = todo.pop()
        while i < len(insns) and i not in seen:
            seen.add(i)
            address, mnemonic, operands = insns[i]
            if mnemonic == "msr" or mnemonic.startswith(("pop", "bx")):
                break
            if mnemonic == "str":
                claims.add(address)
            target = re.match(r"([0-9a-f]+)\b", operands)
            target = index.get(int(target.group(1), 16)) if target else None
            if re.fullmatch(r"b(\.n|\.w)?", mnemonic):
                if target is None:  # a tail call
                    break
                i = target
                continue
            if re.fullmatch(r"b(eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)(\.n|\.w)?",
                            mnemonic) and target is not None:
                todo.append(target)
            i += 1
    return sorted(claims)


def hook_points(elf, hook):
    """(entry, [(claim, confirm, status register), ...]) of one hook from its disassembly.

    ARMv7-M/v8-M: a slot is claimed by a STREX that succeeds (the hook has one for the straight
    path and one for the wrap); the instruction after it shows the STREX status in its register.
    ARMv6-M: the claim is the STR of the next slot's address between CPSID and MSR, where no
    interrupt can come (confirm and status None)."""
    insns = disassembly(elf, hook)
    claims = []
    for i, (address, mnemonic, operands) in enumerate(insns):
        if mnemonic == "strex":
            status = int(operands.split(",")[0].strip().lstrip("r"))
            claims.append((address, insns[i + 1][0], status))
    if not claims:
        claims = [(address, None, None) for address in primask_claims(insns)]
    assert claims, f"{hook}: no claim found in its disassembly"
    return insns[0][0], claims


def run_with_log(elf, machine, mode, out_file, log, extra=(), shift=0, points=None):
    """Runs the example under QEMU with the CPU log at the hooks' points (hook_points() of both
    hooks unless given) and at the addresses in extra; -icount shift=SHIFT (2**SHIFT ns a
    instruction)."""
    points = points or [hook_points(elf, h) for h in ("__cyg_profile_func_enter",
                                                        "__cyg_profile_func_exit")]
    addresses = [entry for entry, _ in points] + \
        [a for _, claims in points for c in claims for a in c[:2] if a is not None] + list(extra)
    dfilter = ",".join(f"0x{a:x}+2" for a in addresses)
    command = [harness.require_tool(harness.QEMU), "-M", machine, "-icount", f"shift={shift}",
               "-nographic", "-monitor", "none", "-serial", "none", "-semihosting-config",
               f"enable=on,target=native,arg=calls_trace,arg={mode},arg={out_file}",
               "-kernel", str(elf), "-singlestep", "-d", "exec,nochain,cpu", "-dfilter",
               dfilter, "-D", str(log)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return result, points


def ground_truth(log, points, stores=None, stats=None):
    """The hook calls in ring order: dicts kind, fn, site, ipsr. stores: {pc: (key, register)}
    of instructions that store a record's further words: the record last claimed at that
    exception level gets key = the register's value there. stats (a dict) gets the number of
    failed STREX claims ("failed"), of claims made while a hook of a lower level was between
    its entry and its claim ("nested") and every hook call, claimed or not ("entries")."""
    entries = {p[0]: ("enter", "exit")[i] for i, p in enumerate(points)}
    claims = {c[0] for _, cs in points for c in cs}
    confirms = {c[1]: c[2] for _, cs in points for c in cs if c[1] is not None}
    pending = {}    # IPSR -> the hook entry in flight at that level
    tentative = {}  # IPSR -> position in records where its STREX ran
    records = []
    claimed = {}  # IPSR -> the record last claimed at that level
    stores = stores or {}
    stats = stats if stats is not None else {}
    stats.update(failed=0, nested=0, entries=[])

    def claim(ipsr):
        if any(level < ipsr for level in pending if level != ipsr):
            stats["nested"] += 1
        claimed[ipsr] = pending.pop(ipsr)

    def flush(pc, regs, xpsr):
        ipsr = xpsr & 0x1FF
        if pc in stores and ipsr in claimed:
            key, reg = stores[pc]
            claimed[ipsr][key] = regs[reg]
        if pc in entries:
            site = regs[1] if regs[1] >= EXC_RETURN_MIN else regs[1] & ~1
            pending[ipsr] = {"kind": entries[pc], "fn": regs[0] & ~1, "site": site,
                             "ipsr": ipsr}
            stats["entries"].append(pending[ipsr])
        elif pc in claims and not confirms:  # Armv6-M: claimed, interrupts masked
            if ipsr in pending:
                claim(ipsr)
                records.append(claimed[ipsr])
        elif pc in claims:
            tentative[ipsr] = len(records)
        elif pc in confirms and ipsr in tentative and ipsr in pending:
            position = tentative.pop(ipsr)
            if regs[confirms[pc]] == 0:  # the STREX succeeded
                claim(ipsr)
                records.insert(position, claimed[ipsr])
            else:
                stats["failed"] += 1

    pc, regs, xpsr = None, {}, 0
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _TRACE.match(line)
            if m:
                if pc is not None:
                    flush(pc, regs, xpsr)
                pc, regs = int(m.group(1), 16), {}
                continue
            for n, v in _REG.findall(line):
                regs[int(n)] = int(v, 16)
            m = _XPSR.search(line)
            if m:
                xpsr = int(m.group(1), 16)
    if pc is not None:
        flush(pc, regs, xpsr)
    return records


def truth_depths(records):
    """Depth of each record in its context (thread, or one handler invocation) and the
    invocation it belongs to (0 = thread)."""
    stack = [[0, 0]]  # [invocation id, depth]
    next_id = 1
    out = []
    for r in records:
        if r["kind"] == "enter" and r["site"] >= EXC_RETURN_MIN:
            stack.append([next_id, 0])
            next_id += 1
        top = stack[-1]
        if r["kind"] == "enter":
            out.append((top[0], top[1]))
            top[1] += 1
        else:
            top[1] -= 1
            out.append((top[0], top[1]))
            if r["site"] >= EXC_RETURN_MIN and len(stack) > 1:
                stack.pop()
    return out


# The recorder with a claim that is not atomic, for the check that must then fail: on
# ARMv7-M/v8-M the LDREX/STREX pair becomes LDR/STR (with the STREX status 0), on ARMv6-M
# interrupts are unmasked right after CPSID. Each replacement must occur in the source.
NOT_ATOMIC = {
    "ldrex": [("ldrex r3, [r2, #16]", "ldr   r3, [r2, #16]"),
              ("strex r3, ip, [r2, #16]", "str   ip, [r2, #16]\\n    movs  r3, #0"),
              ("strex r1, r0, [r2, #16]", "str   r0, [r2, #16]\\n    movs  r1, #0")],
    "primask": [("cpsid i\\n", "cpsid i\\n    cpsie i\\n")],
}
# the most instructions an enter and an exit hook call may take (test_hook_cost)
HOOK_COST = {"m3": (10, 11), "m33": (10, 11), "m0": (12, 13)}
LIBRARY_CPU = {"m0": "m0plus", "m3": "m3", "m33": "m33"}
CPU_FLAGS = {"m0": "-mcpu=cortex-m0plus", "m3": "-mcpu=cortex-m3", "m33": "-mcpu=cortex-m33"}


def build_not_atomic(cpu, tmp):
    """calls_trace-<cpu> linked with the recorder of NOT_ATOMIC; returns (elf, hook points):
    the claims are the STRs of the next slot's address (ARMv7-M/v8-M: the two that replace the
    STREXes)."""
    source = Path(os.environ["SPOOR_SOURCE_DIR"])
    text = (source / "target/src/calls_recorder.c").read_text()
    for old, new in NOT_ATOMIC["primask" if cpu == "m0" else "ldrex"]:
        assert old in text, f"calls_recorder.c has no {old!r}: update NOT_ATOMIC"
        text = text.replace(old, new)
    recorder = Path(tmp) / "calls_recorder.c"
    recorder.write_text(text)
    machine = harness.machine_for(cpu)
    gcc = harness.require_tool("arm-none-eabi-gcc")
    flags = [CPU_FLAGS[cpu], "-mthumb", "-mfloat-abi=soft", "-std=gnu99", "-g", "-O1",
             "-ffunction-sections", "-fdata-sections", "-Wall", "-Wextra", "-Werror",
             f'-DSPOOR_EXAMPLE_CPU="{cpu}"', f'-DSPOOR_EXAMPLE_MACHINE="{machine}"',
             "-I", str(source / "examples/common"), "-I", str(source / "target/include"),
             "-I", str(source / "target/src")]
    objects = []
    for src, extra in ((source / "examples/calls_trace/calls_trace.c",
                        ["-finstrument-functions"]), (recorder, []),
                       (source / "examples/common/startup.c", []),
                       (source / "examples/common/semihost.c", [])):
        obj = Path(tmp) / (src.stem + ".o")
        subprocess.run([gcc, *flags, *extra, "-c", str(src), "-o", str(obj)], check=True,
                       capture_output=True, text=True)
        objects.append(str(obj))
    elf = Path(tmp) / f"calls_trace_not_atomic-{cpu}.elf"
    library = harness.firmware_dir() / f"libspoor_target_{LIBRARY_CPU[cpu]}.a"
    script = source / f"examples/ld/{machine}.ld"
    subprocess.run([gcc, CPU_FLAGS[cpu], "-mthumb", "-mfloat-abi=soft", "-nostartfiles",
                    "-L", str(source / "examples/ld"), "-T", str(script), "-Wl,--gc-sections", *objects, str(library), "-o", str(elf)], check=True,
                   capture_output=True, text=True)
    points = []
    for hook in ("__cyg_profile_func_enter", "__cyg_profile_func_exit"):
        insns = disassembly(elf, hook)
        if cpu == "m0":
            claims = primask_claims(insns)
        else:
            claims = [a for a, m, ops in insns if m in ("str", "str.w") and ops.endswith(
                "[r2, #16]")]
        assert len(claims) == 2, (hook, claims)
        points.append((insns[0][0], [(a, None, None) for a in claims]))
    return elf, points


class CallsTrace(unittest.TestCase):
    def run_mode(self, cpu, mode, tmp, dump=False, stats=None, build=None):
        elf, machine = harness.example("calls_trace", cpu)
        points = None
        if build:
            elf, points = build(cpu, tmp)
        out = Path(tmp) / f"{cpu}-{mode}.bin"
        log = Path(tmp) / f"{cpu}-{mode}.log"
        result, points = run_with_log(elf, machine, mode, out, log, points=points)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        truth = ground_truth(log, points, stats=stats)
        self.assertGreater(len(truth), 0)
        if dump:
            args = [str(out)]
        else:
            m = re.search(r"image (0x[0-9a-f]+) (\d+)", result.stdout + result.stderr)
            self.assertIsNotNone(m, result.stdout)
            args = ["--mem", f"{m.group(1)}:{out}"]
        return elf, truth, args

    def spoor_json(self, elf, args):
        p = subprocess.run([spoor(), "calls", "-e", str(elf), "--json"] + args,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines()]

    def check_against_truth(self, elf, truth, got, wrapped):
        funcs = functions(elf)
        capacity = symbols_with_sizes(elf)["call_ring"][1] // RECORD_SIZE
        if wrapped:
            self.assertGreater(len(truth), capacity)
            self.assertGreaterEqual(len(got), 0.9 * capacity)
        else:
            self.assertEqual(len(got), len(truth))
        tail = truth[len(truth) - len(got):]
        depths = truth_depths(truth)[len(truth) - len(got):]
        low = {}
        for inv, d in depths:
            low[inv] = min(low.get(inv, d), d)
        for i, (g, t) in enumerate(zip(got, tail)):
            where = f"record {i} of {len(got)}: {g} vs {t}"
            self.assertEqual(g["kind"], t["kind"], where)
            self.assertEqual(int(g["fn"], 16), t["fn"], where)
            self.assertEqual(int(g["site"], 16), t["site"], where)
            name, off = containing(funcs, t["fn"])
            self.assertEqual(g["function"], name if not off else f"{name}+0x{off:x}", where)
            if t["site"] < EXC_RETURN_MIN:
                name, off = containing(funcs, t["site"])
                self.assertEqual(g["caller"], f"{name}+0x{off:x}", where)
            else:
                self.assertTrue(g["caller"].startswith("<exception from"), where)
            self.assertEqual("handler" in g, t["ipsr"] != 0, where)
            inv, d = depths[i]
            self.assertEqual(g["depth"], d - low[inv], where)

    def test_plain_program(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf, truth, args = self.run_mode(cpu, "plain", tmp)
                got = self.spoor_json(elf, args)
                self.check_against_truth(elf, truth, got, wrapped=False)
                # spoor calls' text format, rebuilt from the log and nm
                funcs = functions(elf)
                expected = []
                for (inv, depth), t in zip(truth_depths(truth), truth):
                    fname, _ = containing(funcs, t["fn"])
                    sname, soff = containing(funcs, t["site"])
                    arrow = "->" if t["kind"] == "enter" else "<-"
                    brace = "{" if t["kind"] == "enter" else "}"
                    expected.append(f"{' ' * depth}{brace} {t['site']:08X}{arrow}{t['fn']:08X}"
                                    f"  {sname}:0x{soff:04X}{arrow}{fname}")
                p = subprocess.run([spoor(), "calls", "-e", str(elf)] + args,
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout.splitlines(), expected)
                names = [containing(funcs, t["fn"])[0] for t in truth if t["kind"] == "enter"]
                self.assertEqual(names[:6], ["DEMO_Init", "DEMO_Run", "decide", "calcValue",
                                             "getValue", "calcValue"])

    def test_interrupts_during_calls(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                stats = {}
                elf, truth, args = self.run_mode(cpu, "irq", tmp, stats=stats)
                capacity = symbols_with_sizes(elf)["call_ring"][1] // RECORD_SIZE
                got = self.spoor_json(elf, args)
                self.check_against_truth(elf, truth, got, wrapped=len(truth) > capacity)
                self.assertTrue(any("handler" in g for g in got))
                # hooks in handlers claimed while a thread hook was between its entry and its
                # claim; on ARMv7-M/v8-M interrupts also came between LDREX and STREX (the
                # STREX failed and the hook claimed again)
                self.assertGreater(stats["nested"], 0)
                if cpu != "m0":
                    self.assertGreater(stats["failed"], 0)

    def test_hook_cost(self):
        """Instructions each hook call executes (QEMU's exec log over the hooks, plain mode: no
        interrupts, no wrap) are at most HOOK_COST's (the hand-written hooks; the C hooks took
        23 on the M3 and M33, 24 on the M0, each)."""
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf, machine = harness.example("calls_trace", cpu)
                sizes = symbols_with_sizes(elf)
                hooks = [sizes[h] for h in ("__cyg_profile_func_enter",
                                            "__cyg_profile_func_exit")]
                log = Path(tmp) / "exec.log"
                command = harness.qemu_command(
                    elf, machine, semihosting_args="arg=calls_trace,arg=plain") + [
                    "-singlestep", "-d", "exec,nochain", "-D", str(log), "-dfilter",
                    ",".join(f"0x{a:x}+0x{n:x}" for a, n in hooks)]
                subprocess.run(command, capture_output=True, timeout=60, check=True)
                calls = [[], []]
                for line in log.read_text(errors="replace").splitlines():
                    m = _TRACE.match(line)
                    if m:
                        pc = int(m.group(1), 16)
                        kind = 0 if hooks[0][0] <= pc < sum(hooks[0]) else 1
                        if pc == hooks[kind][0]:
                            calls[kind].append(0)
                        calls[kind][-1] += 1
                self.assertGreaterEqual(min(len(calls[0]), len(calls[1])), 10)
                self.assertLessEqual((max(calls[0]), max(calls[1])), HOOK_COST[cpu])

    def test_check_fails_when_the_claim_is_not_atomic(self):
        """The irq run with a recorder whose claim is not atomic loses records: the check of
        test_interrupts_during_calls must see it."""
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                # without interrupts the variant records what the log shows (the claim points
                # are right) ...
                elf, truth, args = self.run_mode(cpu, "wrap", tmp, build=build_not_atomic)
                self.check_against_truth(elf, truth, self.spoor_json(elf, args), wrapped=True)
                # ... with them it does not
                elf, truth, args = self.run_mode(cpu, "irq", tmp, build=build_not_atomic)
                capacity = symbols_with_sizes(elf)["call_ring"][1] // RECORD_SIZE
                got = self.spoor_json(elf, args)
                with self.assertRaises(AssertionError) as caught:
                    self.check_against_truth(elf, truth, got, wrapped=len(truth) > capacity)
                self.assertRegex(str(caught.exception), r"record \d+ of \d+:")

    def test_paused_and_frozen(self):
        """Hooks called before init, while paused and after the freeze record nothing; the
        calls in between are recorded (the log shows every hook call)."""
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                stats = {}
                elf, truth, args = self.run_mode(cpu, "pause", tmp, stats=stats)
                funcs = functions(elf)
                called = [containing(funcs, e["fn"])[0] for e in stats["entries"]
                          if e["kind"] == "enter"]
                self.assertEqual(called.count("paused_work"), 4)
                got = self.spoor_json(elf, args)
                self.check_against_truth(elf, truth, got, wrapped=False)
                self.assertEqual([g["function"] for g in got if g["kind"] == "enter"],
                                 ["DEMO_Init", "DEMO_Run", "decide", "calcValue", "getValue",
                                  "calcValue"])
                self.assertEqual(len(got), 12)

    def test_wrapping_ring(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf, truth, args = self.run_mode(cpu, "wrap", tmp)
                capacity = symbols_with_sizes(elf)["call_ring"][1] // RECORD_SIZE
                self.assertGreater(len(truth), 5 * capacity)  # wrapped many times
                got = self.spoor_json(elf, args)
                self.check_against_truth(elf, truth, got, wrapped=True)
                p = subprocess.run([spoor(), "calls", "-e", str(elf)] + args,
                                   capture_output=True, text=True, timeout=60)
                self.assertTrue(p.stdout.startswith("--- ring wrapped"), p.stdout[:200])

    def test_crash_dump_after_fault(self):
        for cpu in CORES:
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf, truth, args = self.run_mode(cpu, "fault", tmp, dump=True)
                got = self.spoor_json(elf, args)
                self.check_against_truth(elf, truth, got, wrapped=False)
                # the newest record is the call into decide() that faulted
                funcs = functions(elf)
                self.assertEqual(got[-1]["kind"], "enter")
                self.assertEqual(containing(funcs, int(got[-1]["fn"], 16))[0], "decide")

    def test_live_target_over_gdb(self):
        """--gdb reads the same ring as the RAM image of the same deterministic run."""
        for cpu in ("m3", "m0"):
            with self.subTest(cpu=cpu), tempfile.TemporaryDirectory() as tmp:
                elf, truth, args = self.run_mode(cpu, "plain", tmp)
                from_image = self.spoor_json(elf, args)
                port = harness.free_port()
                command = harness.qemu_command(elf, harness.machine_for(cpu)) + [
                    "-gdb", f"tcp:127.0.0.1:{port}"]
                command[command.index("enable=on,target=native")] += \
                    ",arg=calls_trace,arg=hold"
                qemu = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                try:
                    live = None
                    deadline = time.monotonic() + 120  # until the port is up and the demo ran
                    while time.monotonic() < deadline:
                        time.sleep(0.2)
                        p = subprocess.run([spoor(), "calls", "-e", str(elf), "--json", "--gdb",
                                            f"127.0.0.1:{port}"], capture_output=True,
                                           text=True, timeout=60)
                        if p.returncode == 0:
                            live = [json.loads(line) for line in p.stdout.splitlines()]
                            if len(live) == len(from_image):
                                break
                    self.assertEqual(live, from_image)
                finally:
                    qemu.kill()
                    qemu.wait()


if __name__ == "__main__":
    unittest.main()
