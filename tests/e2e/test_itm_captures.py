"""spoor itm end to end: the JSON field names of every packet type (on a stream built from the
ARMv7-M ARM D4 encodings), the real captures through the CLI (SWO, TPIU, rust-itm), software
channel text, the TCP source with a reconnection, the serial source on a pty, symbols with
-e, and one-line errors with exit status 2 for bad input."""
import json
import os
import pty
import select
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
SHARED = os.environ["SPOOR_SHARED_DIR"]
FIRMWARE = os.environ.get("SPOOR_FIRMWARE_DIR", "")
ITM = os.path.join(SHARED, "testdata", "itm")
SWO = os.path.join(ITM, "cmsis-ctrace-blinky", "Blinky+Arm.SWO.raw")
TB = os.path.join(ITM, "cmsis-ctrace-blinky", "Blinky+Arm.TB.raw")
RUST = os.path.join(ITM, "rust-itm", "itm.bin")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, stdin=None, timeout=60):
    return subprocess.run([SPOOR, "itm"] + args, input=stdin, capture_output=True,
                          timeout=timeout)


def json_lines(out):
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


# Every packet type with the field names the issue specifies (besides type/offset/time).
FIELDS = {
    "sync": set(), "overflow": set(), "ts_local": {"delta", "tc"},
    "ts_global1": {"value", "wrap", "clkch"}, "ts_global2": {"value"}, "ext": {"page"},
    "sw": {"port", "size", "value"},
    "event_counter": {"cpi", "exc", "sleep", "lsu", "fold", "cyc"},
    "exception": {"number", "action"}, "pc_sample": {"pc"}, "dwt_pc": {"comparator", "pc"},
    # "offset" is the stream position on every line, so the address offset is "addr_offset"
    "dwt_addr": {"comparator", "addr_offset"},
    "dwt_data": {"comparator", "write", "size", "value"}, "error": {"bytes_lost", "why"},
}

ALL_TYPES = bytes([
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  # sync
    0x70,  # overflow
    0x94, 0x80, 0xA0, 0x84, 0x60,  # GTS1 (wrap, clkch)
    0xB4, 0xBD, 0xF4, 0x91, 0x01,  # GTS2
    0x18, 0x01, 0x41,  # page 1, port 32 = 'A'
    0x08,  # page 0
    0x05, 0x2A,  # event counter: cyc, lsu, exc
    0x0E, 0x0F, 0x10,  # exception 15 enter
    0x17, 0x78, 0x56, 0x34, 0x12,  # PC sample
    0x15, 0x00,  # PC sample, asleep
    0x47, 0xAA, 0xB8, 0x00, 0x08,  # dwt_pc cmp 0
    0x6E, 0x34, 0x12,  # dwt_addr cmp 2
    0x8F, 0xC2, 0x00, 0x00, 0x00,  # dwt_data cmp 0 write word
    0xC0, 0xE4, 0x00,  # LTS1 100 (dates all of the above)
    0x1D,  # reserved header: error until the end
])


def test_json_fields():
    with tempfile.NamedTemporaryFile(suffix=".itm") as f:
        f.write(ALL_TYPES)
        f.flush()
        r = run(["--json", f.name])
    check(r.returncode == 0, f"--json exit {r.returncode}: {r.stderr}")
    lines = json_lines(r.stdout)
    seen = {}
    for obj in lines:
        t = obj.get("type")
        check(t in FIELDS, f"unknown type {t}")
        keys = set(obj) - {"type", "offset", "time"}
        check("offset" in obj and "time" in obj, f"{t}: no offset/time")
        check(keys == FIELDS.get(t), f"{t}: fields {sorted(keys)}")
        seen.setdefault(t, []).append(obj)
    check(set(seen) == set(FIELDS), f"types seen: {sorted(seen)}")
    check(seen["sw"][0]["port"] == 32 and seen["sw"][0]["value"] == 0x41, "sw page 1")
    check(seen["ts_global1"][0]["wrap"] is True and seen["ts_global1"][0]["clkch"] is True,
          "gts1 flags")
    check(seen["ext"][1]["page"] == 0, "0x08 is the page-0 extension")
    check(seen["exception"][0] == {"type": "exception", "offset": 23, "time": 100,
                                   "number": 15, "action": "enter"}, "exception line")
    check([p["pc"] for p in seen["pc_sample"]] == [0x12345678, None], "pc samples")
    d = seen["dwt_data"][0]
    check((d["comparator"], d["write"], d["size"], d["value"]) == (0, True, 4, 0xC2), "dwt_data")
    check(seen["dwt_addr"][0]["comparator"] == 2 and seen["dwt_addr"][0]["addr_offset"] == 0x1234,
          "dwt_addr")
    check(seen["error"][0]["offset"] == len(ALL_TYPES) - 1, "error offset")
    check(seen["error"][0]["bytes_lost"] == 1, "error bytes_lost")


def test_swo_capture():
    r = run(["--json", SWO])
    check(r.returncode == 0, f"SWO exit {r.returncode}")
    lines = json_lines(r.stdout)
    pcs = [o["pc"] for o in lines if o["type"] == "dwt_pc"]
    check(0xB8AA47AA not in pcs, "bogus PC 0xb8aa47aa emitted")
    errors = [o for o in lines if o["type"] == "error"]
    check(any(e["offset"] <= 8192 < e["offset"] + e["bytes_lost"] for e in errors),
          "loss at 8192 not reported")
    check(errors and errors[-1]["offset"] + errors[-1]["bytes_lost"] == 12288,
          "truncated last packet not reported")
    r = run(["--stats", SWO])
    text = r.stdout.decode()
    check("dwt_data       527" in text, "stats: 527 data values")
    check("errors      3" in text, f"stats errors: {text}")


def test_tpiu_capture():
    r = run(["--tpiu", "--json", TB])
    check(r.returncode == 0, f"TPIU exit {r.returncode}")
    lines = json_lines(r.stdout)
    streams = {o["stream"] for o in lines}
    check(streams == {1, 2}, f"TPIU streams {streams}")
    check(not [o for o in lines if o["type"] == "error"], "TPIU streams decode with errors")
    check(b"frames start at offset 0" in r.stderr, f"alignment not reported: {r.stderr}")
    r = run(["--tpiu=2", "--json", TB])
    check({o["stream"] for o in json_lines(r.stdout)} == {2}, "--tpiu=2 selects ID 2")
    # --json --stats: the deframer's counts are a JSON object too (every stdout line parses),
    # before the per-stream stats; the frames are the file's 16-byte pieces
    r = run(["--tpiu", "--json", "--stats", TB])
    lines = json_lines(r.stdout)  # raises on a line that is not JSON
    tpiu = [o for o in lines if o["type"] == "tpiu"]
    size = os.path.getsize(TB)
    check(len(tpiu) == 1 and tpiu[0]["bytes"] == size and tpiu[0]["frames"] == size // 16
          and "frames start at offset 0" in tpiu[0]["why"], f"--json --stats tpiu {tpiu}")
    check([o["type"] for o in lines[-3:]] == ["tpiu", "stats", "stats"], "tpiu before stats")
    r = run(["--tpiu", "--stats", TB])
    check(r.stdout.startswith(b"tpiu: %d bytes, %d frames" % (size, size // 16)),
          "text --stats keeps its tpiu line")


def test_rust_itm():
    r = run(["--json", RUST])
    lines = json_lines(r.stdout)
    exc = [(o["number"], o["action"]) for o in lines if o["type"] == "exception"]
    check(exc[:6] == [(22, "enter"), (24, "enter"), (24, "exit"), (23, "enter"), (23, "exit"),
                      (22, "return")], f"rust-itm exceptions {exc}")
    check(not [o for o in lines if o["type"] == "error"], "rust-itm errors")


def test_channels():
    text = b"Hello, ITM!\n"
    stream = bytearray()
    for i, ch in enumerate(text):
        stream += bytes([0x01, ch])  # port 0, one byte
        stream += bytes([0x09, 0x5A])  # port 1: not printed
        if i % 3 == 0:
            stream += bytes([0x10])  # timestamps in between
    stream += bytes([0x03]) + b"abc\n"  # port 0, a word: four characters
    stream += bytes([0x0B, 0xFE, 0xFF, 0xFF, 0xFF])  # port 1, a word: -2 with %d
    r = run(["-c", "0,%c", "-c", "1,[%d]\\n", "-"], stdin=bytes(stream))
    check(r.returncode == 0, f"-c exit {r.returncode}")
    want = b"Hello, ITM!\n" + b"[90]\n" * len(text) + b"abc\n[-2]\n"
    got = r.stdout
    # port 0 and port 1 interleave in stream order
    check(sorted(got) == sorted(want) and got.startswith(b"H[90]\ne[90]\n"),
          f"-c output {got[:60]!r}")


def test_channel_text_without_timestamps():
    # printf text with no timestamp at all (the hold queue releases packets as it fills), on
    # ports 0 and 1, with 2- and 4-byte writes and other packets between: -c %c prints every
    # byte of the ports asked for, in stream order
    import random
    rng = random.Random(12)
    stream, want0, want01 = bytearray(), bytearray(), bytearray()
    for i in range(20000):
        r = rng.random()
        ch = rng.randrange(32, 127)
        if r < 0.8:
            stream += bytes([0x01, ch])
            want0.append(ch)
            want01.append(ch)
        elif r < 0.9:
            stream += bytes([0x09, ch])
            want01.append(ch)
        elif r < 0.93:
            stream += bytes([0x02, ch, ch + 1 & 0x7F])
            want0 += bytes([ch, ch + 1 & 0x7F])
            want01 += bytes([ch, ch + 1 & 0x7F])
        elif r < 0.96:
            stream += bytes([0x0B]) + b"word"
            want01 += b"word"
        else:
            stream += bytes([0x47, 0x10, 0x20, 0x00, 0x08])  # a data trace PC
    with tempfile.NamedTemporaryFile(suffix=".itm") as f:
        f.write(stream)
        f.flush()
        for args, want in ((["-c", "0,%c"], want0), (["-c", "0,%c", "-c", "1,%c"], want01),
                           (["-c", "1,%c", "-c", "0,%c", "--stats"], None)):
            r = run(args + [f.name])
            if want is None:  # the text, then the stats
                check(r.stdout.startswith(bytes(want01)) and b"sw             " in r.stdout,
                      "-c with --stats")
                continue
            check(r.returncode == 0 and r.stdout == bytes(want),
                  f"-c {args}: {len(r.stdout)} bytes, want {len(want)}")
            r = run(args + ["-"], stdin=bytes(stream))  # the pipe path: other chunks
            check(r.stdout == bytes(want), f"-c {args} from a pipe")


def test_bad_input():
    r = run(["/nonexistent/capture.bin"])
    check(r.returncode == 2 and len(r.stderr.decode().strip().splitlines()) == 1,
          f"missing file: {r.returncode} {r.stderr}")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    r = run([f"tcp:127.0.0.1:{port}"])
    check(r.returncode == 2 and len(r.stderr.decode().strip().splitlines()) == 1,
          f"dead socket: {r.returncode} {r.stderr}")
    for args in (["--tpiu=200", SWO], ["-c", "0", SWO], ["-c", "0,%s", SWO],
                 ["--bogus"], ["tcp:nohost", SWO], ["serial:/dev/null:123"]):
        r = run(args)
        check(r.returncode == 2 and len(r.stderr.decode().strip().splitlines()) == 1,
              f"{args}: {r.returncode} {r.stderr}")
    r = subprocess.run([SPOOR, "itm", "--help"], capture_output=True)
    check(r.returncode == 0 and b"--tpiu" in r.stdout, "--help")


def serve_pieces(pieces):
    """A TCP server that sends each piece on a connection of its own, then closes; returns
    its port and thread."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        for part in pieces:
            conn, _ = srv.accept()
            conn.sendall(part)
            time.sleep(0.3)
            conn.close()
        srv.close()

    th = threading.Thread(target=serve)
    th.start()
    return srv.getsockname()[1], th


def test_tcp_reconnect():
    data = open(SWO, "rb").read()
    port, th = serve_pieces([data[:5000], data[5000:]])
    r = run(["--stats", "--reconnect=1", f"tcp:127.0.0.1:{port}"], timeout=30)
    th.join()
    text = r.stdout.decode()
    check(b"reconnected" in r.stderr, f"no reconnection note: {r.stderr}")
    check(f"bytes       {len(data)}" in text, f"tcp bytes: {text}")
    check(r.returncode == 2 and b"no reconnection within 1 s" in r.stderr,
          f"end of the TCP stream: {r.returncode} {r.stderr}")


def sw32(a, value):
    """Instrumentation packet (ARMv7-M ARM D4.2.8): port A of the current page, 4 bytes."""
    return bytes([a << 3 | 3]) + value.to_bytes(4, "little")


def page(n):
    """Extension packet for the stimulus port page (D4): 0b0 EX[2:0] 1 0 00, SH = 0."""
    return bytes([n << 4 | 0x08])


def test_page_unknown_after_reconnect():
    """A gap in the stream (the source reconnected) may have held a page extension packet:
    the writes after it are on an unknown page until a sync or page packet, marked and
    counted; before the gap and after the page packet they are not."""
    ts = bytes([0x10])  # local timestamp format 2, delta 1
    first = page(1) + sw32(1, 0x11111111) + ts  # port 33
    second = sw32(1, 0x22222222) + sw32(2, 0x33333333) + ts + page(0) + sw32(1, 0x44444444) + ts
    for args in (["--reconnect=1"], ["--json", "--reconnect=1"]):
        port, th = serve_pieces([first, second])
        r = run(args + [f"tcp:127.0.0.1:{port}"], timeout=30)
        th.join()
        err = r.stderr.decode()
        check("2 software writes came after a gap in the stream" in err
              and "stimulus port page is unknown" in err, f"{args}: no page warning: {err}")
        if "--json" in args:
            sws = [(p["port"], p.get("page_unknown", False))
                   for p in json_lines(r.stdout) if p["type"] == "sw"]
            check(sws == [(33, False), (33, True), (34, True), (1, False)], f"json: {sws}")
        else:
            lines = [ln.split(None, 3)[3] for ln in r.stdout.decode().splitlines()
                     if " sw " in ln]
            check(lines == ["port 33: 0x11111111", "port 33 (page unknown): 0x22222222",
                            "port 34 (page unknown): 0x33333333", "port 1: 0x44444444"],
                  f"text: {lines}")
    # no gap, an overflow: no page unknown, no warning
    port, th = serve_pieces([first + bytes([0x70]) + sw32(1, 5) + ts])
    r = run(["--reconnect=1", f"tcp:127.0.0.1:{port}"], timeout=30)
    th.join()
    check(b"page is unknown" not in r.stderr and b"port 33: 0x00000005" in r.stdout,
          f"overflow: {r.stdout} {r.stderr}")


def test_serial_pty():
    master, slave = pty.openpty()
    name = os.ttyname(slave)
    p = subprocess.Popen([SPOOR, "itm", "--json", f"serial:{name}:115200"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # spoor sets the tty up (raw, 115200 baud) before it reads: bytes written before could be
    # flushed with the old settings; then they are decoded, and printed when spoor idles
    harness.wait_until("spoor sets the tty up",
                       lambda: termios.tcgetattr(slave)[4] == termios.B115200)
    os.write(master, bytes([0x01, 0x41, 0x10, 0x0E, 0x0F, 0x10, 0x20]))
    early = bytearray()

    def four_lines():
        if select.select([p.stdout], [], [], 0.1)[0]:
            early.extend(os.read(p.stdout.fileno(), 65536))
        return early.count(b"\n") >= 4
    harness.wait_until("spoor prints the four packets", four_lines)
    os.close(slave)
    os.close(master)
    out, err = p.communicate(timeout=60)
    lines = json_lines(bytes(early) + out)
    types = [o["type"] for o in lines]
    check(types == ["sw", "ts_local", "exception", "ts_local"], f"serial: {types} {err}")


def test_symbols():
    elf = os.path.join(FIRMWARE, "examples", "calls-m3.elf")
    if not os.path.exists(elf):
        check(False, f"{elf} missing (build the firmware)")
        return
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
    addr = None
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt" and parts[2] == "main":
            addr = int(parts[0], 16) & ~1
    check(addr is not None, "main in nm output")
    if addr is None:
        return
    pc = addr + 2
    stream = bytes([0x17]) + pc.to_bytes(4, "little") + bytes([0x47]) + pc.to_bytes(4, "little")
    r = run(["-e", elf, "-"], stdin=stream)
    out = r.stdout.decode()
    check(out.count("main+0x2") == 2, f"symbols: {out}")


for t in (test_json_fields, test_swo_capture, test_tpiu_capture, test_rust_itm, test_channels,
          test_channel_text_without_timestamps,
          test_bad_input, test_tcp_reconnect, test_page_unknown_after_reconnect,
          test_serial_pty, test_symbols):
    try:
        t()
    except Exception as e:  # a crash of one check must not hide the others
        check(False, f"{t.__name__}: {e!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all itm CLI checks passed")
