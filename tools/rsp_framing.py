"""GDB Remote Serial Protocol framing (the GDB manual, "Overview" of the remote protocol): a
packet is '$' payload '#' and two hex digits, the sum of the payload's bytes modulo 256;
notifications start with '%'; outside packets single bytes travel: '+' (acknowledged), '-'
(send again), 0x03 (interrupt). Replies may be run-length encoded ('c*N': c and N - 29 more),
binary data escapes '#', '$', '}' and '*' as '}' then the byte XOR 0x20.

The one framing code of the Python peers and tools that speak the protocol
(tools/vprobe_gdb_proxy.py, tests/e2e/faulty_gdb.py and the e2e tests' hand-written clients):
frame() builds a packet, Tokens splits a byte stream, expand_rle() and unescape() undo the
encodings. It neither escapes nor validates payloads: callers send payloads that need no
escaping, and a peer under test may want to send a wrong one on purpose."""


class ProtocolError(Exception):
    """A peer broke the remote protocol in a way that is not relayed (a packet without end)."""


def checksum(payload):
    """The checksum of payload (bytes): the sum of its bytes modulo 256."""
    return sum(payload) & 0xFF


def frame(payload, start=b"$"):
    """payload (bytes) as a packet: start ('$', or '%' for a notification), payload, '#cs'."""
    return start + payload + b"#%02x" % checksum(payload)


class Tokens:
    """One direction of a byte stream as tokens, in order: ('packet', raw, payload, good),
    ('notify', raw, payload, good) with good whether the checksum matches (either case of the
    hex digits), and single bytes outside packets: ('ack', b'+'), ('nack', b'-'),
    ('intr', b'\\x03'), ('other', byte). An incomplete packet waits for the next feed.
    notify=False: '%' is a single byte ('other'), not the start of a notification.
    max_packet: a packet start followed by more than that many bytes without its '#' raises
    ProtocolError (None: no bound)."""

    def __init__(self, notify=True, max_packet=None):
        self.buf = bytearray()
        self.starts = b"$%" if notify else b"$"
        self.max_packet = max_packet

    def feed(self, data):
        self.buf += data
        out = []
        while self.buf:
            c = self.buf[0]
            if c in self.starts:
                end = self.buf.find(b"#")
                if end < 0 and self.max_packet is not None and len(self.buf) > self.max_packet:
                    raise ProtocolError(f"a packet of more than {self.max_packet} bytes without "
                                        "its end ('#'): connection dropped")
                if end < 0 or end + 3 > len(self.buf):
                    break
                raw = bytes(self.buf[:end + 3])
                payload = raw[1:end]
                good = b"%02x" % checksum(payload) == raw[end + 1:end + 3].lower()
                out.append(("packet" if c == ord("$") else "notify", raw, payload, good))
                del self.buf[:end + 3]
                continue
            kind = {ord("+"): "ack", ord("-"): "nack", 3: "intr"}.get(c, "other")
            out.append((kind, bytes([c])))
            del self.buf[:1]
        return out


def expand_rle(payload):
    """A reply's run-length encoding undone: 'c*N' is c and N - 29 more of it. Escaped bytes
    ('}' and the next) are kept as they are, for the caller to decode."""
    out = bytearray()
    i = 0
    while i < len(payload):
        c = payload[i]
        if c == ord("*") and out and i + 1 < len(payload):
            out += bytes([out[-1]]) * (payload[i + 1] - 29)
            i += 2
            continue
        if c == ord("}") and i + 1 < len(payload):
            out += payload[i:i + 2]
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def unescape(data):
    """Binary data ('X' packets, escaped replies): '}' escapes the next byte (XOR 0x20)."""
    out = bytearray()
    escape = False
    for c in data:
        if escape:
            out.append(c ^ 0x20)
            escape = False
        elif c == ord("}"):
            escape = True
        else:
            out.append(c)
    return bytes(out)
