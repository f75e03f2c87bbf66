"""spoor as a package: install into a temporary prefix, then use only what was installed.

1. `cmake --install BUILD --prefix P` lays out bin/spoor, libspoor.a, libspoor.so.MAJOR (soname
   from the project version in CMakeLists.txt, exporting spoor_* names only, by nm -D, each
   with the version node SPOOR_MAJOR.MINOR, which a program linked against it records), the
   public headers (include/spoor/*.h, dump_format.h, cortexm_facts.h and no_instrument.h, no internal src/lib or src/util
   header; each compiles on its own with the installed pkg-config flags), spoor.pc, the CMake package, the man page,
   bash completion and share/spoor (target sources, spoor-target.mk/.cmake, spoor-sections.ld).
2. `spoor --version` names the project version and SPOOR_DUMP_VERSION of dump_format.h.
3. Firmware outside spoor's tree (tests/e2e/install/firmware, copied to a temporary directory)
   is built twice for QEMU's mps2-an385 (Cortex-M3): with plain Make and the installed
   spoor-target.mk, and with CMake and the installed spoor-target.cmake (spoor_target_add). Each
   runs in QEMU until it faults, resets, and hands its dump over through semihosting; the
   installed `spoor crash` must name the fault the source causes (a precise BusFault, BFAR the
   sensor address of sensor.c) and give the backtrace gdb-multiarch gives when stopped at the
   faulting instruction, function by function (frame 0 read_channel); frame 0's file:line must
   be arm-none-eabi-addr2line's. Built again with the application's -finstrument-functions
   (Make: in the CFLAGS the target library's sources are compiled with too; CMake: in
   CMAKE_C_FLAGS), the firmware must still reach its fault (the library's own functions are not
   instrumented) and `spoor calls` on its dump must show the calls that led there, each
   function at the address arm-none-eabi-nm gives, and no function of the target library.
4. A host program that opens an ELF and symbolizes an address (tests/e2e/install/host) is built
   against `pkg-config --cflags --libs spoor` (libspoor.so), against
   `pkg-config --static --libs spoor` with libspoor.a, and with find_package(spoor) against
   spoor::spoor and spoor::shared; each must print arm-none-eabi-addr2line's function and line.
4b. A host program that uses the analysis layer (tests/e2e/install/host/crash_json.c), built
   against `pkg-config --cflags --libs spoor` (libspoor.so) and `--static` (libspoor.a): the
   crash report's JSON of the Make firmware's dump (spoor_crash_json) must be the very bytes the
   installed `spoor crash --json` prints, and so must the report with --threads of the example
   scheduler stopped at sched_checkpoint (spoor-snapshot's regs.json and RAM image); its list of
   that snapshot's threads (spoor_threads_read) must name the threads, states and current thread
   of `spoor crash --json --threads`, each thread's PC that of its backtrace's first frame.
5. `man -l` renders the installed spoor(1) without warnings; every command of `spoor --help`
   has its section, and every flag of every command's --help appears in that section.
6. The installed bash completion registers itself for spoor and offers the commands and, for
   each command, every flag of its --help (bash's own complete/compgen, no bash-completion).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("SPOOR_BUILD_DIR", SOURCE_DIR / "build" / "check"))
INSTALL_TEST_DIR = Path(__file__).resolve().parent / "install"
MACHINE = "mps2-an385"
SENSOR_BASE = 0x60001230  # sensor.c: the first register read_channel() reads
BACKTRACE = ["read_channel", "sample_sensors", "main", "Reset_Handler"]  # sensor.c, startup.c


def run(command, timeout=120, **kwargs):
    """Runs a command; raises with its output when it fails."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                            timeout=timeout, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} exited {result.returncode}:\n"
                             f"{result.stdout}{result.stderr}")
    return result.stdout


def project_version():
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    return re.search(r"project\(spoor VERSION (\d+)\.(\d+)\.(\d+)", text).groups()


def dump_format_version():
    text = (SOURCE_DIR / "target" / "include" / "spoor" / "dump_format.h").read_text()
    return int(re.search(r"#define SPOOR_DUMP_VERSION (\d+)u", text).group(1))


def install_libdir():
    """CMAKE_INSTALL_LIBDIR of the build (GNUInstallDirs: "lib" for a prefix outside /usr)."""
    cache = (BUILD_DIR / "CMakeCache.txt").read_text()
    return re.search(r"^CMAKE_INSTALL_LIBDIR:PATH=(.*)$", cache, re.M).group(1)


def help_flags(text):
    """The flags an --help text defines: its option lines ("  -e, --elf FILE",
    "      --align=N", "  -t, --tpiu[=ID]")."""
    flags = set()
    for line in text.splitlines():
        match = re.match(r"^ {2,}(-[A-Za-z])?(?:, )?(--[a-z][a-z0-9-]*)?", line)
        if match and (match.group(1) or match.group(2)):
            flags.update(flag for flag in match.groups() if flag)
    return flags


def addr2line(elf, address):
    """(function, file name, line) from arm-none-eabi-addr2line -f."""
    out = run([harness.require_tool("arm-none-eabi-addr2line"), "-f", "-e", elf,
               f"{address:#x}"]).splitlines()
    file_name, line = out[1].rsplit(":", 1)
    return out[0], Path(file_name).name, int(line.split()[0])


def function_address(elf, name):
    return harness.symbol_addresses(elf)[name]


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="spoor-install-")
        cls.work = Path(cls.tmp.name)
        cls.prefix = cls.work / "prefix"
        run(["cmake", "--install", BUILD_DIR, "--prefix", cls.prefix])
        cls.spoor = cls.prefix / "bin" / "spoor"
        cls.libdir = cls.prefix / install_libdir()
        cls.env = dict(os.environ, PKG_CONFIG_PATH=str(cls.libdir / "pkgconfig"))
        # the Make firmware: also the ELF the host programs symbolize
        cls.make_elf = cls.build_make_firmware()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def firmware_copy(cls, name):
        """tests/e2e/install/firmware copied out of spoor's tree."""
        directory = cls.work / name
        shutil.copytree(INSTALL_TEST_DIR / "firmware", directory)
        return directory

    @classmethod
    def build_make_firmware(cls, name="fw-make", extra_cflags=""):
        directory = cls.firmware_copy(name)
        run(["make", "-C", directory, f"SPOOR_PREFIX={cls.prefix}", "BUILD=out",
             f"EXTRA_CFLAGS={extra_cflags}"])
        return directory / "out" / "sensor.elf"

    def pkg_config(self, *args):
        return run(["pkg-config", *args, "spoor"], env=self.env).split()

    # ------------------------------------------------------------ 1, 2: what is installed

    def test_installed_files(self):
        major = project_version()[0]
        for relative in ["bin/spoor", "share/man/man1/spoor.1",
                         "share/bash-completion/completions/spoor",
                         "share/spoor/spoor-target.mk", "share/spoor/spoor-target.cmake",
                         "share/spoor/spoor-sections.ld", "share/spoor/arm-none-eabi.cmake",
                         "share/spoor/target/include/spoor/crash.h",
                         "share/spoor/target/src/cortexm/crash_cortexm.c"]:
            self.assertTrue((self.prefix / relative).is_file(), relative)
        for relative in ["libspoor.a", f"libspoor.so.{major}", "libspoor.so",
                         "pkgconfig/spoor.pc", "cmake/spoor/spoorConfig.cmake",
                         "cmake/spoor/spoorConfigVersion.cmake", "cmake/spoor/spoorTargets.cmake"]:
            self.assertTrue((self.libdir / relative).exists(), relative)
        # the target sources, all of them
        for source in (SOURCE_DIR / "target").glob("src/**/*.c"):
            relative = source.relative_to(SOURCE_DIR / "target")
            self.assertTrue((self.prefix / "share/spoor/target" / relative).is_file(), relative)
        # public headers only
        installed = sorted(p.name for p in (self.prefix / "include" / "spoor").iterdir())
        public = sorted([p.name for p in (SOURCE_DIR / "include" / "spoor").glob("*.h")] +
                        ["dump_format.h", "cortexm_facts.h", "no_instrument.h"])
        self.assertEqual(installed, public)
        internal = {p.name for p in (SOURCE_DIR / "src" / "lib").rglob("*.h")} | \
            {p.name for p in (SOURCE_DIR / "src" / "util").glob("*.h")}
        self.assertTrue(internal, "no internal headers found under src/lib")
        self.assertFalse(internal & set(installed), "internal headers installed")

    def test_shared_library(self):
        major = project_version()[0]
        library = self.libdir / f"libspoor.so.{major}"
        dynamic = run(["readelf", "-d", library])
        self.assertIn(f"Library soname: [libspoor.so.{major}]", dynamic)
        node = "SPOOR_{}.{}".format(*project_version()[:2])
        versioned = [line.split()[-1] for line in
                     run(["nm", "-D", "--defined-only", library]).splitlines() if line.strip()]
        # one version node, the project's (cmake/export_map.cmake), on every exported name
        self.assertEqual([n for n in versioned if "@" not in n], [node])
        names = [n.split("@")[0] for n in versioned if "@" in n]
        self.assertEqual([n for n in versioned if "@" in n and not n.endswith("@@" + node)], [])
        self.assertIn("spoor_elf_open", names)
        # helpers are no part of the ABI: the number parser and JSON reader (src/util), the
        # library's side of the error convention, the GDB client's reply and XML parsers
        for helper in ("spoor_parse_u32", "spoor_hex_digit1", "spoor_json_read", "spoor_set_error",
                       "spoor_gdb_parse_tdesc", "spoor_gdb_decode_hex_reply"):
            self.assertNotIn(helper, names)
        self.assertIn("spoor_crc32", names)  # the portable target code is part of libspoor
        self.assertEqual([n for n in names if not n.startswith("spoor_")], [],
                         "libspoor.so exports names without the spoor_ prefix")
        # the static library holds the portable target code too
        self.assertRegex(run(["nm", "--defined-only", self.libdir / "libspoor.a"]),
                         r"(?m) T spoor_crc32$")

    def test_version(self):
        version = ".".join(project_version())
        self.assertEqual(run([self.spoor, "--version"]).strip(),
                         f"spoor {version} (dump format versions read: {dump_format_version()})")

    def test_public_headers_compile_alone(self):
        cflags = self.pkg_config("--cflags")
        for header in sorted((self.prefix / "include" / "spoor").glob("*.h")):
            unit = self.work / f"header_{header.stem}.c"
            unit.write_text(f'#include "spoor/{header.name}"\n')
            with self.subTest(header=header.name):
                run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *cflags,
                     unit])

    # ------------------------------------------------------------ 3: firmware

    def check_firmware(self, elf):
        """Runs the firmware to its dump, reads it with the installed spoor, compares with
        gdb-multiarch stopped at the faulting instruction."""
        dump = elf.parent / "crash.bin"
        with harness.Qemu(elf, MACHINE, semihosting_args=f"arg={dump}") as qemu:
            result = qemu.wait(30)
        self.assertEqual(result.returncode, 0, result.output)
        self.assertIn("crash dump saved", result.output)
        report = json.loads(run([self.spoor, "crash", "--json", "-e", elf, dump]))
        self.assertEqual(report["warnings"], [], "the dump names another ELF?")
        fault = report["fault"]
        self.assertEqual(fault["type"], "BusFault")
        self.assertIn("PRECISERR", {bit["name"] for bit in fault["bits"]})
        self.assertEqual(int(fault["address"], 16), SENSOR_BASE)

        pc = int(report["registers"]["pc"], 16)
        sp = int(report["registers"]["sp"], 16)
        with harness.Qemu(elf, MACHINE, gdb=True, semihosting_args="arg=/dev/null") as qemu:
            text = harness.run_gdb(elf, qemu.gdb_port, [
                "set backtrace past-main on", f"break *{pc:#x} if $sp == {sp:#x}", "continue",
                "bt", "kill"])
        self.assertIn("Breakpoint 1,", text)
        gdb_frames = harness.parse_backtrace(text)
        self.assertEqual(gdb_frames, BACKTRACE, text)
        spoor_frames = [frame["function"] for frame in report["backtrace"]]
        self.assertEqual(spoor_frames, gdb_frames)

        function, file_name, line = addr2line(elf, pc)
        frame = report["backtrace"][0]
        self.assertEqual((frame["function"], Path(frame["file"]).name, frame["line"]),
                         (function, file_name, line))
        # and the text report of the installed spoor says the same
        text = run([self.spoor, "crash", "-e", elf, dump])
        self.assertIn(f"BFAR {SENSOR_BASE:#010x}", text)
        self.assertRegex(text, rf"#0 +{pc:#010x} read_channel\+0x[0-9a-f]+ at \S*sensor\.c:{line}")

    def test_firmware_make(self):
        self.check_firmware(self.make_elf)

    def test_make_docs_sample(self):
        """docs/integrating.md's Makefile is this test's, and its `make` output is what make
        prints (the prefix as /opt/spoor; `...` in a compiler line stands for its flags, as the
        page shortens them; the build-id hex differs with the build's directory), spoor check's
        lines after the link included; arm-none-eabi-size's figures too. `make clean` works
        without SPOOR_PREFIX."""
        page = (SOURCE_DIR / "docs" / "integrating.md").read_text()
        section = page.split("### 2a. Plain Make", 1)[1].split("### 2b.", 1)[0]
        makefile = re.search(r"```make\n(.*?)```", section, re.S).group(1)
        own = (INSTALL_TEST_DIR / "firmware" / "Makefile").read_text().splitlines()
        while own and own[0].startswith("#"):
            own.pop(0)
        self.assertEqual(makefile, "# Makefile\n" + "\n".join(own) + "\n")
        block = re.search(r"```\n(\$ make SPOOR_PREFIX=/opt/spoor\n.*?)```", section,
                          re.S).group(1)
        make_out, size_out = block.split("$ arm-none-eabi-size build/sensor.elf\n")
        expected = make_out.splitlines()[1:]
        directory = self.firmware_copy("docs-sample")
        # as a user's shell runs it: not as a sub-make of `make check` (MAKELEVEL and MAKEFLAGS
        # would add "make[1]: Entering directory" lines)
        env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
        real = subprocess.run(["make", f"SPOOR_PREFIX={self.prefix}"], cwd=directory, env=env,
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(real.returncode, 0, real.stdout + real.stderr)
        got = (real.stdout + real.stderr).replace(str(self.prefix), "/opt/spoor").splitlines()

        def norm(line):
            return re.sub(r"build-id: [0-9a-f]{40}", "build-id: ID", line)
        self.assertEqual(len(got), len(expected), "\n".join(got))
        for want, line in zip(expected, got):
            if " ... " in want:
                head, tail = want.split(" ... ", 1)
                self.assertTrue(line.startswith(head + " ") and line.endswith(" " + tail),
                                f"{line!r} is not {want!r}")
            else:
                self.assertEqual(norm(line), norm(want))
        size = run(["arm-none-eabi-size", "build/sensor.elf"], cwd=directory)
        self.assertEqual(size, size_out)
        clean = subprocess.run(["make", "clean"], cwd=directory, capture_output=True, text=True)
        self.assertEqual(clean.returncode, 0, clean.stderr)
        self.assertFalse((directory / "build").exists())

    def build_cmake_firmware(self, name, *options):
        directory = self.firmware_copy(name)
        run(["cmake", "-S", directory, "-B", directory / "out",
             f"-DCMAKE_TOOLCHAIN_FILE={self.prefix}/share/spoor/arm-none-eabi.cmake",
             f"-DSPOOR_PREFIX={self.prefix}", *options])
        built = run(["cmake", "--build", directory / "out"])
        # spoor_target_add's POST_BUILD step: the installed spoor check on the firmware
        self.assertIn("out/sensor.elf: spoor is wired", built)
        return directory / "out" / "sensor.elf"

    def test_firmware_cmake(self):
        self.check_firmware(self.build_cmake_firmware("fw-cmake"))

    def check_recorded_calls(self, elf):
        """The dump's call ring ends in main -> sample_sensors -> read_channel, the fault's
        path in sensor.c, at the functions' nm addresses; the library recorded none of its
        own functions."""
        self.check_firmware(elf)
        records = [json.loads(line) for line in
                   run([self.spoor, "calls", "--json", "-e", elf, elf.parent / "crash.bin"])
                   .splitlines()]
        enters = [r for r in records if r["kind"] == "enter"]
        self.assertGreaterEqual(len(enters), 2, records)
        self.assertEqual([(r["function"], r["caller"].split("+")[0]) for r in enters[-2:]],
                         [("sample_sensors", "main"), ("read_channel", "sample_sensors")])
        for r in enters[-2:]:
            self.assertEqual(int(r["fn"], 16), function_address(elf, r["function"]))
        self.assertEqual([r for r in records if r.get("function", "").startswith("spoor_")], [])

    def test_firmware_make_instrumented(self):
        for name, flags in (("fw-make-instr", "-finstrument-functions"),
                            ("fw-make-instr-O0", "-finstrument-functions -O0 -fno-inline")):
            with self.subTest(flags=flags):
                self.check_recorded_calls(self.build_make_firmware(name, flags))

    def test_firmware_cmake_instrumented(self):
        self.check_recorded_calls(self.build_cmake_firmware(
            "fw-cmake-instr", "-DCMAKE_C_FLAGS=-finstrument-functions"))

    # ------------------------------------------------------------ 4: host programs

    def check_symbolize(self, program):
        address = function_address(self.make_elf, "sample_sensors") + 4
        function, file_name, line = addr2line(self.make_elf, address)
        out = run([program, self.make_elf, f"{address:#x}"]).split()
        self.assertEqual(out[0], function)
        self.assertEqual(out[0], "sample_sensors")
        got_file, got_line = out[1].rsplit(":", 1)
        self.assertEqual((Path(got_file).name, int(got_line)), (file_name, line))
        failed = subprocess.run([str(program), "/bin/sh", "0"], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(failed.returncode, 2)
        self.assertIn("not a 32-bit ARM ELF", failed.stderr)

    def test_host_pkg_config(self):
        source = INSTALL_TEST_DIR / "host" / "symbolize.c"
        libdir = self.pkg_config("--variable=libdir")[0]
        shared = self.work / "symbolize-pc"
        run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", source, "-o", shared,
             *self.pkg_config("--cflags", "--libs"), f"-Wl,-rpath,{libdir}"])
        self.assertIn("libspoor.so", run(["readelf", "-d", shared]))
        # the program records the version node of the names it takes from libspoor
        self.assertRegex(run(["readelf", "-V", shared]),
                         r"File: libspoor\.so\.\d+[^\n]*\n[^\n]*Name: SPOOR_{}\.{}\b"
                         .format(*project_version()[:2]))
        self.check_symbolize(shared)
        # static: libspoor.a by name, everything else from --static (Requires/Libs.private)
        static = self.work / "symbolize-pc-static"
        libs = ["-l:libspoor.a" if flag == "-lspoor" else flag
                for flag in self.pkg_config("--static", "--libs")]
        run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", source, "-o", static,
             *self.pkg_config("--cflags"), *libs])
        self.assertNotIn("libspoor.so", run(["readelf", "-d", static]))
        self.check_symbolize(static)

    def test_host_cmake(self):
        build = self.work / "host-cmake"
        run(["cmake", "-S", INSTALL_TEST_DIR / "host", "-B", build,
             f"-DCMAKE_PREFIX_PATH={self.prefix}"])
        run(["cmake", "--build", build])
        self.assertNotIn("libspoor.so", run(["readelf", "-d", build / "symbolize"]))
        self.check_symbolize(build / "symbolize")
        self.assertIn("libspoor.so", run(["readelf", "-d", build / "symbolize_shared"]))
        self.check_symbolize(build / "symbolize_shared")

    def build_crash_json(self):
        """crash_json.c against libspoor.so and against libspoor.a."""
        source = INSTALL_TEST_DIR / "host" / "crash_json.c"
        libdir = self.pkg_config("--variable=libdir")[0]
        shared, static = self.work / "crash_json-pc", self.work / "crash_json-pc-static"
        run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", source, "-o", shared,
             *self.pkg_config("--cflags", "--libs"), f"-Wl,-rpath,{libdir}"])
        libs = ["-l:libspoor.a" if flag == "-lspoor" else flag
                for flag in self.pkg_config("--static", "--libs")]
        run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", source, "-o", static,
             *self.pkg_config("--cflags"), *libs])
        return shared, static

    def test_host_crash_json(self):
        from test_docs import gdb_snapshot  # the scheduler's snapshot, as docs/crash.md makes it
        programs = self.build_crash_json()
        dump = self.work / "api-crash.bin"
        with harness.Qemu(self.make_elf, MACHINE, semihosting_args=f"arg={dump}") as qemu:
            self.assertEqual(qemu.wait(30).returncode, 0)
        expected = run([self.spoor, "crash", "--json", "-e", self.make_elf, dump])
        self.assertEqual(json.loads(expected)["fault"]["type"], "BusFault")
        sched_elf, _ = harness.example("sched", "m3")
        snap = self.work / "api-sched"
        gdb_snapshot("sched", "m3", ["break sched_checkpoint", "continue"], snap)
        inputs = [snap / "regs.json", f"0x20000000:{snap / '0x20000000.bin'}"]
        expected_threads = run([self.spoor, "crash", "--json", "--threads", "-e", sched_elf,
                                "--regs", inputs[0], "--mem", inputs[1]])
        report = json.loads(expected_threads)
        self.assertGreaterEqual(len(report["threads"]), 4)
        for program in programs:
            with self.subTest(program=program.name):
                self.assertEqual(run([program, self.make_elf, dump]), expected)
                self.assertEqual(run([program, sched_elf, *inputs, "--threads"]),
                                 expected_threads)
                lines = run([program, "--list", sched_elf, *inputs]).splitlines()
                self.assertEqual(lines[-1], f"not shown {report['threads_not_shown']}")
                listed = [line.split() for line in lines[:-1]]
                self.assertEqual([(t[0], t[1], t[2], t[3] == "1") for t in listed],
                                 [(t["tcb"], t["name"] or "-", t["state"], t["current"])
                                  for t in report["threads"]])
                for t, fields in zip(report["threads"], listed):
                    if t["backtrace"]:
                        self.assertEqual(int(fields[4], 16), int(t["backtrace"][0]["pc"], 16))

    def test_host_top_table(self):
        """tests/e2e/install/host/top_table.c, built with pkg-config against libspoor.so, prints
        spoor top's interval table through the public API (spoor/top_session.h): every report
        and every thread's name, function, priority, cycles, switches and CPU shares equal the
        installed `spoor top --json` on the same stream and RAM image (the RTX5-shaped firmware
        of test_top_rtos_shapes.py, -I 1: a report per switch)."""
        from test_top_rtos_shapes import shape_with_stream
        work = self.work / "top-table"
        work.mkdir()
        elf, data, itm = shape_with_stream("RTX5", work, ["main_thread", "sensor", "idle",
                                                          "main_thread", "sensor"])
        program = work / "top_table"
        libdir = self.pkg_config("--variable=libdir")[0]
        run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", INSTALL_TEST_DIR / "host" /
             "top_table.c", "-o", program, *self.pkg_config("--cflags", "--libs"),
             f"-Wl,-rpath,{libdir}"])
        memory = f"0x20000000:{data}"
        got = run([program, elf, "1000000", "1", itm, memory]).splitlines()
        jsonl = work / "top.jsonl"
        run([self.spoor, "top", "-e", elf, "--mem", memory, "--input", itm, "-F", "1000000",
             "-I", "1", "-j", jsonl])
        want = []
        for line in jsonl.read_text().splitlines():
            r = json.loads(line)
            want.append(f"report {r['interval']} {int(r['summary'])} {int(r['partial'])} "
                        f"{r['quiet_intervals']} {r['cpu_usage']:.3f} {r['cpu_max']:.3f}")
            for t in r["threads"]:
                prio = "-" if t["prio"] is None else t["prio"]
                want.append(f"thread {t['tcb']} {t['name'] or '-'} {t['func'] or '-'} {prio} "
                            f"{t['cycles']} {t['switches']} {t['cpu']:.3f} {t['max']:.3f} "
                            f"{int(t['idle'])}")
        self.assertGreater(len([w for w in want if w.startswith("report")]), 5, want)
        self.assertIn("sensor", " ".join(want))
        self.assertEqual(got, want)

    # ------------------------------------------------------------ 5, 6: man page, completion

    def commands(self):
        text = run([self.spoor, "--help"])
        block = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
        return [line.split()[0] for line in block.splitlines() if line.strip()]

    def test_man_page(self):
        page = self.prefix / "share" / "man" / "man1" / "spoor.1"
        rendered = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True,
                                  text=True, timeout=60, env=dict(os.environ, MANWIDTH="80"))
        self.assertEqual(rendered.returncode, 0, rendered.stderr)
        self.assertEqual(rendered.stderr, "", "warnings while rendering")
        self.assertIn("SPOOR(1)", rendered.stdout)
        self.assertIn("--version", rendered.stdout)
        source = page.read_text()
        plain = re.sub(r"\\f[BIRP]", "", source).replace("\\-", "-")
        sections = dict(re.findall(r'(?ms)^\.SS "spoor (\w+)"\n(.*?)(?=^\.S[SH] )', plain))
        commands = self.commands()
        self.assertEqual(sorted(sections), sorted(commands))
        for command in commands:
            flags = help_flags(run([self.spoor, command, "--help"]))
            self.assertGreater(len(flags), 2, command)
            for flag in sorted(flags):
                with self.subTest(command=command, flag=flag):
                    found = re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", sections[command])
                    self.assertTrue(found, f"{flag} is not in the man page's {command} section")

    def complete(self, *words):
        """What the installed completion offers for `spoor WORDS...` (the last is the word
        being completed)."""
        script = self.prefix / "share" / "bash-completion" / "completions" / "spoor"
        words = ["spoor", *words]
        # the completion asks the installed spoor for its commands and flags, found on PATH as a
        # user's shell finds it
        program = (f"PATH={self.prefix / 'bin'}:$PATH\nsource {script}\ncomplete -p spoor\n"
                   f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
                   f"COMP_CWORD={len(words) - 1}\n"
                   "$(complete -p spoor | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')\n"
                   "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        out = run(["bash", "--norc", "--noprofile", "-c", program]).splitlines()
        self.assertEqual(out[0], "complete -F _spoor spoor")
        return out[1:]

    def test_bash_completion(self):
        commands = self.commands()
        self.assertEqual(set(self.complete("")) & set(commands), set(commands))
        self.assertEqual(self.complete("cr"), ["crash"])
        for command in commands:
            offered = {flag.rstrip("=") for flag in self.complete(command, "-")}
            with self.subTest(command=command):
                self.assertEqual(help_flags(run([self.spoor, command, "--help"])) - offered,
                                 set())
        # -e takes a file
        self.assertIn(str(self.make_elf), self.complete("crash", "-e", str(self.make_elf)[:-3]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
