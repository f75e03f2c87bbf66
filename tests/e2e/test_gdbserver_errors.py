"""spoor gdbserver on bad input: missing dump, port in use, a client that disconnects at once
(a port scan: the server keeps listening, unless --once), a second client during a session
(refused at once), garbage, bad checksums and malformed requests on the wire (E errors). One-line
errors with exit 2 where the input is wrong; a clean exit 0 when the client goes away; never a
crash or a hang."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from rsp_framing import frame  # noqa: E402

SPOOR = os.environ["SPOOR_BIN"]
ELF = str(harness.elf_path("calls", "m3"))
failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        failures.append(name)


def start(regs, *extra):
    p = subprocess.Popen([SPOOR, "gdbserver", "-e", ELF, "--port", "0", "--regs", regs, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError(f"no port: {line!r}")
    return p, int(m.group(1))


def finish(p):
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None, ""
    return p.returncode, p.stderr.read()


with tempfile.TemporaryDirectory() as tmp:
    regs = os.path.join(tmp, "regs.json")
    with open(regs, "w") as f:
        json.dump({"pc": "0x130", "sp": "0x20001fc0", "lr": "0x14f", "xpsr": "0x100000f"}, f)

    r = subprocess.run([SPOOR, "gdbserver", "-e", ELF], capture_output=True, text=True)
    check("no dump", r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr.strip())
    r = subprocess.run([SPOOR, "gdbserver", "-e", ELF, os.path.join(tmp, "missing.bin")],
                       capture_output=True, text=True)
    check("missing dump file", r.returncode == 2 and "missing.bin" in r.stderr, r.stderr.strip())

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    r = subprocess.run([SPOOR, "gdbserver", "-e", ELF, "--port", str(port), "--regs", regs],
                       capture_output=True, text=True, timeout=60)
    busy.close()
    check("port in use", r.returncode == 2 and "cannot listen" in r.stderr, r.stderr.strip())

    p, port = start(regs, "--once")
    socket.create_connection(("127.0.0.1", port)).close()
    rc, err = finish(p)
    check("client disconnects at once (--once)", rc == 0, f"rc={rc} {err.strip()}")

    def exchange(sock, packet):
        """Sends one framed packet, returns the payload of the reply."""
        body = packet.encode()
        sock.sendall(frame(body))
        data = b""
        while not re.search(rb"\$([^#]*)#[0-9a-f]{2}", data):
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        m = re.search(rb"\$([^#]*)#[0-9a-f]{2}", data)
        return m.group(1).decode() if m else None

    p, port = start(regs)
    socket.create_connection(("127.0.0.1", port)).close()  # a port scan
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    first = exchange(s, "?")
    second = socket.create_connection(("127.0.0.1", port))
    second.settimeout(5)
    refusal = second.recv(200)
    second.close()
    malformed = {pkt: exchange(s, pkt) for pkt in
                 ["m0,-1", "m,10", "m0x0,4", "pzz", "m0," + "1" * 100, "m130,4"]}
    exchange(s, "D")
    s.close()
    rc, err = finish(p)
    check("a port scan does not end the session", first == "S0b" and rc == 0,
          f"first reply {first!r} rc={rc}")
    check("a second client is refused at once", b"one GDB session at a time" in refusal,
          f"{refusal!r} / {err.strip()!r}")
    bad = {k: v for k, v in malformed.items() if k != "m130,4" and not (v or "").startswith("E")}
    check("malformed requests get E errors", not bad and
          re.fullmatch(r"[0-9a-f]{8}", malformed["m130,4"] or "") is not None,
          f"{malformed}")

    p, port = start(regs)
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    s.sendall(b"\x00\xffgarbage$g#00")  # noise, then a packet with a wrong checksum
    nack = s.recv(1)
    s.sendall(b"$g#67")                  # then a good one: '+' and 17 registers
    reply = b""
    while not reply.endswith(b"#") and len(reply) < 200:
        reply += s.recv(200)
        if re.search(rb"#[0-9a-f]{2}$", reply):
            break
    s.close()
    rc, err = finish(p)
    m = re.match(rb"\+\$([0-9a-f]{136})#", reply)
    words = [int.from_bytes(bytes.fromhex(m.group(1)[8 * i:8 * i + 8].decode()), "little")
             for i in range(17)] if m else []
    check("bad checksum is refused, then a good packet answered",
          nack == b"-" and words[13:16] == [0x20001fc0, 0x14f, 0x130] and rc == 0,
          f"nack={nack!r} sp/lr/pc={[hex(w) for w in words[13:16]]} rc={rc}")

print(f"{9 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
