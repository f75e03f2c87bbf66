"""spoor's RTOS layer on the TCB types of FreeRTOS, RTX5, Zephyr and ThreadX.

tests/e2e/fw/rtos_shapes_fw.c declares each RTOS's TCB type and globals as its headers do and
defines a few threads in .data; it is built here once per RTOS with arm-none-eabi-gcc -g. The
target memory is .data as arm-none-eabi-objcopy extracts it (what the target holds at start),
given to spoor top with --mem; the thread switches are an ITM stream written here (data trace
value packets of comparator 1, ARMv7-M ARM D4) naming each TCB (addresses from arm-none-eabi-nm).
What spoor shows for each thread (name, priority and its RTOS's name for it, entry function,
idle or not) must be what the C source says; -T auto must pick the right RTOS; a TCB that is not
one (an RTX5 object whose id is not a thread's) and a wrong -T or an ELF without DWARF must be
reported as such. `spoor crash --threads` on the same memory must list each RTOS's threads with
the state of the list they are on (FreeRTOS ready/delayed/suspended lists, RTX5 ready and wait
lists, the Zephyr and ThreadX thread lists). No member offset is known to spoor or to this test:
only names.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import require_tool, symbol_addresses  # noqa: E402
from top_testlib import check, exit_status, minimal_regs  # noqa: E402

SPOOR = os.environ.get("SPOOR_BIN", "spoor")
FW = Path(__file__).resolve().parent / "fw"

# per RTOS: the display name, and per thread symbol: (name, prio, prio_name, func, idle)
SHAPES = {
    "FREERTOS": ("FreeRTOS", {
        "sensor_tcb": ("Sensor", 3, None, "vSensorTask", False),
        "net_tcb": ("Net", 2, None, "vNetTask", False),
        # the idle task's initial frame is gone: no entry function
        "idle_tcb": ("IDLE", 0, None, None, True),
    }),
    "RTX5": ("RTX5", {
        "main_thread": ("main", 24, "osPriorityNormal", "app_main", False),
        "sensor": ("sensor_task", 40, "osPriorityHigh", "sensor_thread", False),
        "idle": ("osRtxIdleThread", 1, "osPriorityIdle", "osRtxIdleThread", True),
        "not_a_thread": ("?", None, None, None, False),
    }),
    "ZEPHYR": ("Zephyr", {
        "blink_thread": ("blinky", -2, None, "blinky", False),
        "z_idle_threads": ("idle", 15, None, "z_idle", True),
    }),
    "THREADX": ("ThreadX", {
        "thread_0": ("thread 0", 1, None, "thread_0_entry", False),
        "thread_1": ("thread 1", 16, None, "thread_1_entry", False),
    }),
}

# spoor crash --threads: (name, state) of every thread, the running one first
THREAD_LISTS = {
    # FreeRTOS: Net on the delayed list, its event item on no list (vTaskDelay); RTX5: worker's
    # state byte osRtxThreadWaitingSemaphore; Zephyr: the idle thread is never queued; ThreadX:
    # tx_thread_state TX_READY
    "FREERTOS": [("Sensor", "running"), ("IDLE", "ready"), ("Net", "sleeping"),
                 ("Logger", "suspended")],
    "RTX5": [("main", "running"), ("sensor_task", "ready"), ("osRtxIdleThread", "ready"),
             ("worker", "blocked")],
    "ZEPHYR": [("blinky", "running"), ("idle", "ready")],
    "THREADX": [("thread 0", "running"), ("thread 1", "ready")],
}
# what a blocked thread waits on: {name: (kind, object symbol, the name spoor gives it)}; RTX5
# names a control block by its variable (the ELF's DWARF)
WAITS = {"RTX5": {"worker": ("semaphore", "sem_data", "sem_data")}}

def stream(tcbs):
    """Each TCB switched to in turn, 1000 cycles apart (local timestamps format 1)."""
    out = bytearray(b"\x00" * 5 + b"\x80")
    for tcb in tcbs:
        out.append((16 + 2 * 1 + 1) << 3 | 0x4 | 0x3)
        out += tcb.to_bytes(4, "little")
        out += bytes([0xC0, 1000 & 0x7F | 0x80, 1000 >> 7])
    out += b"\x01\x00" + bytes([0xC0, 1000 & 0x7F | 0x80, 1000 >> 7])
    return bytes(out)


def build(shape, work, debug=True):
    elf = work / f"{shape.lower()}{'' if debug else '-nodebug'}.elf"
    subprocess.run([require_tool("arm-none-eabi-gcc"), "-mcpu=cortex-m3", "-mthumb",
                    *(["-g"] if debug else []), "-O1", "-ffreestanding", "-nostdlib", "-Wall",
                    "-Wextra", "-Werror", f"-DSHAPE_{shape}", "-T", str(FW / "unwind_fw.ld"),
                    "-Wl,--defsym=FW_FLASH=0x0,--defsym=FW_RAM=0x20000000",
                    str(FW / "rtos_shapes_fw.c"), "-o", str(elf)], check=True)
    return elf


def build_with_data(shape, work):
    """The firmware for shape and its .data as the target holds it at start (objcopy)."""
    elf = build(shape, work)
    data = work / f"{shape}.data"
    subprocess.run([require_tool("arm-none-eabi-objcopy"), "-O", "binary", "--only-section=.data",
                    str(elf), str(data)], check=True)
    return elf, data


def shape_with_stream(shape, work, threads):
    """The firmware for shape, its .data and a stream switching to each symbol of threads."""
    elf, data = build_with_data(shape, work)
    symbols = symbol_addresses(elf)
    itm = work / f"{shape.lower()}.itm"
    itm.write_bytes(stream([symbols[n] for n in threads]))
    return elf, data, itm


def run_shape(shape, work):
    display, threads = SHAPES[shape]
    elf, data = build_with_data(shape, work)
    symbols = symbol_addresses(elf)
    (work / f"{shape}.itm").write_bytes(stream([symbols[s] for s in threads]))
    result = subprocess.run([SPOOR, "top", "-e", str(elf), "--mem", f"0x20000000:{data}",
                             "--input", str(work / f"{shape}.itm"), "-F", "1000000",
                             "-j", str(work / f"{shape}.jsonl")],
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"{shape}: exit {result.returncode}: {result.stderr}")
    check(f"({display})" in result.stdout, f"{shape}: -T auto did not find {display}")
    lines = [json.loads(x) for x in (work / f"{shape}.jsonl").read_text().splitlines()]
    got = {t["tcb"]: t for t in lines[-1]["threads"]}
    for symbol, (name, prio, prio_name, func, idle) in threads.items():
        t = got.get(f"0x{symbols[symbol]:08x}")
        check(t is not None, f"{shape}: {symbol} not listed")
        if t:
            want = (name, prio, prio_name, func, idle)
            have = (t["name"], t["prio"], t["prio_name"], t["func"], t["idle"])
            check(have == want, f"{shape}: {symbol}: {have} != {want}")
    # the thread lists, through spoor crash --threads on the same memory
    regs = minimal_regs(work)
    crash = subprocess.run([SPOOR, "crash", "-e", str(elf), "--regs", str(regs), "--mem",
                            f"0x20000000:{data}", "--threads", "--json"],
                           capture_output=True, text=True, timeout=60)
    check(crash.returncode == 0, f"{shape}: spoor crash --threads: {crash.stderr}")
    if crash.returncode == 0:
        report = json.loads(crash.stdout)
        listed = [(t["name"], t["state"]) for t in report["threads"]]
        check(report["rtos"] == display and listed[:1] == THREAD_LISTS[shape][:1]
              and sorted(listed) == sorted(THREAD_LISTS[shape]),
              f"{shape}: threads {listed} != {THREAD_LISTS[shape]}")
        for t in report["threads"]:
            check(t["current"] == (t["state"] == "running"), f"{shape}: current flag {t}")
            wait = WAITS.get(shape, {}).get(t["name"])
            if wait:
                kind, symbol, name = wait
                check(t.get("wait") == {"kind": kind, "object": f"0x{symbols[symbol]:08x}",
                                    "name": name}, f"{shape}: {t['name']} waits on {t.get('wait')}")
            if shape in ("RTX5", "THREADX") and not t["current"]:
                # never run: no TCB holds a saved stack pointer (0), which must give no
                # backtrace but an error saying so (the layouts themselves are checked on
                # switching firmware by test_crash_threads_rtx_threadx.py)
                check(t["error"] == f"TCB {t['tcb']}: saved stack pointer 0x00000000 is not a "
                      "stack address" and t["backtrace"] == [], f"{shape}: {t}")
    if shape == "RTX5":
        check("not a RTX5 thread (id 0xf5)" in result.stderr,
              f"RTX5: no warning for a non-thread object: {result.stderr}")
    # the wrong RTOS, and no DWARF: errors that say so
    other = "rtx5" if shape != "RTX5" else "freertos"
    wrong = subprocess.run([SPOOR, "top", "-e", str(elf), "-T", other, "--input",
                            str(work / f"{shape}.itm"), "-F", "1000000"],
                           capture_output=True, text=True, timeout=60)
    check(wrong.returncode == 2 and "no current-thread pointer" in wrong.stderr,
          f"{shape}: -T {other}: {wrong.returncode} {wrong.stderr}")
    bare = build(shape, work, debug=False)
    nodw = subprocess.run([SPOOR, "top", "-e", str(bare), "--input", str(work / f"{shape}.itm"),
                           "-F", "1000000"], capture_output=True, text=True, timeout=60)
    check(nodw.returncode == 2 and "no DWARF" in nodw.stderr,
          f"{shape}: no DWARF: {nodw.returncode} {nodw.stderr}")


def run_zephyr_start_up(work):
    """Zephyr's start-up: the current-thread pointer at a dummy TCB on the interrupt stack
    (z_interrupt_stacks, holding stack bytes), on none of the kernel's lists: spoor top shows it as
    "(start-up)", with no priority, never as a thread named by the stack's bytes; spoor crash
    takes z_interrupt_stacks as the main stack."""
    elf, data = build_with_data("ZEPHYR", work)
    symbols = symbol_addresses(elf)
    dummy = symbols["z_interrupt_stacks"] + 64
    (work / "start-up.itm").write_bytes(stream([dummy, symbols["blink_thread"]]))
    jsonl = work / "start-up.jsonl"
    result = subprocess.run([SPOOR, "top", "-e", str(elf), "--mem", f"0x20000000:{data}",
                             "--input", str(work / "start-up.itm"), "-F", "1000000", "-j",
                             str(jsonl)], capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"start-up: exit {result.returncode}: {result.stderr}")
    rows = {t["tcb"]: t for t in json.loads(jsonl.read_text().splitlines()[-1])["threads"]}
    row = rows.get(f"0x{dummy:08x}", {})
    check((row.get("name"), row.get("state"), row.get("prio"), row.get("func")) ==
          ("(start-up)", "unlisted", None, None), f"start-up: the dummy TCB's row {row}")
    check("(start-up)" in result.stdout and "?????" not in result.stdout,
          f"start-up: console: {result.stdout[-800:]}")
    # the console's State column: the dummy TCB is on no list, blinky is the current thread
    cells = {c[1]: c[4] for c in ([x.strip() for x in line.strip("|").split("|")]
                                  for line in result.stdout.splitlines() if "| 0x" in line)}
    check(cells.get(f"0x{dummy:08x}") == "unlisted" and
          cells.get(f"0x{symbols['blink_thread']:08x}") == "running",
          f"start-up: console State cells {cells}")
    blink = rows.get(f"0x{symbols['blink_thread']:08x}", {})
    check(blink.get("name") == "blinky" and blink.get("state") == "running",
          f"start-up: blinky's row {blink}")
    crash = subprocess.run([SPOOR, "crash", "-e", str(elf), "--regs", str(minimal_regs(work)),
                            "--mem", f"0x20000000:{data}", "--json"],
                           capture_output=True, text=True, timeout=60)
    main_stack = json.loads(crash.stdout).get("main_stack") if crash.returncode == 0 else None
    check(main_stack is not None and main_stack.get("from") == "symbol z_interrupt_stacks" and
          main_stack.get("low") == f"0x{symbols['z_interrupt_stacks']:08x}",
          f"start-up: main stack {main_stack} {crash.stderr}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            run_shape(shape, Path(tmp))
        run_zephyr_start_up(Path(tmp))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
