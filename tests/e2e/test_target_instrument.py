"""The target library is immune to the application's instrumentation flags, however it is built.

A firmware that traces its calls is compiled with -finstrument-functions (or profiled with -pg);
when the target library's sources are compiled with the same flags (the Make fragment adds them to
the application's CFLAGS, an IDE project copies the sources in), none of its functions, inline
helpers included, may call the hooks: the recorder's own hooks would call themselves forever,
and the fault path would record into the ring it is capturing.

Every target source (target/src/*.c, target/src/cortexm/*.c) is compiled with arm-none-eabi-gcc
for each core, at -O0 and -O2, with -finstrument-functions and with -pg, and with the recorder's
build options; the objects must hold no relocation against __cyg_profile_func_enter/exit or
__gnu_mcount_nc (arm-none-eabi-objdump -r: what the linker would resolve into a call). The
check is the compiler's own output, independent of how spoor marks its functions."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CORES = {
    "m0": ["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"],
    "m3": ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"],
    "m4f": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "m33": ["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=soft"],
}
HOOKS = ("__cyg_profile_func_enter", "__cyg_profile_func_exit", "__gnu_mcount_nc")
RECORDER_OPTIONS = [[], ["-DSPOOR_CALLS_TIME=1", "-DSPOOR_CALLS_CONTEXT=1"]]


def sources():
    return sorted((SOURCE_DIR / "target" / "src").glob("*.c")) + \
        sorted((SOURCE_DIR / "target" / "src" / "cortexm").glob("*.c"))


def hook_references(obj):
    """The relocations in obj that name an instrumentation hook."""
    out = subprocess.run(["arm-none-eabi-objdump", "-r", str(obj)], capture_output=True,
                         text=True, check=True).stdout
    refs = []
    for line in out.splitlines():  # OFFSET TYPE SYMBOL[+ADDEND]
        fields = line.split()
        if len(fields) == 3 and fields[1].startswith("R_ARM_") and \
                fields[2].split("+")[0].split("-")[0] in HOOKS:
            refs.append(line.strip())
    return refs


class TargetInstrumentation(unittest.TestCase):
    def compile_all(self, core, flags):
        found = {}
        with tempfile.TemporaryDirectory(prefix="spoor-instr-") as tmp:
            for src in sources():
                for options in RECORDER_OPTIONS if src.name == "calls_recorder.c" else [[]]:
                    obj = Path(tmp) / (src.stem + ".o")
                    subprocess.run(["arm-none-eabi-gcc", *CORES[core], "-std=c99", "-ffreestanding",
                                    "-ffunction-sections", "-Wall", "-Wextra", *flags, *options,
                                    "-I", str(SOURCE_DIR / "target" / "include"), "-c", str(src),
                                    "-o", str(obj)], check=True, capture_output=True, text=True)
                    refs = hook_references(obj)
                    if refs:
                        found[f"{src.relative_to(SOURCE_DIR)} {' '.join(options)}".strip()] = refs
        return found

    def test_no_hook_calls(self):
        for core in CORES:
            for level in ("-O0", "-O2"):
                for instrument in (["-finstrument-functions"], ["-pg"]):
                    with self.subTest(core=core, level=level, flags=instrument):
                        found = self.compile_all(core, [level, *instrument])
                        self.assertEqual(found, {}, f"{core} {level} {instrument}: objects call "
                                         "the instrumentation hooks")

    def test_check_can_fail(self):
        """The objdump check sees a hook call where there is one (an unmarked function)."""
        with tempfile.TemporaryDirectory(prefix="spoor-instr-") as tmp:
            src, obj = Path(tmp) / "plain.c", Path(tmp) / "plain.o"
            src.write_text("int plain(int x) { return x + 1; }\n")
            subprocess.run(["arm-none-eabi-gcc", *CORES["m3"], "-finstrument-functions", "-c",
                            str(src), "-o", str(obj)], check=True)
            self.assertTrue(hook_references(obj))


if __name__ == "__main__":
    unittest.main(verbosity=2)
