"""Crash capture end to end: firmware faults in QEMU, resets, hands over its dump; spoor reads it.

For every scenario of examples/crash/crash.c (badptr, busfault, div0, undef, overflow, nested,
psp, assert) on the Cortex-M3, M33 and M4F (FP context live, so the frames are the extended
ones), and badptr on the Cortex-M0 (microbit):

1. QEMU runs crash-<core>.elf with `arg=crash,arg=SCENARIO,arg=DUMP`: the scenario faults,
   spoor's handler writes the dump to .noinit RAM and resets the core (SYSRESETREQ); after the
   reset the firmware writes the dump to DUMP through semihosting and exits 0.
2. The dump is read here with a small parser written from spoor/dump_format.h (not with
   spoor), and its raw fault registers are checked against the ARM ARM bit definitions for the
   scenario (CFSR.INVSTATE, PRECISERR with BFAR, DIVBYZERO, UNDEFINSTR, MSTKERR/STKOF, the
   EXC_RETURN of an extended frame on the M4F, the assert's file and line from the source).
3. `spoor crash --json` must name the same fault (type, bits, address, stack overflow).
4. The ground truth for the backtrace: the same firmware and scenario under QEMU's gdbstub,
   gdb-multiarch stopped at the instruction just before the fault (the faulting instruction
   itself; for badptr the BLX into the bad pointer; for assert the call of spoor_crash_fatal,
   whose address a software capture records as its PC) with the stack pointer the dump says
   the code had. The address comes from the dump's stacked PC/LR and the disassembly
   (arm-none-eabi-objdump), never from spoor's backtrace.
   spoor's frames after the faulting frame must equal gdb's `bt`, function by function, an
   exception row (`kind: exception`) where gdb says `<signal handler called>`. For overflow
   the innermost 8 frames (all the recursive function) are compared and the walk must end.
5. `spoor gdbserver` serving the dump, asked by gdb-multiarch for `bt`, gives the functions of
   `spoor crash` (a dump without a stacked frame only gives gdb frame 0: it has no PC).
6. Damaged copies of a dump (bad CRC, truncated, unknown version with a correct CRC,
   overlapping memory records with a correct CRC) each give one error line and exit 2.
"""
import concurrent.futures
import json
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CRASH_SOURCE = SOURCE_DIR / "examples" / "crash" / "crash.c"
SIGNAL = "<signal handler called>"
WORKERS = 2

SCENARIOS = ["badptr", "busfault", "div0", "undef", "overflow", "nested", "psp", "assert"]
CASES = ([("m3", s) for s in SCENARIOS] + [("m33", s) for s in SCENARIOS] +
         [("m4f", s) for s in SCENARIOS] + [("m0", "badptr")])

# Addresses crash.c loads from (UNMAPPED_ADDRESS, UNMAPPED_TASK_ADDRESS).
BUSFAULT_ADDRESS = 0x60001230
TASK_FAULT_ADDRESS = 0x60002340

# ---------------------------------------------------------------- the dump, read independently

# ARMv7-M / ARMv8-M ARM: CFSR = UFSR[31:16] BFSR[15:8] MMFSR[7:0]
CFSR = {
    "IACCVIOL": 1 << 0, "DACCVIOL": 1 << 1, "MUNSTKERR": 1 << 3, "MSTKERR": 1 << 4,
    "MLSPERR": 1 << 5, "MMARVALID": 1 << 7,
    "IBUSERR": 1 << 8, "PRECISERR": 1 << 9, "IMPRECISERR": 1 << 10, "UNSTKERR": 1 << 11,
    "STKERR": 1 << 12, "LSPERR": 1 << 13, "BFARVALID": 1 << 15,
    "UNDEFINSTR": 1 << 16, "INVSTATE": 1 << 17, "INVPC": 1 << 18, "NOCP": 1 << 19,
    "STKOF": 1 << 20, "UNALIGNED": 1 << 24, "DIVBYZERO": 1 << 25,
}
HFSR_FORCED = 1 << 30
EXC_HARDFAULT, EXC_MEMMANAGE, EXC_BUSFAULT, EXC_USAGEFAULT = 3, 4, 5, 6

REGS_FRAME_VALID = 0x0001
REGS_ON_PSP = 0x0008
REGS_STACK_OVERFLOW = 0x0200


class Dump:
    """The fields of a spoor crash dump (spoor/dump_format.h) the test checks."""

    def __init__(self, data):
        magic, version, header_size, total, crc = struct.unpack_from("<IHHII", data, 0)
        if magic != 0x4D445053 or version != 1 or total != len(data):
            raise ValueError(f"not a version-1 dump of {len(data)} bytes")
        if zlib.crc32(data[:12] + data[16:total]) != crc:
            raise ValueError("bad CRC")
        self.data = data
        self.records = []  # (offset, type, payload)
        at = header_size
        while True:
            rtype, _flags, length = struct.unpack_from("<HHI", data, at)
            self.records.append((at, rtype, data[at + 8:at + 8 + length]))
            if rtype == 0:
                break
            at += 8 + ((length + 3) & ~3)
        regs = self.record(1)
        words = struct.unpack_from("<41I", regs, 0)
        self.flags = words[0]
        self.r = list(words[1:14])
        self.sp, self.lr, self.pc, self.xpsr = words[14:18]
        self.exc_return, self.msp, self.psp, self.control = words[18:22]
        fault = self.record(2)
        if fault is None:
            self.fault_valid = 0
            self.cfsr = self.hfsr = self.bfar = self.mmfar = 0
        else:
            (self.fault_valid, self.cfsr, self.hfsr, _dfsr, self.mmfar, self.bfar,
             _afsr, _sfsr, _sfar) = struct.unpack_from("<9I", fault, 0)
        build_id = self.record(4)
        self.build_id = build_id.hex() if build_id is not None else None
        reason = self.record(5)
        self.reason, self.code, self.line, file_len, msg_len = struct.unpack_from(
            "<IIIHH", reason, 0)
        self.file = reason[16:16 + file_len].decode()

    def record(self, rtype):
        for _, t, payload in self.records:
            if t == rtype:
                return payload
        return None


def crc_fixed(data):
    """data with its header CRC recomputed (CRC-32 of bytes [0,12) and [16,end))."""
    data = bytearray(data)
    struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[:12] + data[16:])))
    return bytes(data)


# ---------------------------------------------------------------- QEMU with a command line


class CrashQemu(harness.Qemu):
    """harness.Qemu with semihosting arguments (the firmware's command line)."""

    def __init__(self, elf, machine, args, gdb=False):
        super().__init__(elf, machine, gdb=gdb)
        self.args = args

    def __enter__(self):
        attempts = 3 if self.gdb else 1
        for attempt in range(attempts):
            self.gdb_port = harness.free_port() if self.gdb else None
            self._output = tempfile.TemporaryFile()
            command = harness.qemu_command(self.elf, self.machine, self.gdb_port)
            at = command.index("enable=on,target=native")
            command[at] += "".join(f",arg={a}" for a in self.args)
            self.process = harness._spawn(command, self._output)
            if not self.gdb or self._wait_for_gdb_port():
                return self
            text = self.close()
            if attempt == attempts - 1:
                raise harness.HarnessError(f"QEMU did not open its gdb port: {text.strip()}")
        return self


def crash_and_collect(core, scenario, out_dir):
    """Runs the scenario to its dump; returns (elf, machine, dump path, QEMU output)."""
    elf, machine = harness.example("crash", core)
    dump = Path(out_dir) / f"{core}-{scenario}.bin"
    with CrashQemu(elf, machine, ["crash", scenario, str(dump)]) as qemu:
        result = qemu.wait(30)
    if result.returncode != 0 or not dump.is_file():
        raise AssertionError(f"{core} {scenario}: QEMU exit {result.returncode}, no dump:\n"
                             f"{result.output}")
    return elf, machine, dump, result.output


def run_spoor(*args, timeout=60):
    return subprocess.run([SPOOR, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def spoor_functions(report):
    """spoor crash --json backtrace as gdb-style names (exception rows as gdb shows them)."""
    names = []
    for frame in report["backtrace"]:
        if frame["kind"] == "exception":
            names.append(SIGNAL)
        else:
            names.append(frame["function"] or "??")
    return names


# ---------------------------------------------------------------- disassembly


def function_start(elf, address):
    """Start of the function symbol (nm type T/t) that contains address."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-nm"), "-n", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    best = None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt":
            value = int(parts[0], 16) & ~1
            if value <= address and (best is None or value > best):
                best = value
    return best


def instruction_before(elf, address):
    """(address, text) of the instruction that ends at `address` (objdump, from the function
    start so the decoding is aligned)."""
    start = function_start(elf, address)
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d",
                          f"--start-address={start:#x}", f"--stop-address={address + 4:#x}",
                          str(elf)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.strip().split("\t")
        if len(fields) < 3 or not fields[0].endswith(":"):
            continue
        at = int(fields[0][:-1], 16)
        size = 2 * len(fields[1].split())
        if at + size == address:
            return at, " ".join(fields[2:])
    raise AssertionError(f"no instruction ends at {address:#x} in {elf}")


def instruction_at(elf, address):
    start = function_start(elf, address)
    out = subprocess.run([harness.require_tool("arm-none-eabi-objdump"), "-d",
                          f"--start-address={start:#x}", f"--stop-address={address + 4:#x}",
                          str(elf)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.strip().split("\t")
        if len(fields) >= 3 and fields[0] == f"{address:x}:":
            return " ".join(fields[2:])
    raise AssertionError(f"no instruction at {address:#x} in {elf}")


def elf_build_id(elf):
    """The GNU build-id of the ELF, from arm-none-eabi-readelf -n."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-readelf"), "-n", str(elf)],
                         check=True, capture_output=True, text=True).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not match:
        raise AssertionError(f"{elf} has no build-id note")
    return match.group(1)


def assert_line():
    """The source line of the SPOOR_CRASH_ASSERT in crash.c."""
    for number, line in enumerate(CRASH_SOURCE.read_text().splitlines(), 1):
        if "SPOOR_CRASH_ASSERT(count" in line:
            return number
    raise AssertionError("no SPOOR_CRASH_ASSERT in crash.c")


# ---------------------------------------------------------------- ground truth from gdb


def gdb_backtrace(elf, machine, scenario, dump):
    """gdb's bt in the same program at the instruction before the fault, or for an overflow
    whose frame the hardware could not stack, deep in the recursion."""
    if scenario == "overflow" and not dump.flags & REGS_FRAME_VALID:
        commands = ["break stack_eater if depth == 40", "continue", "bt 8"]
    else:
        if scenario == "badptr":
            where, text = instruction_before(elf, dump.lr & ~1)
            if not text.startswith("blx"):
                raise AssertionError(f"expected the BLX before LR {dump.lr:#x}, found {text}")
        elif scenario == "assert":
            # a software capture records the address of the call itself (docs/dump-format.md)
            where = dump.pc & ~1
            text = instruction_at(elf, where)
            if not text.startswith("bl") or "spoor_crash_fatal" not in text:
                raise AssertionError(f"expected the call of spoor_crash_fatal, found {text}")
        else:
            where = dump.pc & ~1
        commands = [f"break *{where:#x} if $sp == {dump.sp:#x}", "continue",
                    "bt 8" if scenario == "overflow" else "bt"]
    # past-main: gdb goes on to Reset_Handler, as spoor does
    with CrashQemu(elf, machine, ["crash", scenario, "/dev/null"], gdb=True) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, ["set backtrace past-main on"] + commands +
                               ["kill"], timeout=60)
    if "Breakpoint 1," not in text:
        raise AssertionError(f"gdb did not stop at the breakpoint:\n{text}")
    return without_end_marker(harness.parse_backtrace(text)), text


def without_end_marker(frames):
    """gdb reads the 0xFFFFFFFF return address an RTOS puts at the bottom of a task (crash.c's
    task_entry) as an EXC_RETURN value and shows one last <signal handler called> with nothing
    after it; that row is not a frame."""
    if len(frames) > 1 and frames[-1] == SIGNAL:
        return frames[:-1]
    return frames


# ---------------------------------------------------------------- expected faults


def check_fault(test, core, scenario, dump, report):
    """The raw fault registers (ARM ARM) and spoor's reading of them."""
    fault = report["fault"]
    bits = {b["name"] for b in fault["bits"]}
    v6m = core == "m0"
    if scenario == "assert":
        test.assertEqual(dump.reason, 2)  # SPOOR_REASON_ASSERT
        test.assertTrue(dump.file.endswith("examples/crash/crash.c"), dump.file)
        test.assertEqual(dump.line, assert_line())
        test.assertEqual(report["reason"], "assert")
        test.assertEqual(report["assert"]["line"], assert_line())
        test.assertTrue(report["assert"]["file"].endswith("crash.c"))
        return
    test.assertEqual(dump.reason, 1)  # SPOOR_REASON_FAULT
    test.assertEqual(report["reason"], "fault")
    if v6m:
        test.assertEqual(dump.code, EXC_HARDFAULT)
        test.assertEqual(dump.fault_valid, 0)  # Armv6-M has no fault status registers
        test.assertEqual(fault["type"], "HardFault")
        return
    test.assertEqual(dump.hfsr & HFSR_FORCED, 0, "the fault must not have escalated")
    test.assertFalse(fault["escalated"])
    expected = {
        "badptr": (EXC_USAGEFAULT, "UsageFault", ["INVSTATE"]),
        "busfault": (EXC_BUSFAULT, "BusFault", ["PRECISERR", "BFARVALID"]),
        "div0": (EXC_USAGEFAULT, "UsageFault", ["DIVBYZERO"]),
        "undef": (EXC_USAGEFAULT, "UsageFault", ["UNDEFINSTR"]),
        "nested": (EXC_USAGEFAULT, "UsageFault", ["UNDEFINSTR"]),
        "psp": (EXC_BUSFAULT, "BusFault", ["PRECISERR", "BFARVALID"]),
        "overflow": ((EXC_USAGEFAULT, "UsageFault", ["STKOF"]) if core == "m33" else
                     (EXC_MEMMANAGE, "MemManage", ["MSTKERR"])),
    }[scenario]
    exception, type_name, cfsr_bits = expected
    test.assertEqual(dump.code, exception)
    for name in cfsr_bits:
        test.assertTrue(dump.cfsr & CFSR[name], f"CFSR {dump.cfsr:#x} lacks {name}")
    test.assertEqual(fault["type"], type_name)
    for name in cfsr_bits:
        if name != "BFARVALID":
            test.assertIn(name, bits)
    if scenario in ("busfault", "psp"):
        address = BUSFAULT_ADDRESS if scenario == "busfault" else TASK_FAULT_ADDRESS
        test.assertEqual(dump.bfar, address)
        test.assertEqual(int(fault["address"], 16), address)
    if scenario == "badptr":
        # the PC is the even address the BLX branched to; LR returns after the BLX
        test.assertEqual(dump.pc & 1, 0)
        test.assertEqual(int(report["registers"]["pc"], 16), dump.pc)
    if scenario == "overflow":
        test.assertTrue(dump.flags & REGS_STACK_OVERFLOW, f"flags {dump.flags:#x}")
        test.assertTrue(fault["stack_overflow"])
    if scenario == "psp":
        test.assertTrue(dump.exc_return & 4, "EXC_RETURN must say the frame is on PSP")
        test.assertTrue(dump.flags & REGS_ON_PSP)
    if core == "m4f":
        # EXC_RETURN.FType = 0: the FP context was live, the frame is the extended one
        test.assertEqual(dump.exc_return & 0x10, 0, f"EXC_RETURN {dump.exc_return:#x}")


def check_backtrace(test, scenario, dump, report, gdb_frames):
    spoor = spoor_functions(report)
    test.assertIn("stop", report)
    if scenario == "overflow":
        named = spoor[1:] if not dump.flags & REGS_FRAME_VALID else spoor
        test.assertEqual(gdb_frames, ["stack_eater"] * 8)
        test.assertEqual(named[:8], gdb_frames, f"spoor {spoor}")
        return
    if scenario == "badptr":
        # frame 0 is the bad PC itself; after it come gdb's frames at the BLX
        test.assertEqual(spoor[1:1 + len(gdb_frames)], gdb_frames, f"spoor {spoor}")
    else:
        test.assertEqual(spoor[:len(gdb_frames)], gdb_frames, f"spoor {spoor}")
    # gdb ends at Reset_Handler or at the task's entry; spoor may not go on past it
    rest = spoor[len(gdb_frames) + (scenario == "badptr"):]
    test.assertEqual(rest, [], f"spoor has frames gdb does not: {spoor}")


def gdbserver_functions(elf, dump_path):
    """bt from gdb-multiarch connected to `spoor gdbserver` serving the dump."""
    server = subprocess.Popen([SPOOR, "gdbserver", "-e", str(elf), "--port", "0",
                               str(dump_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True,
                              preexec_fn=harness._die_with_parent)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 20)
        if not ready:
            raise AssertionError("spoor gdbserver printed nothing in 20 s")
        line = server.stdout.readline()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            raise AssertionError(f"spoor gdbserver said {line!r}: {server.stderr.read()}")
        text = harness.run_gdb(elf, int(match.group(1)), ["set backtrace past-main on", "bt"],
                               timeout=60)
    finally:
        harness._kill_group(server)
    return without_end_marker(harness.parse_backtrace(text)), text


def run_case(core, scenario, out_dir):
    """Everything for one case; returns a dict of results for the test to check."""
    elf, machine, path, output = crash_and_collect(core, scenario, out_dir)
    dump = Dump(path.read_bytes())
    crash = run_spoor("crash", "-e", elf, "--json", path)
    text = run_spoor("crash", "-e", elf, path)
    result = {"elf": elf, "machine": machine, "path": path, "output": output, "dump": dump,
              "crash": crash, "text": text}
    try:
        result["gdb"] = gdb_backtrace(elf, machine, scenario, dump)
    except (AssertionError, harness.HarnessError) as error:
        result["gdb_error"] = str(error)
    result["gdbserver"] = gdbserver_functions(elf, path)
    return result


class CrashScenarios(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-crash-")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            futures = {case: pool.submit(run_case, *case, cls.tmp.name) for case in CASES}
            cls.results = {}
            for case, future in futures.items():
                try:
                    cls.results[case] = future.result()
                except Exception as error:  # reported by the test of that case
                    cls.results[case] = {"error": f"{type(error).__name__}: {error}"}
        print(f"{len(CASES)} crash cases in {time.monotonic() - started:.1f} s", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def result(self, core, scenario):
        result = self.results[(core, scenario)]
        if "error" in result:
            self.fail(result["error"])
        self.assertIn(f"crash dump saved", result["output"])
        self.assertEqual(result["crash"].returncode, 0, result["crash"].stderr)
        return result

    def check_fault(self, core, scenario):
        result = self.result(core, scenario)
        report = json.loads(result["crash"].stdout)
        check_fault(self, core, scenario, result["dump"], report)
        # the dump names the firmware that wrote it; no build-id warning
        self.assertEqual(result["dump"].build_id, elf_build_id(result["elf"]))
        self.assertEqual(report["warnings"], [])
        # the text report: same fault, one row per exception frame crossed
        text = result["text"]
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertEqual(text.stderr, "")
        self.assertTrue(text.stdout.startswith("reason: "), text.stdout)
        if report["fault"]["type"] and report["reason"] == "fault":
            self.assertIn(report["fault"]["type"], text.stdout)
        exceptions = sum(1 for f in report["backtrace"] if f["kind"] == "exception")
        self.assertEqual(text.stdout.count("<exception "), exceptions, text.stdout)

    def check_backtrace(self, core, scenario):
        result = self.result(core, scenario)
        if "gdb_error" in result:
            self.fail(result["gdb_error"])
        frames, _ = result["gdb"]
        check_backtrace(self, scenario, result["dump"], json.loads(result["crash"].stdout),
                        frames)

    def check_gdbserver(self, core, scenario):
        result = self.result(core, scenario)
        dump = result["dump"]
        frames, text = result["gdbserver"]
        expected = spoor_functions(json.loads(result["crash"].stdout))
        if not dump.flags & REGS_FRAME_VALID:
            # The hardware could not stack the frame (overflow): the dump has no PC or LR, and
            # gdb unwinds from registers only, so it shows frame 0 and no more; the frames
            # spoor finds by scanning the stack are not something gdb can reproduce.
            self.assertTrue(frames, text)
            return
        # Frame 0 of badptr is a PC that is no code (gdb names it after the nearest symbol,
        # a data object; spoor says ??): compare what comes after it.
        skip = 1 if scenario == "badptr" else 0
        if scenario == "overflow":
            self.assertEqual(frames[skip:skip + 8], expected[skip:skip + 8], text)
        else:
            self.assertEqual(frames[skip:], expected[skip:], text)

    def test_corrupt_dumps(self):
        result = self.result("m3", "busfault")
        data = result["path"].read_bytes()
        dump = result["dump"]
        memory = [(at, payload) for at, t, payload in dump.records if t == 3]
        self.assertTrue(memory, "the dump has no memory record")
        end_at = dump.records[-1][0]
        # a copy of the first memory record moved up by 8 bytes: the two overlap
        at, payload = memory[0]
        address = struct.unpack_from("<I", payload, 0)[0]
        length = len(payload)
        record = bytearray(data[at:at + 8 + ((length + 3) & ~3)])
        struct.pack_into("<I", record, 8, address + 8)
        overlapping = bytearray(data[:end_at] + record + data[end_at:])
        struct.pack_into("<I", overlapping, 8, len(overlapping))
        version = bytearray(data)
        struct.pack_into("<H", version, 4, 7)
        flipped = bytearray(data)
        flipped[dump.records[0][0] + 20] ^= 0x01  # a register byte
        cases = {
            "bad CRC": (bytes(flipped), "CRC"),
            "truncated": (data[:len(data) // 2], "truncated"),
            "wrong version": (crc_fixed(version), "version"),
            "overlapping regions": (crc_fixed(overlapping), "overlap"),
        }
        for name, (content, word) in cases.items():
            with self.subTest(name):
                path = Path(self.tmp.name) / f"corrupt-{name.replace(' ', '-')}.bin"
                path.write_bytes(content)
                run = run_spoor("crash", "-e", result["elf"], path)
                self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
                lines = run.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, run.stderr)
                self.assertTrue(lines[0].startswith("spoor crash:"), lines[0])
                self.assertIn(word, lines[0])
                self.assertEqual(run.stdout, "")

    def test_build_id_mismatch_warns(self):
        # an M3 dump read with the M33 firmware: another build, so another build-id (readelf)
        result = self.result("m3", "busfault")
        other = harness.elf_path("crash", "m33")
        self.assertNotEqual(elf_build_id(other), result["dump"].build_id)
        run = run_spoor("crash", "-e", other, result["path"])
        self.assertEqual(run.returncode, 0, run.stderr)
        warning = [l for l in run.stderr.splitlines() if "build-id mismatch" in l]
        self.assertEqual(len(warning), 1, run.stderr)
        self.assertIn("WARNING", warning[0])
        self.assertIn(result["dump"].build_id, warning[0])
        self.assertIn(elf_build_id(other), warning[0])
        run = run_spoor("crash", "--json", "-e", other, result["path"])
        report = json.loads(run.stdout)
        self.assertEqual(len(report["warnings"]), 1)
        self.assertIn("build-id mismatch", report["warnings"][0])
        # the dump's own firmware: no warning
        run = run_spoor("crash", "--json", "-e", result["elf"], result["path"])
        self.assertEqual(json.loads(run.stdout)["warnings"], [])
        self.assertNotIn("build-id", run.stderr)


def _add_case_tests():
    for core, scenario in CASES:
        for aspect in ("fault", "backtrace", "gdbserver"):
            def test(self, core=core, scenario=scenario, aspect=aspect):
                getattr(self, f"check_{aspect}")(core, scenario)
            test.__name__ = f"test_{core}_{scenario}_{aspect}"
            setattr(CrashScenarios, test.__name__, test)


_add_case_tests()

if __name__ == "__main__":
    unittest.main(verbosity=2)
