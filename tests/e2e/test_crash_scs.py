"""spoor crash explains a fault from a debugger snapshot that has no fault registers of its own
but covers the System Control Space page, against gdb-multiarch as the reference.

The crash example (examples/crash/crash.c) runs in QEMU and faults on purpose. gdb stops at the
first instruction of the fault handler, where the core has just set CFSR/HFSR/BFAR, and takes:
the backtrace (reference), the registers (-> regs.json, no fault registers in it), RAM, the SCS
page 0xE000ED00..0xE000EDFF (-> scs.bin) and the fault status words themselves (`x/wx`).

spoor crash --json --regs regs.json --mem RAM:ram.bin --mem 0xE000ED00:scs.bin must
  - read the fault status from memory (status_from), with the values gdb read,
  - name the CFSR bits gdb's value has (decoded here from the ARMv7-M ARM bit table, not by
    spoor) and the fault address from BFAR where BFARVALID is set,
  - give the same backtrace as gdb;
and without the SCS image it must not invent a fault status."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
REGS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
HANDLERS = ["HardFault_Handler", "MemManage_Handler", "BusFault_Handler", "UsageFault_Handler"]

# ARMv7-M ARM B3.2.15: CFSR = UFSR[31:16] BFSR[15:8] MMFSR[7:0] (the *VALID bits are not causes)
CFSR_BITS = {
    0: "IACCVIOL", 1: "DACCVIOL", 3: "MUNSTKERR", 4: "MSTKERR", 5: "MLSPERR",
    8: "IBUSERR", 9: "PRECISERR", 10: "IMPRECISERR", 11: "UNSTKERR", 12: "STKERR",
    13: "LSPERR", 16: "UNDEFINSTR", 17: "INVSTATE", 18: "INVPC", 19: "NOCP", 20: "STKOF",
    24: "UNALIGNED", 25: "DIVBYZERO",
}
BFARVALID = 1 << 15

CASES = [("m3", "busfault"), ("m3", "div0"), ("m4f", "undef"), ("m33", "badptr")]


def snapshot(cpu, scenario, tmp):
    elf, machine = harness.example("crash", cpu)
    syms = harness.symbol_addresses(elf)
    ram_lo = syms["__stack_bottom"] & ~0xfff
    ram_hi = syms["__heap_start"] if "__heap_start" in syms else syms["__bss_end"]
    ram, scs = os.path.join(tmp, "ram.bin"), os.path.join(tmp, "scs.bin")
    commands = [f"break *{h}" for h in HANDLERS if h in syms] + [
        "continue", "bt", "info registers", "x/4wx 0xE000ED28",
        f"dump binary memory {ram} {ram_lo:#x} {ram_hi:#x}",
        f"dump binary memory {scs} 0xE000ED00 0xE000EE00", "kill"]
    args = f"arg=crash,arg={scenario},arg={os.path.join(tmp, 'dump.bin')}"
    with harness.Qemu(elf, machine, gdb=True, semihosting_args=args) as qemu:
        text = harness.run_gdb(elf, qemu.gdb_port, commands)
    reference = harness.parse_backtrace(text)
    regs = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+(0x[0-9a-f]+)\s", line)
        if m and m.group(1) in REGS:
            regs[m.group(1)] = m.group(2)
    words = re.search(r"0xe000ed28:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+"
                      r"(0x[0-9a-f]+)", text)
    if len(regs) != len(REGS) or not words or not os.path.exists(scs):
        raise harness.HarnessError(f"gdb did not stop in a fault handler:\n{text}")
    status = dict(zip(["cfsr", "hfsr", "dfsr", "mmfar"], (int(w, 16) for w in words.groups())))
    bfar = re.search(r"0xe000ed38:\s+(0x[0-9a-f]+)", text)
    regs_path = os.path.join(tmp, "regs.json")
    with open(regs_path, "w") as f:
        json.dump(regs, f)
    return elf, reference, regs_path, f"{ram_lo:#x}:{ram}", f"0xE000ED00:{scs}", status


def spoor_crash(elf, regs, *mems):
    command = [SPOOR, "crash", "--json", "-e", str(elf), "--regs", regs]
    for m in mems:
        command += ["--mem", m]
    r = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise harness.HarnessError(f"spoor crash failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout)


def functions(report):
    return ["<signal handler called>" if f["kind"] == "exception" else (f["function"] or "??")
            for f in report["backtrace"]]


def data_symbols(elf):
    """Names of data objects (nm types b/d/r): gdb names a PC in data (a call through a bad
    pointer) by the object there, where spoor says it is no function ("??")."""
    out = subprocess.run([harness.require_tool("arm-none-eabi-nm"), str(elf)],
                         capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1].lower() in "bdr"}


def same_backtrace(elf, spoor, gdb):
    data = data_symbols(elf)
    return len(spoor) == len(gdb) and all(
        a == b or (a == "??" and b in data) for a, b in zip(spoor, gdb))


def run_case(cpu, scenario):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        elf, reference, regs, ram, scs, status = snapshot(cpu, scenario, tmp)
        report = spoor_crash(elf, regs, ram, scs)
        plain = spoor_crash(elf, regs, ram)
        with open(scs.split(":", 1)[1], "rb") as f:
            page = f.read()
    bfar = int.from_bytes(page[0x38:0x3C], "little")
    fault = report["fault"]
    if fault.get("status_from") != "memory (System Control Space)":
        problems.append(f"status_from {fault.get('status_from')!r}")
    if int(report["registers"].get("cfsr", "-1"), 16) != status["cfsr"]:
        problems.append(f"cfsr {report['registers'].get('cfsr')} != gdb {status['cfsr']:#x}")
    if int(report["registers"].get("hfsr", "-1"), 16) != status["hfsr"]:
        problems.append(f"hfsr {report['registers'].get('hfsr')} != gdb {status['hfsr']:#x}")
    want = [name for bit, name in sorted(CFSR_BITS.items()) if status["cfsr"] & (1 << bit)]
    got = [b["name"] for b in fault["bits"] if b["register"] == "CFSR"]
    if not want or sorted(got) != sorted(want):
        problems.append(f"CFSR bits {got} != {want} (gdb CFSR {status['cfsr']:#x})")
    if status["cfsr"] & BFARVALID and fault["address"] != f"{bfar:#010x}":
        problems.append(f"fault address {fault['address']} != BFAR {bfar:#010x}")
    names = functions(report)
    if "main" in names:
        names = names[:names.index("main") + 1]
    if not same_backtrace(elf, names, reference):
        problems.append(f"backtrace {names} != gdb {reference}")
    if plain["fault"].get("status_from") is not None or plain["fault"]["bits"]:
        problems.append(f"without the SCS image spoor still reports {plain['fault']}")
    return problems, f"gdb CFSR {status['cfsr']:#x} HFSR {status['hfsr']:#x}; spoor: " \
                     f"{fault['type']} {got} address {fault['address']}; bt {names}"


if __name__ == "__main__":
    failed = 0
    for cpu, scenario in CASES:
        try:
            problems, detail = run_case(cpu, scenario)
        except Exception as e:  # noqa: BLE001 - reported per case
            problems, detail = [f"error: {e}"], ""
        print(f"{'ok  ' if not problems else 'FAIL'} crash-{cpu} {scenario}: {detail}")
        for p in problems:
            print(f"    {p}")
        failed += bool(problems)
    print(f"{len(CASES) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
