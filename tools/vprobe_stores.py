"""The stores of a Thumb instruction (ARMv7-M ARM A7.7), from its encoding and the registers
before it ran: what a DWT comparator and the ITM see of a store, for tools/vprobe.py.

decode(code, pc) returns a Store (static part, cached by the caller) or None for an instruction
that writes no memory. Store.accesses(regs) gives [(address, size, value)] with regs =
(r0..r15, xpsr) from QEMU's -d cpu state; an instruction whose IT condition fails stores
nothing. Exclusive stores (STREX*) are reported as such (their success shows only after them);
the caller refuses to guess. Floating-point stores (VSTR, VPUSH, VSTM) are not decoded: the
cores the probe runs (Cortex-M3) have none.
"""


def _bits(value, high, low):
    return (value >> low) & ((1 << (high - low + 1)) - 1)


def _reglist(mask):
    return [r for r in range(16) if mask & (1 << r)]


class Store:
    """kind: 'single' (rt at base + offset or (rm << shift)), 'multiple' (registers ascending
    from base, or below it with decrement), 'double', 'exclusive'."""

    def __init__(self, kind, size=4, rn=13, rt=0, rt2=None, imm=0, rm=None, shift=0,
                 index=True, regs=(), decrement=False):
        self.kind, self.size, self.rn, self.rt, self.rt2 = kind, size, rn, rt, rt2
        self.imm, self.rm, self.shift, self.index = imm, rm, shift, index
        self.regs, self.decrement = regs, decrement

    def address(self, regs):
        base = regs[self.rn]
        if self.rm is not None:
            return (base + (regs[self.rm] << self.shift)) & 0xFFFFFFFF
        return (base + self.imm) & 0xFFFFFFFF if self.index else base

    def accesses(self, regs):
        if not condition_passed(regs[16]):
            return []
        mask = (1 << (8 * self.size)) - 1
        if self.kind in ("single", "exclusive"):
            return [(self.address(regs), self.size, regs[self.rt] & mask)]
        if self.kind == "double":
            a = self.address(regs)
            return [(a, 4, regs[self.rt]), ((a + 4) & 0xFFFFFFFF, 4, regs[self.rt2])]
        start = regs[self.rn] - 4 * len(self.regs) if self.decrement else regs[self.rn]
        return [((start + 4 * i) & 0xFFFFFFFF, 4, regs[r]) for i, r in enumerate(self.regs)]


def condition_passed(xpsr):
    """The IT block's condition for the current instruction (ITSTATE in xPSR, flags NZCV)."""
    it = (_bits(xpsr, 15, 10) << 2) | _bits(xpsr, 26, 25)
    if it & 0xF == 0:
        return True
    cond = it >> 4
    n, z, c, v = (xpsr >> 31) & 1, (xpsr >> 30) & 1, (xpsr >> 29) & 1, (xpsr >> 28) & 1
    base = cond >> 1
    result = [z == 1, c == 1, n == 1, v == 1, c == 1 and z == 0, n == v,
              n == v and z == 0, True][base]
    if cond & 1 and cond != 0xF:
        result = not result
    return result


def decode(code, pc):
    hw1 = code.halfword(pc)
    if hw1 is None:
        return None
    if (hw1 >> 11) < 0x1D:
        return _decode16(hw1)
    hw2 = code.halfword(pc + 2)
    return None if hw2 is None else _decode32(hw1, hw2)


def _decode16(hw):
    top5 = hw >> 11
    rt, rn, imm5 = hw & 7, (hw >> 3) & 7, (hw >> 6) & 0x1F
    if top5 == 0b01100:
        return Store("single", 4, rn, rt, imm=imm5 * 4)
    if top5 == 0b01110:
        return Store("single", 1, rn, rt, imm=imm5)
    if top5 == 0b10000:
        return Store("single", 2, rn, rt, imm=imm5 * 2)
    if top5 == 0b10010:  # STR Rt, [SP, #imm8*4]
        return Store("single", 4, 13, (hw >> 8) & 7, imm=(hw & 0xFF) * 4)
    if hw >> 9 in (0b0101000, 0b0101001, 0b0101010):  # STR, STRH, STRB (register)
        size = {0b0101000: 4, 0b0101001: 2, 0b0101010: 1}[hw >> 9]
        return Store("single", size, rn, rt, rm=(hw >> 6) & 7)
    if hw >> 9 == 0b1011010:  # PUSH
        regs = _reglist(hw & 0xFF) + ([14] if hw & 0x100 else [])
        return Store("multiple", rn=13, regs=regs, decrement=True)
    if top5 == 0b11000:  # STMIA Rn!, {list}
        return Store("multiple", rn=(hw >> 8) & 7, regs=_reglist(hw & 0xFF))
    return None


def _decode32(hw1, hw2):
    rn, rt = hw1 & 0xF, hw2 >> 12
    if hw1 & 0xFFD0 == 0xE880:  # STM.W
        return Store("multiple", rn=rn, regs=_reglist(hw2))
    if hw1 & 0xFFD0 == 0xE900:  # STMDB / PUSH.W
        return Store("multiple", rn=rn, regs=_reglist(hw2), decrement=True)
    if hw1 & 0xFFF0 == 0xE840:  # STREX
        return Store("exclusive", 4, rn, rt, imm=(hw2 & 0xFF) * 4)
    if hw1 & 0xFFF0 == 0xE8C0 and _bits(hw2, 7, 4) in (0b0100, 0b0101):  # STREXB, STREXH
        return Store("exclusive", 1 if _bits(hw2, 7, 4) == 0b0100 else 2, rn, rt)
    if hw1 & 0xFE50 == 0xE840 and hw1 & 0x0120:  # STRD (immediate)
        imm = (hw2 & 0xFF) * 4
        return Store("double", 4, rn, rt, rt2=(hw2 >> 8) & 0xF,
                     imm=imm if hw1 & 0x80 else -imm, index=bool(hw1 & 0x100))
    sizes = {0xF8C0: 4, 0xF880: 1, 0xF8A0: 2}  # STR, STRB, STRH (imm12)
    if hw1 & 0xFFF0 in sizes:
        return Store("single", sizes[hw1 & 0xFFF0], rn, rt, imm=hw2 & 0xFFF)
    sizes = {0xF840: 4, 0xF800: 1, 0xF820: 2}  # imm8 with P/U/W, or register
    if hw1 & 0xFFF0 in sizes:
        size = sizes[hw1 & 0xFFF0]
        if hw2 & 0x800:
            p, u = hw2 & 0x400, hw2 & 0x200
            imm = hw2 & 0xFF
            return Store("single", size, rn, rt, imm=imm if u else -imm, index=bool(p))
        if _bits(hw2, 11, 6) == 0:
            return Store("single", size, rn, rt, rm=hw2 & 0xF, shift=_bits(hw2, 5, 4))
    return None
