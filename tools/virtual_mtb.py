#!/usr/bin/env python3
"""Virtual MTB: what a real Micro Trace Buffer would hold after a QEMU run.

QEMU emulates no MTB. This tool reads the log of a run with
    qemu-system-arm -icount shift=0 -singlestep -d exec,nochain,int -D LOG ...
and the firmware ELF (for instruction sizes), replays the executed instructions and writes the
packets an MTB of --size bytes would have written, as the register block (POSITION, MASTER,
FLOW, BASE) and the buffer image. It also writes the ground truth for tests: the packets in
order and, for the packets still in the buffer, the instructions QEMU executed between the
oldest packet's destination and the newest packet's source.

The rules (docs/mtb.md has them with their manual references):
  * a packet for every PC change that is not to the next instruction: source = the branch
    instruction's address, A=0 (MTB TRMs, "trace packet format");
  * exception entry: source = the preferred return address, A=1, destination = the handler
    (the interrupted instruction for an interrupt, the faulting one for a fault; for a
    prefetch abort the fetch address, after the branch packet that led there);
  * exception return: (return instruction -> EXC_RETURN, A=0), then
    (EXC_RETURN -> where execution continues, A=1); tail-chaining: the second packet goes to the
    next handler (the TRMs do not single tail-chaining out; this is spoor's reading);
  * the S-bit on the first packet written after tracing starts (--start, default main);
  * tracing stops at the first fault's exception entry (the fault handler freezes the MTB before
    its first branch), or at the end of the log;
  * POSITION.POINTER = byte offset of the next write; WRAP once the pointer has wrapped.

QEMU's log is read by tools/qemu_log.py (the rules for blocks that did not run, faulting
instructions and serviced semihosting calls are there).

usage: virtual_mtb.py --elf FW.elf --log LOG --size BYTES --base ADDR --regs-out REGS.bin
                      --buffer-out BUF.bin [--expect-out EXPECT.json] [--start SYMBOL|ADDR]
"""

import argparse
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu_log import (  # noqa: E402
    EXCP_EXCEPTION_EXIT, EXCP_IRQ, EXCP_PREFETCH_ABORT, EXCP_SEMIHOST, EXCP_SWI, Code, read_log)


def symbol(elf, name):
    out = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return int(fields[0], 16) & ~1
    raise SystemExit(f"{elf}: no symbol {name}")


def replay(events, code, start):
    """Packets (src, dst, a, index) and the executed PCs; index = how many instructions had run
    when the packet was written (the destination is executed[index]). Stops after the first
    fault's entry packet."""
    packets, executed = [], []
    tracing = start is None
    prev = None           # last executed instruction
    exc = None            # exception number being taken
    fault_address = None
    pending_return = None  # EXC_RETURN value awaiting "return" or "tailchain"
    returned = False       # the next instruction is where an exception return went
    entries = []           # return addresses of exceptions taken (for interrupts)

    def packet(src, dst, a):
        if tracing:
            packets.append((src & ~1, dst & ~1, a, len(executed)))

    i = 0
    while i < len(events):
        ev = events[i]
        kind = ev[0]
        if kind == "insn":
            pc = ev[1]
            if not tracing and pc == start:
                tracing = True
            if returned:
                packet(pending_return, pc, 1)
                pending_return, returned = None, False
                if entries:  # now the interrupted code's return address is known
                    index = entries.pop()
                    if index is not None:
                        src, dst, a, at = packets[index]
                        packets[index] = (pc, dst, a, at)
            elif prev is not None and exc is None:
                size = code.size(prev)
                if size is None or pc != prev + size:
                    packet(prev, pc, 0)
            exc = None
            if tracing:
                executed.append(pc)
            prev = pc
        elif kind == "exc":
            exc = ev[1]
            fault_address = None
            if exc == EXCP_SEMIHOST:
                exc = None  # serviced, execution goes on sequentially
            elif exc == EXCP_EXCEPTION_EXIT:
                pass
        elif kind == "fault_address":
            fault_address = ev[1]
        elif kind == "magic":
            packet(prev, ev[1], 0)  # the return instruction to EXC_RETURN
            pending_return = ev[1]
        elif kind == "return":
            returned = True
            exc = None
        elif kind == "tailchain":
            pass  # the "loaded" that follows is the next handler
        elif kind == "loaded":
            handler = ev[1]
            if pending_return is not None:  # tail-chained: EXC_RETURN straight to the handler
                packet(pending_return, handler, 1)
                pending_return = None
            elif exc in (EXCP_IRQ, EXCP_SWI):
                # the interrupted instruction completed: the return address is the next one
                # (fixed when the handler returns: a branch may have been the last one)
                size = code.size(prev) if prev is not None else None
                ret = prev + size if size else prev
                entries.append(len(packets) if tracing else None)
                packet(ret, handler, 1)
            elif exc == EXCP_PREFETCH_ABORT and fault_address is not None and (
                    not executed or fault_address != executed[-1]):
                packet(prev, fault_address, 0)  # the branch that went there
                packet(fault_address, handler, 1)
                return packets, executed, True
            else:  # a fault: the logged instruction did not retire
                if tracing and executed and executed[-1] == prev:
                    executed.pop()
                packet(prev, handler, 1)
                return packets, executed, True
            exc = None
            prev = None
        elif kind == "reset":
            prev = None
        i += 1
    return packets, executed, False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--elf", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--size", type=lambda s: int(s, 0), required=True)
    ap.add_argument("--base", type=lambda s: int(s, 0), required=True)
    ap.add_argument("--regs-out", required=True)
    ap.add_argument("--buffer-out", required=True)
    ap.add_argument("--expect-out")
    ap.add_argument("--start", default="main")
    args = ap.parse_args(argv[1:])
    size = args.size
    if size < 16 or size & (size - 1) or size > (1 << 24):
        raise SystemExit("--size: a power of two from 16 to 16 MiB")
    if args.base & 7:
        raise SystemExit("--base: must be 8-byte aligned")
    code = Code(args.elf)
    start = None if args.start == "" else (
        int(args.start, 0) if args.start[0].isdigit() else symbol(args.elf, args.start))
    packets, executed, faulted = replay(read_log(args.log), code, start)
    if not packets:
        raise SystemExit("no packets: nothing traced")
    slots = size // 8
    buf = bytearray(size)
    for n, (src, dst, a, _) in enumerate(packets):
        s = 1 if n == 0 else 0
        struct.pack_into("<II", buf, (n % slots) * 8, src | a, dst | s)
    pointer = (len(packets) % slots) * 8
    wrap = 4 if len(packets) >= slots else 0
    mask = size.bit_length() - 1 - 4
    regs = struct.pack("<7I", pointer | wrap, 0x80000000 | mask, 0, args.base, 0, 0, 0)
    open(args.regs_out, "wb").write(regs)
    open(args.buffer_out, "wb").write(buf)
    kept = packets[-slots:]
    first_index = kept[0][3]
    last = kept[-1]
    window = executed[first_index:last[3]]
    if args.expect_out:
        json.dump({
            "packets": [{"src": f"0x{p[0]:08x}", "dst": f"0x{p[1]:08x}", "a": p[2],
                         "s": 1 if p is packets[0] else 0} for p in kept],
            "written": len(packets),
            "wrapped": bool(wrap),
            "faulted": faulted,
            "flow": [f"0x{pc:08x}" for pc in window],
        }, open(args.expect_out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
