"""Stack usage in spoor crash: each RTOS thread's high-water mark against the count its RTOS's
own function makes, the overflowed thread flagged, the main stack's against QEMU's log.

tests/e2e/fw/rtos_ctx_fw.c is built per RTOS (FreeRTOS, also without pxEndOfStack; RTX5,
Zephyr, ThreadX) for the M3 and M0: four tasks on stacks filled with the RTOS's pattern at
creation, gamma overflowing its stack once (into a red zone: the guard bytes / magic word at
its far end are overwritten), Reset_Handler filling the main stack. QEMU runs it under its
gdbstub with `-singlestep -d exec,nochain,cpu` (the loop the test stops in left out with
-dfilter) until every task is parked; then

1. gdb-multiarch prints each task's stack bounds from its TCB (pxStack/pxEndOfStack, stack_mem/
   stack_size, stack_info, tx_thread_stack_start/end) and dumps RAM; the test counts, on that
   image, what the RTOS's high-water function counts (uxTaskGetStackHighWaterMark: 0xA5 bytes
   from pxStack, whole words; osThreadGetStackSpace: the magic word and the 0xCCCCCCCC words
   above it, 0 without the magic word; k_thread_stack_space_get: 0xAA bytes; ThreadX: 0xEF
   words from the start);
2. `spoor crash --gdb --threads --json` must give each thread's bounds, free_min equal to that
   count, peak = size - free_min, overflowed true for gamma only; without pxEndOfStack the
   bounds come from the heap block header (gamma's, overwritten by the overflow: from the saved
   SP) and say so;
3. the main stack's peak must be its top minus the lowest SP on it in QEMU's log (R13 within
   __stack_bottom..__stack_top).
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
CORES = {"m3": (["-mcpu=cortex-m3"], "mps2-an385"), "m0": (["-mcpu=cortex-m0"], "microbit")}
RAM = 0x20000000
TASKS = ["alpha", "beta", "gamma", "monitor"]
STACK_BYTES = 160 * 4
# RTOS: (defines, the TCB's low and high expressions for gdb ({t}: the TCB), spoor's "from")
RTOSES = {
    "freertos": (["-DCTX_FREERTOS"], "(unsigned){t}.pxStack",
                 "(unsigned){t}.pxEndOfStack + 4", "pxStack/pxEndOfStack"),
    "freertos-noend": (["-DCTX_FREERTOS", "-DFREERTOS_NO_END"], "(unsigned){t}.pxStack", None,
                       "pxStack/heap block header"),
    "rtx5": (["-DCTX_RTX5"], "(unsigned){t}.stack_mem",
             "(unsigned){t}.stack_mem + {t}.stack_size", "stack_mem/stack_size"),
    "zephyr": (["-DCTX_ZEPHYR"], "(unsigned){t}.stack_info.start",
               "(unsigned){t}.stack_info.start + {t}.stack_info.size",
               "stack_info.start/stack_info.size"),
    "threadx": (["-DCTX_THREADX"], "(unsigned){t}.tx_thread_stack_start",
                "(unsigned){t}.tx_thread_stack_end + 1",
                "tx_thread_stack_start/tx_thread_stack_end"),
}


def log_quiet(path, quiet_s=1.0):
    """A check for harness.wait_until: true once the file at path is not empty and has not
    grown for quiet_s."""
    last = {"size": -1, "since": time.monotonic()}

    def check():
        size = path.stat().st_size if path.exists() else 0
        now = time.monotonic()
        if size != last["size"]:
            last.update(size=size, since=now)
            return False
        return size > 0 and now - last["since"] >= quiet_s
    return check


def run_of(data, at, byte):
    n = 0
    while at + n < len(data) and data[at + n] == byte:
        n += 1
    return n


def rtos_free(rtos, ram, low, high):
    """What the RTOS's own high-water function says is left (bytes), on the RAM image."""
    stack = ram[low - RAM:high - RAM]
    if rtos.startswith("freertos"):  # prvTaskCheckFreeStackSpace: bytes, / sizeof(StackType_t)
        return run_of(stack, 0, 0xA5) // 4 * 4
    if rtos == "rtx5":  # svcRtxThreadGetStackSpace
        if struct.unpack_from("<I", stack, 0)[0] != 0xE25A2EA5:
            return 0
        words = 0
        while 4 + 4 * words < len(stack) and \
                struct.unpack_from("<I", stack, 4 + 4 * words)[0] == 0xCCCCCCCC:
            words += 1
        return 4 + 4 * words
    if rtos == "zephyr":  # z_stack_space_get: unused bytes still 0xaa
        return run_of(stack, 0, 0xAA)
    words = 0  # _tx_thread_stack_analyze: TX_STACK_FILL words from the start
    while 4 * words < len(stack) and struct.unpack_from("<I", stack, 4 * words)[0] == 0xEFEFEFEF:
        words += 1
    return 4 * words


def function_range(elf, name):
    out = subprocess.run([harness.require_tool(harness.NM), "-S", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name:
            return int(parts[0], 16) & ~1, int(parts[1], 16)
    raise AssertionError(f"{name} not in {elf}")


class CrashStacks(unittest.TestCase):
    def run_one(self, rtos, core, work):
        defines, low_expr, high_expr, from_text = RTOSES[rtos]
        flags, machine = CORES[core]
        elf = build_test_firmware("rtos_ctx_fw", flags, 0, RAM, work / f"{rtos}-{core}.elf",
                                  extra=defines)
        symbols = harness.symbol_addresses(elf)
        stack_bottom, stack_top = symbols["__stack_bottom"], symbols["__stack_top"]
        spin, spin_size = function_range(elf, "fw_checkpoint")
        log = work / f"{rtos}-{core}.log"
        port = harness.free_port()
        command = harness.qemu_command(elf, machine, gdb_port=port)
        command.remove("-S")
        command += ["-singlestep", "-d", "exec,nochain,cpu", "-D", str(log), "-dfilter",
                    f"0x0..{spin - 1:#x},{spin + spin_size:#x}..0xffffffff"]
        qemu = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # a few thousand instructions to fw_checkpoint, then it spins there, out of the log
            harness.wait_until(f"{rtos}-{core}: the log stops growing (fw_checkpoint)",
                               log_quiet(log), timeout_s=120, interval_s=0.1)
            stop_parked(port)
            commands = []
            for name in TASKS:
                t = f"{name}_tcb"
                commands.append(f'printf "@@{name} low %u\\n", {low_expr.format(t=t)}')
                if high_expr:
                    commands.append(f'printf "@@{name} high %u\\n", {high_expr.format(t=t)}')
            commands += [f"dump binary memory {work}/ram.bin {RAM:#x} {stack_top:#x}", "detach"]
            text = harness.run_gdb(elf, port, commands)
            bounds = {name: {} for name in TASKS}
            for name, key, value in re.findall(r"^@@(\w+) (\w+) (\d+)$", text, re.M):
                bounds[name][key] = int(value)
            ram = (work / "ram.bin").read_bytes()
            stop_parked(port)
            r = subprocess.run([SPOOR, "crash", "-e", str(elf), "--gdb", f"127.0.0.1:{port}",
                                "--threads", "--json"], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            report = json.loads(r.stdout)
        finally:
            qemu.terminate()
            qemu.wait()
        label = f"{rtos} {core}"
        current = report["backtrace"][0]["function"]
        self.assertEqual(current, "fw_checkpoint", f"{label}: not parked: {current}")
        threads = {t["name"]: t for t in report["threads"]}
        for name in TASKS:
            stack = threads[name]["stack"]
            low = bounds[name]["low"]
            high = bounds[name].get("high", low + STACK_BYTES)
            want_free = rtos_free(rtos, ram, low, high)
            noend_gamma = rtos == "freertos-noend" and name == "gamma"
            with self.subTest(rtos=rtos, core=core, task=name):
                self.assertEqual(int(stack["low"], 16), low)
                self.assertEqual(stack["free_min"], want_free)
                self.assertEqual(stack["overflowed"], name == "gamma")
                if noend_gamma:  # the overflow broke its heap block header too
                    self.assertIsNone(stack["high"])
                    self.assertIn("saved SP", stack["from"])
                    continue
                self.assertEqual(stack["from"], from_text)
                self.assertEqual((int(stack["high"], 16), stack["size"]), (high, high - low))
                self.assertEqual(stack["peak"], high - low - want_free)
                if name != "gamma":
                    self.assertGreater(want_free, 0)
        # the main stack: the lowest SP on it in QEMU's log
        lowest = None
        with open(log, errors="replace") as f:
            for line in f:
                m = re.search(r"R13=([0-9a-f]{8})", line)
                if m:
                    sp = int(m.group(1), 16)
                    # strictly above: the scratch PSP before the first task ends there on the M0
                    if stack_bottom < sp <= stack_top and (lowest is None or sp < lowest):
                        lowest = sp
        main = report["main_stack"]
        self.assertIsNotNone(lowest, f"{label}: no SP on the main stack in the log")
        self.assertEqual((int(main["low"], 16), int(main["high"], 16)), (stack_bottom, stack_top))
        self.assertEqual(main["peak"], stack_top - lowest, f"{label}: lowest MSP {lowest:#x}")
        self.assertFalse(main["overflowed"])

    def test_e01_page_under_a_stack(self):
        """RTX5 on the M3, parked; spoor crash --gdb through tests/e2e/faulty_gdb.py, which
        answers E01 to every read starting in the 256-byte page that holds alpha's stack_mem (its
        magic word): alpha's free_min, peak and overflow are unknown (null, the address said),
        never OVERFLOWED; the other threads' counts are as without the fault."""
        from faulty_gdb import FaultyGdb
        defines, low_expr, _, _ = RTOSES["rtx5"]
        flags, machine = CORES["m3"]
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            elf = build_test_firmware("rtos_ctx_fw", flags, 0, RAM, work / "e01.elf",
                                      extra=defines)
            port = harness.free_port()
            command = harness.qemu_command(elf, machine, gdb_port=port)
            command.remove("-S")
            qemu = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            try:
                time.sleep(1.5)
                stop_parked(port)
                text = harness.run_gdb(elf, port, [
                    f'printf "@@low %u\\n", {low_expr.format(t="alpha_tcb")}', "detach"])
                low = int(re.search(r"^@@low (\d+)$", text, re.M).group(1))
                stop_parked(port)
                args = [SPOOR, "crash", "-e", str(elf), "--threads", "--json"]
                clean = json.loads(subprocess.run(
                    args + ["--gdb", f"127.0.0.1:{port}"], capture_output=True, text=True,
                    timeout=60, check=True).stdout)
                page = f"{low >> 8:x}"
                with FaultyGdb(port, "error", match=rf"^m{page}[0-9a-f]{{2}},",
                               every=True) as proxy:
                    r = subprocess.run(args + ["--gdb", f"127.0.0.1:{proxy.port}"],
                                       capture_output=True, text=True, timeout=60)
                    fired = proxy.fired
                r_text = subprocess.run(args[:-1] + ["--gdb", f"127.0.0.1:{port}"],
                                        capture_output=True, text=True, timeout=60)
            finally:
                qemu.terminate()
                qemu.wait()
        self.assertTrue(fired)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        got = {t["name"]: t["stack"] for t in report["threads"]}
        want = {t["name"]: t["stack"] for t in clean["threads"]}
        self.assertFalse(want["alpha"]["overflowed"])
        alpha = got["alpha"]
        self.assertEqual((alpha["free_min"], alpha["peak"], alpha["overflowed"],
                          alpha["unreadable"]), (None, None, None, f"0x{low:08x}"))
        # (threads whose TCB lies in the page are not read: their names are unknown)
        others = [n for n in got if n not in ("alpha", None)]
        self.assertTrue(others)
        for name in others:
            self.assertEqual(got[name], want[name], name)
        self.assertEqual(r_text.returncode, 0, r_text.stderr)

    def test_rtoses(self):
        with tempfile.TemporaryDirectory() as tmp:
            for rtos in RTOSES:
                for core in CORES:
                    work = Path(tmp) / f"{rtos}-{core}"
                    work.mkdir()
                    self.run_one(rtos, core, work)


if __name__ == "__main__":
    unittest.main()
