"""Makes the fixture of test_calls_layouts.py: rings that firmware with the first ring layout
(state version 0: `next` is an index) left, the QEMU log's record of them, and what `spoor calls`
printed for them then.

Made once, from a build of commit 87c6e45 (the last one whose recorder wrote that layout):
    SPOOR_BIN=build/check/spoor SPOOR_FIRMWARE_DIR=build/check/firmware \
    SPOOR_SOURCE_DIR=. python3 tests/e2e/data/calls_v1/make_fixture.py
For each case it runs calls_trace-<cpu>.elf under QEMU with the CPU log at the hooks
(test_calls_trace.run_with_log) and keeps:
  calls_trace-<cpu>.elf  the ELF without its debug sections (names come from its symbol table)
  <case>.bin         the RAM image the firmware saved (plain, irq), or its crash dump (fault)
  <case>.args        the input arguments of spoor calls (--mem ADDR:FILE, or the dump)
  <case>.truth.json  the records in ring order, from QEMU's CPU log (test_calls_trace.ground_truth):
                     "total" of them, and the newest ones (at most a ring's capacity), each
                     [kind (1 enter, 0 exit), function, call site, IPSR]
  <case>.txt, <case>.json  the output of spoor calls (text, --json) of that commit
  <case>.crash.json  (fault) the calls and calls_info members of spoor crash --json --calls 1000
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
import harness  # noqa: E402
import test_calls_trace as ct  # noqa: E402

CASES = [("m3-plain", "m3", "plain"), ("m3-irq", "m3", "irq"), ("m0-irq", "m0", "irq"),
         ("m3-fault", "m3", "fault")]
KIND = {"enter": 1, "exit": 0}


def main():
    spoor = ct.spoor()
    for case, cpu, mode in CASES:
        elf, machine = harness.example("calls_trace", cpu)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.bin"
            log = Path(tmp) / "cpu.log"
            result, points = ct.run_with_log(elf, machine, mode, out, log)
            assert result.returncode == 0, result.stdout + result.stderr
            truth = ct.ground_truth(log, points)
            shutil.copy(out, HERE / f"{case}.bin")
        if mode == "fault":
            args = [f"{case}.bin"]
        else:
            m = re.search(r"image (0x[0-9a-f]+) (\d+)", result.stdout + result.stderr)
            args = ["--mem", f"{m.group(1)}:{case}.bin"]
        elf_name = f"calls_trace-{cpu}.elf"
        subprocess.run(["arm-none-eabi-objcopy", "--strip-debug", str(elf), str(HERE / elf_name)],
                       check=True)
        capacity = ct.symbols_with_sizes(elf)["call_ring"][1] // ct.RECORD_SIZE
        (HERE / f"{case}.args").write_text(" ".join(args) + "\n")
        newest = [[KIND[r["kind"]], r["fn"], r["site"], r["ipsr"]] for r in truth[-capacity:]]
        (HERE / f"{case}.truth.json").write_text(
            json.dumps({"total": len(truth), "newest": newest}, separators=(",", ":")) + "\n")
        for suffix, extra in (("txt", []), ("json", ["--json"])):
            p = subprocess.run([spoor, "calls", "-e", elf_name, *extra, *args], cwd=HERE,
                               capture_output=True, text=True, check=True)
            (HERE / f"{case}.{suffix}").write_text(p.stdout)
        if mode == "fault":
            p = subprocess.run([spoor, "crash", "-e", elf_name, "--json", "--calls", "1000", *args],
                               cwd=HERE, capture_output=True, text=True)
            report = json.loads(p.stdout)
            (HERE / f"{case}.crash.json").write_text(json.dumps(
                {"calls": report["calls"], "calls_info": report["calls_info"]}, indent=1) + "\n")
        print(case, len(truth), "records in the log")


if __name__ == "__main__":
    main()
