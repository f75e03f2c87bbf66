"""spoor top names a FreeRTOS task by the function its own backtrace ends in, once the task's
initial stack frame is gone; and spoor top --stack gives each task's stack use.

tests/e2e/fw/rtos_ctx_fw.c built with -DCTX_FREERTOS (FreeRTOS's TCB_t, lists and port context
layout; see that file) on the M0, M3, M4F and M33 runs in QEMU until fw_checkpoint: monitor
running, alpha, beta and gamma parked a few calls deep, each having run, so the initial exception
frame each task was started with (just below pxEndOfStack: its entry in the PC word, xPSR with
only the Thumb bit) has been overwritten by the task's own frames. TCB_t has no entry member:
before, spoor top showed no function for any task.

Independent truth:
  * gdb-multiarch prints each TCB's pxStack, pxEndOfStack and pxTopOfStack and dumps RAM; the
    test checks on that image that no initial frame is left (the PC word at pxEndOfStack - 8 is
    no longer the entry with xPSR 0x01000000 above it);
  * gdb-multiarch's `bt` of each parked task (its registers computed from the RAM image and the
    port's layout, as test_crash_threads_freertos_zephyr.py does) and of the running task (the
    CPU's own registers) ends in the task's function: alpha_main, beta_main, ...;
  * the stacks: bounds from pxStack/pxEndOfStack as gdb prints them, the high-water mark counted
    on gdb's RAM image as FreeRTOS's uxTaskGetStackHighWaterMark counts it (0xA5 bytes from
    pxStack up, whole words), the saved SP from gdb's pxTopOfStack; gamma overflowed its stack
    once (rtos_ctx_fw.c), and only gamma is flagged.
Checked: `spoor top --mem RAM --input STREAM` names the three parked tasks with those functions;
`spoor top --gdb QEMU --input STREAM` names all four (the running one from the CPU's registers);
--stack's JSON and console columns equal the figures above. The stream is written here (DWT data
trace value packets of comparator 1, ARMv7-M ARM D4.3, with local timestamps) naming each TCB.
Memory layers (docs/memory.md "Layers": the --mem images before the live target): on the M3,
`spoor top --gdb QEMU --mem RAM' --input STREAM`, RAM' gdb's RAM image with alpha's name in its
TCB changed to "ALPHA" while the target (gdb's printout) still says "alpha", names the task
ALPHA: the image's bytes, not the target's.
"""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parse_backtraces, run_gdb, symbol_addresses  # noqa: E402
from test_crash_threads import gdb_backtraces  # noqa: E402
from test_crash_threads_freertos_zephyr import (CORES, SIGNAL, TASKS,  # noqa: E402
                                                gdb_reference, saved_registers)
from test_top_rtos_shapes import stream  # noqa: E402
from test_top_sched import stop_parked  # noqa: E402
from test_unwind_live import build_test_firmware  # noqa: E402
from top_testlib import check, run_cores  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
RUNNING = "monitor"
TEST_CORES = ["m0", "m3", "m4f", "m33"]


def gdb_stacks(elf, port, tcbs):
    """pxStack, pxEndOfStack and pxTopOfStack of each task, as gdb prints them."""
    commands = [f'printf "@@{name} %u %u %u\\n", {name}_tcb.pxStack, {name}_tcb.pxEndOfStack, '
                f'{name}_tcb.pxTopOfStack' for name in tcbs]
    text = run_gdb(elf, port, commands)
    stop_parked(port)  # gdb let the machine go on (it spins in fw_checkpoint): halted again
    found = {m[0]: tuple(int(v) for v in m[1:])
             for m in re.findall(r"^@@(\w+) (\d+) (\d+) (\d+)$", text, re.M)}
    check(set(found) == set(tcbs), f"gdb printed stacks for {sorted(found)}: {text[-800:]}")
    return found


def running_backtrace(elf, port, label):
    """gdb's `bt` of the CPU's own registers (the running task)."""
    traces = parse_backtraces(run_gdb(elf, port, ["bt"]))
    check(len(traces) == 1, f"{label}: gdb gave {len(traces)} backtraces of the running task")
    return traces[0] if traces else []


def top_json(elf, memory, stream_path, extra, label):
    """spoor top's one interval as JSON: {name: thread}."""
    out = stream_path.with_suffix(f".{len(extra)}.json")
    result = subprocess.run([SPOOR, "top", "-e", str(elf), *memory, "--input", str(stream_path),
                             "-F", "1000000", "-j", str(out), *extra],
                            capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"{label}: spoor top {memory}: {result.returncode} "
          f"{result.stderr}")
    if result.returncode:
        return {}
    lines = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    threads = {}
    for line in lines:
        for t in line["threads"]:
            threads[t["name"]] = t
    return threads


def top_console(elf, memory, stream_path, label):
    result = subprocess.run([SPOOR, "top", "-e", str(elf), *memory, "--input", str(stream_path),
                             "-F", "1000000", "--stack"],
                            capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"{label}: spoor top --stack: {result.stderr}")
    return result.stdout


DOCS = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "docs"
DOCS_MARK = "<!-- the output of tests/e2e/test_top_thread_entry.py (M3) -->"


def check_docs(console):
    """docs/top.md shows this run's console output on the M3 (the block after DOCS_MARK)."""
    text = (DOCS / "top.md").read_text()
    at = text.find(DOCS_MARK)
    block = re.search(r"```\n\$ spoor top [^\n]*\n(.*?)```", text[at:], re.S) if at >= 0 else None
    check(block is not None, "docs/top.md: no --stack example after the marker")
    if block and block.group(1).rstrip() != console.rstrip():
        check(False, "docs/top.md's --stack example differs from this run:\n" + console)


def entry_function(trace):
    """The function a task's backtrace ends in (gdb shows the initial LR 0xFFFFFFFF as a last
    "<signal handler called>" row)."""
    trace = [f for f in trace if f != SIGNAL]
    return trace[-1] if trace else None


def run_core(core, work):
    flags, machine, flash, ram_origin, _ = CORES[core]
    elf = build_test_firmware("rtos_ctx_fw", flags, flash, ram_origin,
                              work / f"freertos-{core}.elf", extra=["-DCTX_FREERTOS"])
    symbols = symbol_addresses(elf)
    tcbs = {name: symbols[f"{name}_tcb"] for name in TASKS}
    label = f"freertos {core}"
    qemu, saved = gdb_reference(elf, machine, ram_origin, "freertos", core, work, symbols)
    try:
        stop_parked(qemu.gdb_port)
        ram = (work / "ram.bin").read_bytes()

        def word(addr):
            return struct.unpack_from("<I", ram, addr - ram_origin)[0]

        stacks = gdb_stacks(elf, qemu.gdb_port, tcbs)
        for name in TASKS:
            entry = symbols[f"{name}_main"] & ~1
            end = stacks[name][1]
            check(not (word(end - 8) & ~1 == entry and word(end - 4) == 0x01000000),
                  f"{label}: {name}'s initial frame is still there: the test tests nothing")
        stream_path = work / "switches.itm"
        order = [tcbs[name] for name in TASKS if name != RUNNING] + [tcbs[RUNNING]]
        stream_path.write_bytes(stream(order))
        memory = ["--mem", f"{ram_origin:#x}:{work / 'ram.bin'}"]
        offline = top_json(elf, memory, stream_path, ["--stack"], label)
        live = top_json(elf, ["--gdb", f"127.0.0.1:{qemu.gdb_port}"], stream_path, [], label)
        console = top_console(elf, memory, stream_path, label)
        if core == "m3":
            check_docs(console)
            check_layers(elf, qemu.gdb_port, ram, ram_origin, tcbs["alpha"], saved["alpha"],
                         stream_path, label)
        expected = {RUNNING: entry_function(running_backtrace(elf, qemu.gdb_port, label))}
        parked = [name for name in TASKS if name != RUNNING]
        computed = [saved_registers(word, "freertos", core, saved[name])[0] for name in parked]
        for name, trace in zip(parked, gdb_backtraces(elf, qemu.gdb_port, computed, label)):
            expected[name] = entry_function(trace)
    finally:
        qemu.close()
    for name in TASKS:
        check(expected.get(name) == f"{name}_main",
              f"{label}: gdb's bt of {name} ends in {expected.get(name)}")
        got_live = live.get(name, {}).get("func")
        check(got_live == expected.get(name),
              f"{label}: {name}: spoor top --gdb says {got_live}, gdb's bt {expected.get(name)}")
        got = offline.get(name, {}).get("func")
        if name != RUNNING:  # the running task's registers are not in a RAM image
            check(got == expected.get(name),
                  f"{label}: {name}: spoor top --mem says {got}, gdb's bt {expected.get(name)}")
        check_stack(label, name, offline.get(name, {}).get("stack"), stacks[name], ram, ram_origin,
                    console)


def check_layers(elf, port, ram, ram_origin, tcb, saved, stream_path, label):
    """--gdb and --mem both given: the image, a layer in front of the live target, names alpha
    ALPHA (the name changed in the image only; gdb printed the target's)."""
    at = ram.find(b"alpha\0", tcb - ram_origin, tcb - ram_origin + 256)
    check(at >= 0 and saved.get("name") == "alpha",
          f"{label}: alpha's name not in its TCB in the image ({at}), or gdb printed "
          f"{saved.get('name')!r}")
    image = bytearray(ram)
    image[at:at + 5] = b"ALPHA"
    renamed = stream_path.with_name("ram-renamed.bin")
    renamed.write_bytes(bytes(image))
    both = top_json(elf, ["--gdb", f"127.0.0.1:{port}", "--mem", f"{ram_origin:#x}:{renamed}"],
                    stream_path, ["-I", "1000"], label)
    check("ALPHA" in both and "alpha" not in both and "beta" in both,
          f"{label}: spoor top --gdb --mem names {sorted(both)}: the live target's bytes were "
          f"read before the image's")


def check_stack(label, name, got, bounds, ram, ram_origin, console):
    low, end, top_of_stack = bounds
    high = end + 4
    # uxTaskGetStackHighWaterMark (prvTaskCheckFreeStackSpace): 0xA5 bytes from pxStack up,
    # counted in whole words
    fill = 0
    while low + fill < high and ram[low - ram_origin + fill] == 0xA5:
        fill += 1
    free = fill // 4 * 4
    want = {"low": f"0x{low:08x}", "high": f"0x{high:08x}", "size": high - low,
            "used": None if name == RUNNING else high - top_of_stack,
            "peak": high - low - free, "free_min": free, "overflowed": name == "gamma"}
    have = {key: (got or {}).get(key) for key in want}
    check(have == want, f"{label}: {name}: spoor top --stack {have} != {want}")
    row = next((line for line in console.splitlines() if line.startswith(f"| {name} ")), "")
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    used = "?" if name == RUNNING else str(want["used"])
    # the columns: name, address, function, priority, state, time, CPU%, max%, switches, then
    # --stack's size, used, peak and stack check
    check(cells[9:12] == [str(want["size"]), used, str(want["peak"])],
          f"{label}: {name}: console stack cells {cells[9:]}")
    check((cells[12:13] == ["OVERFLOWED"]) == (name == "gamma"),
          f"{label}: {name}: console stack check {cells[12:]}")


def main():
    return run_cores(run_core, TEST_CORES)


if __name__ == "__main__":
    sys.exit(main())
