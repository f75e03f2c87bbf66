"""gdb commands for spoor. `mtb`: the Micro Trace Buffer of the target gdb is attached to, decoded
by spoor; `spoor-snapshot DIR`: the stopped target saved as the --regs/--mem input of spoor crash;
`spoor-dump FILE [BUFFER]`: the crash dump waiting in the target's .noinit buffer, saved to FILE;
`spoor-core-info [CORE]`: what a core written by `spoor core` holds beyond gdb's registers (MSP,
PSP, CONTROL, the fault status registers, the reason, each thread's TCB and name).

    (gdb) source gdb/spoor.py
    (gdb) mtb --limit 20                 # or -l 20 / -n 20
    (gdb) mtb --flow
    (gdb) mtb --mtb-regs 0x40006000      # an MTB-M0+ register block (vendor address)
    (gdb) mtb --freeze                   # stop the MTB while it is read, restore MASTER after
    (gdb) mtb --help
    (gdb) spoor-dump crash.bin crash_buffer   # the dump waiting in cfg.buffer, after the reset
    (gdb) spoor-dump crash.bin                # the buffer spoor_crash_init() was given in this run
    (gdb) spoor-core-info                     # gdb-multiarch FW.elf FW.core: spoor core's notes

The command runs `spoor mtb -e <the loaded ELF> --gdb 127.0.0.1:PORT` and serves that spoor the
target's memory through gdb: a small GDB remote server on a private localhost port answers
spoor's memory reads and writes with gdb's own (read_memory/write_memory). So spoor itself
reads the MTB's register block and the buffer it describes, and with --freeze stops and
restores the MTB exactly as `spoor mtb --freeze` does (docs/mtb.md): nothing of the MTB's
layout is computed here. The spoor program is $SPOOR_BIN, or `spoor` on the PATH. Stop the
target first, or give --freeze: a running MTB moves on while it is read.

To step back through the same history inside gdb (record instruction-history, reverse-step,
record goto), connect gdb to `spoor gdbserver` instead: it serves the MTB as gdb's own branch
trace (docs/gdbserver.md, "The MTB's history").
"""
import argparse
import os
import select
import shlex
import socket
import struct
import subprocess
import tempfile

import gdb  # noqa: F401  (only inside gdb)

USAGE = ("usage: mtb [-l|-n|--limit N] [--flow] [--calls] [--json] [--mtb-regs ADDR] "
         "[--freeze] [--help]")
HELP = USAGE + """
Decodes the target's Micro Trace Buffer with spoor mtb, reading the target through gdb.
  -l, -n, --limit N  the newest N branches only
      --flow         every instruction executed between the branches, with source lines
      --calls        the calls and returns the branches make
  -j, --json         one JSON object per branch
      --mtb-regs ADDR  the MTB register block (default 0xE0043000, the Cortex-M33's)
      --freeze       stop the MTB while it is read and restore it after
To walk this history with gdb's record commands (record instruction-history, reverse-step,
record goto), serve it with spoor gdbserver: docs/gdbserver.md, "The MTB's history".
"""
PACKET_SIZE = 4096


def _read(address, length):
    return bytes(gdb.selected_inferior().read_memory(address, length))


def _checksum(payload):
    return sum(payload) & 0xFF


def _frame(payload):
    return b"$" + payload + b"#" + b"%02x" % _checksum(payload)


class _MemoryServer:
    """The GDB remote protocol's memory packets (m, M) answered with gdb's view of the target,
    for one client (spoor) on a localhost port. Everything else a client may ask at connect
    time gets the protocol's "not supported" (an empty reply), `?` a stop reply."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.conn = None
        self.buf = b""
        self.ack = True

    def close(self):
        for s in (self.conn, self.listener):
            if s is not None:
                s.close()

    def serve(self, process):
        """Answers the client until it disconnects or process ends."""
        while process.poll() is None or self.conn is not None:
            waiting = [self.conn or self.listener]
            readable, _, _ = select.select(waiting, [], [], 0.1)
            if not readable:
                if process.poll() is not None and self.conn is None:
                    return
                continue
            if self.conn is None:
                self.conn, _ = self.listener.accept()
                continue
            data = self.conn.recv(65536)
            if not data:
                self.conn.close()
                self.conn = None
                return
            self.buf += data
            self._packets()

    def _packets(self):
        while True:
            self.buf = self.buf.lstrip(b"+-")
            start = self.buf.find(b"$")
            end = self.buf.find(b"#", start + 1) if start >= 0 else -1
            if end < 0 or len(self.buf) < end + 3:
                return
            payload = self.buf[start + 1:end]
            good = self.buf[end + 1:end + 3].lower() == b"%02x" % _checksum(payload)
            self.buf = self.buf[end + 3:]
            if self.ack:
                self.conn.sendall(b"+" if good else b"-")
            if good:
                reply = self._answer(payload)
                self.conn.sendall(_frame(reply))

    def _answer(self, payload):
        inferior = gdb.selected_inferior()
        if payload.startswith(b"qSupported"):
            return b"PacketSize=%x;QStartNoAckMode+" % PACKET_SIZE
        if payload == b"QStartNoAckMode":
            self.ack = False
            return b"OK"
        if payload == b"?":
            return b"S05"
        try:
            if payload[:1] == b"m":
                addr, length = (int(x, 16) for x in payload[1:].split(b","))
                return bytes(inferior.read_memory(addr, length)).hex().encode()
            if payload[:1] == b"M":
                head, data = payload[1:].split(b":", 1)
                addr, _ = (int(x, 16) for x in head.split(b","))
                inferior.write_memory(addr, bytes.fromhex(data.decode()))
                return b"OK"
        except gdb.MemoryError:
            return b"E01"
        except ValueError:
            return b"E02"
        return b""


class MtbCommand(gdb.Command):
    """Decode the Micro Trace Buffer with spoor: mtb [-l|--limit N] [--flow] [--calls] [--json]
[--mtb-regs ADDR] [--freeze] [--help]"""

    def __init__(self):
        super().__init__("mtb", gdb.COMMAND_DATA)

    def invoke(self, argument, from_tty):
        parser = argparse.ArgumentParser(prog="mtb", add_help=False)
        parser.add_argument("-n", "-l", "--limit", type=int)
        parser.add_argument("--flow", action="store_true")
        parser.add_argument("--calls", action="store_true")
        parser.add_argument("-j", "--json", action="store_true")
        parser.add_argument("--mtb-regs", type=lambda s: int(s, 0))
        parser.add_argument("--freeze", action="store_true")
        parser.add_argument("-h", "--help", action="store_true")
        try:
            args = parser.parse_args(shlex.split(argument))
        except SystemExit:
            raise gdb.GdbError(USAGE)
        if args.help:
            gdb.write(HELP)
            return
        elf = gdb.current_progspace().filename
        if not elf:
            raise gdb.GdbError("mtb: no ELF loaded (file FW.elf)")
        server = _MemoryServer()
        command = [os.environ.get("SPOOR_BIN", "spoor"), "mtb", "-e", elf,
                   "--gdb", f"127.0.0.1:{server.port}"]
        if args.mtb_regs is not None:
            command += ["--mtb-regs", hex(args.mtb_regs)]
        if args.limit:
            command += ["--limit", str(args.limit)]
        command += [flag for flag, on in (("--flow", args.flow), ("--calls", args.calls),
                                          ("--json", args.json), ("--freeze", args.freeze)) if on]
        # spoor's output goes to files, read when it is done: a pipe could fill while this
        # thread serves spoor's memory requests
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                process = subprocess.Popen(command, stdout=out, stderr=err)
            except OSError as e:
                server.close()
                raise gdb.GdbError(f"mtb: {command[0]}: {e.strerror}")
            try:
                server.serve(process)
                process.wait()
            finally:
                server.close()
                if process.poll() is None:
                    process.kill()
                    process.wait()
            out.seek(0)
            err.seek(0)
            text, message = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        gdb.write(text)
        if process.returncode != 0:
            message = message.strip()
            raise gdb.GdbError(message.replace(f"127.0.0.1:{server.port}", "the target"))


MtbCommand()


# ---------------------------------------------------------------- spoor-snapshot

SNAPSHOT_REGISTERS = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "xpsr"]
# Known only when the GDB server gives them (OpenOCD, J-Link do; QEMU's gdbstub does not).
SNAPSHOT_OPTIONAL = ["msp", "psp", "control", "msplim", "psplim"]
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
SCS_PAGE = 0xE000ED00


def _writable_regions(elf):
    """(address, size) of the ELF's allocated writable sections (.stack, .data, .bss, .noinit,
    ...), sections closer than 256 bytes merged into one region."""
    with open(elf, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise gdb.GdbError(f"spoor-snapshot: {elf}: not a 32-bit little-endian ELF")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = []
    for i in range(shnum):
        _, _, flags, addr, _, size = struct.unpack_from("<IIIIII", data, shoff + i * shentsize)
        if flags & SHF_ALLOC and flags & SHF_WRITE and size:
            sections.append((addr, addr + size))
    regions = []
    for start, end in sorted(sections):
        if regions and start - regions[-1][1] < 256:
            regions[-1][1] = max(regions[-1][1], end)
        else:
            regions.append([start, end])
    return [(start, end - start) for start, end in regions]


class SnapshotCommand(gdb.Command):
    """Save the stopped target for spoor crash: spoor-snapshot [--scs] DIR

Writes DIR/regs.json (the registers of the innermost frame, the --regs format) and one raw
image DIR/ADDR.bin per RAM region the ELF's writable sections occupy (.stack, .data, .bss,
.noinit, ...), then prints the spoor crash command that reads them. --scs also saves the
System Control Space page (0xE000ED00, 256 bytes: the fault status registers)."""

    def __init__(self):
        super().__init__("spoor-snapshot", gdb.COMMAND_DATA, gdb.COMPLETE_FILENAME)

    def invoke(self, argument, from_tty):
        words = shlex.split(argument)
        scs = "--scs" in words
        words = [w for w in words if w != "--scs"]
        if len(words) != 1:
            raise gdb.GdbError("usage: spoor-snapshot [--scs] DIR")
        directory = words[0]
        elf = gdb.current_progspace().filename
        if not elf:
            raise gdb.GdbError("spoor-snapshot: no ELF loaded (file FW.elf)")
        frame = gdb.newest_frame()
        regs = {}
        for name in SNAPSHOT_REGISTERS + SNAPSHOT_OPTIONAL:
            try:
                value = int(frame.read_register(name)) & 0xFFFFFFFF
            except (gdb.error, ValueError):
                if name in SNAPSHOT_OPTIONAL:
                    continue
                raise gdb.GdbError(f"spoor-snapshot: register {name} cannot be read")
            regs[name] = f"0x{value:08x}"
        images = []
        for address, size in _writable_regions(elf):
            images.append((address, _read(address, size)))
        if scs:
            images.append((SCS_PAGE, _read(SCS_PAGE, 0x100)))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "regs.json"), "w") as f:
            items = [f'"{name}": "{value}"' for name, value in regs.items()]
            f.write("{" + ",\n ".join(", ".join(items[i:i + 4])
                                      for i in range(0, len(items), 4)) + "}\n")
        command = ["spoor", "crash", "-e", elf, "--regs", os.path.join(directory, "regs.json")]
        for address, image in images:
            path = os.path.join(directory, f"0x{address:08x}.bin")
            with open(path, "wb") as f:
                f.write(image)
            command += ["--mem", f"0x{address:08x}:{path}"]
        gdb.write(" ".join(shlex.quote(word) for word in command) + "\n")


SnapshotCommand()


# The capture buffer (target/src/dump_writer.c, spoor/crash.h): SPOOR_CRASH_CONTROL_SIZE bytes of
# state (u32 magic "SPCB", u32 state 0 empty / 1 waiting / 2 taken, u32 dropped, u32 check),
# then the dump (spoor/dump_format.h: u32 magic "SPDM", u16 version, u16 header size, u32 total
# size, u32 CRC-32 over the rest).
CONTROL_SIZE = 16
CONTROL_MAGIC = 0x42435053
DUMP_MAGIC = 0x4D445053
DUMP_HEADER_SIZE = 16
STATES = {0: "empty", 1: "waiting", 2: "taken"}
DUMP_USAGE = "usage: spoor-dump FILE [BUFFER]"


def _crc32(data, crc=0):
    import zlib
    return zlib.crc32(data, crc) & 0xFFFFFFFF


class DumpCommand(gdb.Command):
    """spoor-dump FILE [BUFFER]: writes the crash dump in the target's capture buffer to FILE.
BUFFER is an expression for the buffer given to spoor_crash_init() (cfg.buffer); without it,
the buffer of the spoor_crash_init() of this run. Checks the capture state and the dump's
header and CRC; the dump is written whether or not it was taken already."""

    def __init__(self):
        super().__init__("spoor-dump", gdb.COMMAND_DATA, gdb.COMPLETE_FILENAME)

    def invoke(self, argument, from_tty):
        args = gdb.string_to_argv(argument)
        if len(args) not in (1, 2):
            raise gdb.GdbError(DUMP_USAGE)
        path = args[0]
        if len(args) == 2:
            value = gdb.parse_and_eval(args[1])
            if value.type.strip_typedefs().code == gdb.TYPE_CODE_ARRAY:
                value = value.address
            buffer = int(value.cast(gdb.lookup_type("long").pointer())) & 0xFFFFFFFF
            size = None
        else:
            try:
                config = gdb.parse_and_eval("'dump_writer.c'::writer.config")
                buffer = int(config["buffer"]) & 0xFFFFFFFF
                size = int(config["buffer_size"])
            except gdb.error:
                raise gdb.GdbError("spoor-dump: spoor_crash_init() has not run in this program "
                                   "(or the ELF has no debug info): give the buffer")
            if buffer == 0:
                raise gdb.GdbError("spoor-dump: spoor_crash_init() has not run: give the buffer")
        magic, state, dropped, _ = struct.unpack("<4I", _read(buffer, CONTROL_SIZE))
        header = _read(buffer + CONTROL_SIZE, DUMP_HEADER_SIZE)
        dump_magic, _, _, total, stored = struct.unpack("<IHHII", header)
        if dump_magic != DUMP_MAGIC:
            raise gdb.GdbError(f"spoor-dump: no dump at 0x{buffer + CONTROL_SIZE:08x} "
                               "(bad magic)")
        if total < DUMP_HEADER_SIZE or (size is not None and total > size - CONTROL_SIZE):
            raise gdb.GdbError(f"spoor-dump: the dump's size {total} does not fit the buffer")
        dump = _read(buffer + CONTROL_SIZE, total)
        if _crc32(dump[16:], _crc32(dump[:12])) != stored:
            raise gdb.GdbError("spoor-dump: the dump's CRC does not match (an incomplete or "
                               "overwritten dump)")
        with open(path, "wb") as f:
            f.write(dump)
        what = STATES.get(state, "unknown") if magic == CONTROL_MAGIC else "no capture state"
        extra = f", {dropped} later crashes dropped" if magic == CONTROL_MAGIC and dropped else ""
        gdb.write(f"spoor-dump: {total} bytes of dump (state: {what}{extra}) written to {path}\n")


DumpCommand()


# ---- spoor-core-info: spoor's own notes in a core written by `spoor core` (docs/core.md) ----

CORE_INFO_USAGE = "usage: spoor-core-info [CORE]"
NT_SPOOR_STATE, NT_SPOOR_THREADS = 1, 2
STATE_WORDS = 24
FAULT_REGISTERS = ["CFSR", "HFSR", "DFSR", "MMFAR", "BFAR", "AFSR", "SFSR", "SFAR"]
FAULT_SOURCES = {1: "dump", 2: "registers file", 3: "memory (System Control Space)",
                 4: "live target (System Control Space)"}
REASONS = {1: "fault", 2: "assert", 3: "watchdog", 4: "user"}
HAVE_BANKED_SP, HAVE_EXC_RETURN, NO_EXC_RETURN = 0x02, 0x04, 0x80000000


def _core_path():
    """The core file gdb has open (`info files`: "Local core dump file: `PATH', ...")."""
    lines = gdb.execute("info files", to_string=True).splitlines()
    for i, line in enumerate(lines[:-1]):
        path = lines[i + 1].strip()
        if line.startswith("Local core dump file:") and path.startswith("`") and "'" in path:
            return path[1:path.rindex("'")]
    raise gdb.GdbError("spoor-core-info: no core file open (core-file FW.core, or give its path)")


def _spoor_notes(path):
    """The notes named "SPOOR" of an ELF32 little-endian core: {type: descriptor}."""
    with open(path, "rb") as f:
        head = f.read(52)
        if head[:4] != b"\x7fELF" or head[4] != 1 or head[5] != 1:
            raise gdb.GdbError(f"spoor-core-info: {path}: not a 32-bit little-endian ELF file")
        phoff, = struct.unpack_from("<I", head, 28)
        phentsize, phnum = struct.unpack_from("<HH", head, 42)
        notes = {}
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, p_offset, _, _, p_filesz = struct.unpack("<5I", f.read(20))
            if p_type != 4:  # PT_NOTE
                continue
            f.seek(p_offset)
            data = f.read(p_filesz)
            at = 0
            while at + 12 <= len(data):
                namesz, descsz, ntype = struct.unpack_from("<3I", data, at)
                name = data[at + 12:at + 12 + namesz].rstrip(b"\0")
                desc_at = at + 12 + (namesz + 3) // 4 * 4
                if name == b"SPOOR":
                    notes[ntype] = data[desc_at:desc_at + descsz]
                at = desc_at + (descsz + 3) // 4 * 4
    return notes


def _set_convenience(name, value):
    gdb.set_convenience_variable(name, gdb.Value(value).cast(gdb.lookup_type("unsigned int")))


class CoreInfoCommand(gdb.Command):
    """spoor-core-info [CORE]: what spoor core put in its own notes of the core gdb has open (or
of CORE): MSP, PSP, CONTROL and EXC_RETURN (not in gdb's registers of a core), the fault status
registers and where they came from, the dump's reason, and each thread's LWP, TCB and name (gdb
names a core's threads LWP N). Sets $spoor_msp, $spoor_psp, $spoor_control, $spoor_exc_return
and $spoor_cfsr ... $spoor_sfar for the values known."""

    def __init__(self):
        super().__init__("spoor-core-info", gdb.COMMAND_STATUS, gdb.COMPLETE_FILENAME)

    def invoke(self, argument, from_tty):
        args = gdb.string_to_argv(argument)
        if len(args) > 1:
            raise gdb.GdbError(CORE_INFO_USAGE)
        path = args[0] if args else _core_path()
        try:
            notes = _spoor_notes(path)
        except OSError as e:
            raise gdb.GdbError(f"spoor-core-info: {path}: {e.strerror}")
        state = notes.get(NT_SPOOR_STATE)
        if state is None:
            raise gdb.GdbError(f"spoor-core-info: {path}: no spoor note (not a core spoor core "
                               "wrote)")
        if len(state) < STATE_WORDS * 4 + 2 or struct.unpack_from("<I", state)[0] != 1:
            raise gdb.GdbError(f"spoor-core-info: {path}: a spoor state note cut short or of "
                               "another version")
        w = struct.unpack_from(f"<{STATE_WORDS}I", state)
        texts = state[STATE_WORDS * 4:].split(b"\0")
        have = w[1]
        out = [f"spoor core notes of {os.path.basename(path)}:"]
        if have & HAVE_BANKED_SP:
            exc = ("unknown (not in the input)" if have & NO_EXC_RETURN
                   else f"0x{w[6]:08x}")
            out.append(f"  msp 0x{w[3]:08x}  psp 0x{w[4]:08x}  control 0x{w[5]:08x}  "
                       f"exc_return {exc}")
            for name, value in (("msp", w[3]), ("psp", w[4]), ("control", w[5])):
                _set_convenience("spoor_" + name, value)
            if not have & NO_EXC_RETURN:
                _set_convenience("spoor_exc_return", w[6])
        else:
            out.append("  msp, psp, control: not known (not in the input)")
        valid = w[11]
        if valid:
            regs = [(FAULT_REGISTERS[i], w[12 + i]) for i in range(8) if valid & (1 << i)]
            out.append("  " + "  ".join(f"{n} 0x{v:08x}" for n, v in regs))
            out.append(f"  fault status from: {FAULT_SOURCES.get(w[10], 'unknown')}")
            for name, value in regs:
                _set_convenience("spoor_" + name.lower(), value)
        else:
            out.append("  fault status registers: not known")
        if w[20]:
            reason = REASONS.get(w[21], f"reason {w[21]}")
            message = texts[1].decode(errors="replace") if len(texts) > 1 else ""
            where = texts[0].decode(errors="replace") if texts else ""
            detail = f" at {where}:{w[23]}" if where else ""
            code = (f" (exception {w[22]})" if w[21] == 1 and w[22] else
                    "" if w[21] == 1 else f" (code {w[22]})")
            out.append(f"  reason: {reason}{code}{detail}{': ' + message if message else ''}")
        else:
            out.append("  reason: none recorded")
        threads = notes.get(NT_SPOOR_THREADS)
        if threads:
            out.append("  LWP  TCB         name")
            for at in range(0, len(threads) - 59, 60):
                lwp, tcb, flags = struct.unpack_from("<3I", threads, at)
                name = threads[at + 12:at + 60].split(b"\0")[0].decode(errors="replace")
                mark = "*" if flags & 1 else " "
                extra = "  (on no thread list)" if flags & 2 else ""
                out.append(f"{mark} {lwp:<4} 0x{tcb:08x}  {name}{extra}")
        gdb.write("\n".join(out) + "\n")


CoreInfoCommand()
