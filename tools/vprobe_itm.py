"""The bytes a Cortex-M's ITM puts on the wire, for tools/vprobe.py: packet encodings (ARMv7-M
ARM appendix D4 "Debug ITM and DWT Packet Protocol"), the SWO pin's bandwidth and the TPIU
formatter (CoreSight trace formatter, 16-byte frames)."""

SYNC = b"\x00\x00\x00\x00\x00\x80"
OVERFLOW = b"\x70"
TS_MAX = (1 << 28) - 1  # a local timestamp carries at most 28 bits


def sw(port, size, value):
    """Instrumentation packet: 0bAAAAA0SS (port 0-31), then the write's bytes."""
    ss = {1: 1, 2: 2, 4: 3}[size]
    return bytes([(port << 3) | ss]) + value.to_bytes(size, "little")


def _hw(discriminator, size, value):
    ss = {1: 1, 2: 2, 4: 3}[size]
    return bytes([(discriminator << 3) | 0x4 | ss]) + value.to_bytes(size, "little")


def exception(number, action):
    """Exception trace: discriminator 1; action 1 enter, 2 exit, 3 return."""
    return _hw(1, 2, (number & 0x1FF) | (action << 12))


def pc_sample(pc):
    """Periodic PC sample: discriminator 2, a full PC."""
    return _hw(2, 4, pc)


def dwt_pc(comparator, pc):
    """Data trace PC value: discriminator 8 + 2n + 0."""
    return _hw(8 + 2 * comparator, 4, pc)


def dwt_match(comparator):
    """ARMv8-M Data Trace Match packet: the PC value packet's discriminator 8 + 2n with one
    payload byte, bit 0 set (DDI0553 F1.2.3)."""
    return _hw(8 + 2 * comparator, 1, 1)


def dwt_addr(comparator, offset):
    """Data trace address offset: discriminator 8 + 2n + 1, address bits [15:0]."""
    return _hw(8 + 2 * comparator + 1, 2, offset & 0xFFFF)


def dwt_data(comparator, write, size, value):
    """Data trace data value: discriminator 16 + 2n + W."""
    return _hw(16 + 2 * comparator + (1 if write else 0), size, value)


def local_timestamp(delta):
    """Local timestamp, TC = 0 (synchronous): format 2 for 1-6, else format 1 (1-4 bytes)."""
    if 0 < delta < 7:
        return bytes([delta << 4])
    out = bytearray([0xC0])
    while True:
        byte = delta & 0x7F
        delta >>= 7
        if delta:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class SwoLink:
    """The SWO pin at `baud` (NRZ/UART: 10 bits a byte) behind a FIFO of `fifo` bytes, at a CPU
    clock of `hz`: offer() returns the bytes that go out; a packet that does not fit is dropped
    whole, and an overflow packet goes out before the next packet that fits (as the ITM does).
    `overhead` scales the bytes charged (16/14 with the TPIU formatter)."""

    def __init__(self, baud, hz, fifo=32, overhead=1.0):
        self.bytes_per_cycle = baud / 10.0 / hz
        self.fifo = fifo
        self.overhead = overhead
        self.level = 0.0
        self.time = 0
        self.overflowed = False
        self.dropped_packets = 0
        self.overflows = 0

    def offer(self, time, packet):
        self.level = max(0.0, self.level - (time - self.time) * self.bytes_per_cycle)
        self.time = time
        data = OVERFLOW + packet if self.overflowed else packet
        cost = len(data) * self.overhead
        if self.level + cost > self.fifo:
            if not self.overflowed:
                self.overflows += 1
            self.overflowed = True
            self.dropped_packets += 1
            return b""
        self.overflowed = False
        self.level += cost
        return data


class TpiuFramer:
    """CoreSight formatter: 16-byte frames, each starting with the source ID (ID byte at
    position 0, aux bit 0: the new ID applies to the data that follows), 14 data bytes, byte 15
    the auxiliary bits of the even positions; a full sync (FF FF FF 7F) before the first frame
    and every `sync_every` frames. flush() pads the last frame with ID 0 (the null source)."""

    def __init__(self, source_id=1, sync_every=64):
        self.id = source_id
        self.sync_every = sync_every
        self.pending = bytearray()
        self.frames = 0

    @staticmethod
    def _frame(items):
        """items: ('id', ID, aux) at even positions or ('data', byte); padded with zero data."""
        frame = bytearray(16)
        aux = 0
        for i, (kind, value, *rest) in enumerate(items):
            if kind == "id":
                frame[i] = (value << 1) | 1
                aux |= rest[0] << (i // 2)
            elif i % 2:
                frame[i] = value
            else:
                frame[i] = value & 0xFE
                aux |= (value & 1) << (i // 2)
        frame[15] = aux
        return bytes(frame)

    def feed(self, data):
        self.pending += data
        out = bytearray()
        while len(self.pending) >= 14:
            out += self._sync() + self._frame([("id", self.id, 0)] +
                                              [("data", b) for b in self.pending[:14]])
            del self.pending[:14]
        return bytes(out)

    def _sync(self):
        self.frames += 1
        return b"\xff\xff\xff\x7f" if (self.frames - 1) % self.sync_every == 0 else b""

    def flush(self):
        """The pending bytes in a last frame, the rest of it given to ID 0 (the null source):
        after an odd number of data bytes an ID change at the next (even) position; after an
        even number the ID change goes before the last byte, with its aux bit saying that byte
        still belongs to the previous ID."""
        if not self.pending:
            return b""
        items = [("id", self.id, 0)] + [("data", b) for b in self.pending]
        if len(self.pending) % 2:
            items.append(("id", 0, 0))
        else:
            items.insert(len(items) - 1, ("id", 0, 1))
        self.pending.clear()
        return self._sync() + self._frame(items)
