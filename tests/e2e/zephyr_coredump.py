"""Zephyr coredumps (CONFIG_DEBUG_COREDUMP, Cortex-M) written from their documented layout,
for tests: the binary file, the logging backend's #CD: lines and the flash partition image.

Every layout fact is Zephyr's, from its sources:
  - include/zephyr/debug/coredump.h: struct coredump_hdr_t (packed: 'Z','E', u16 hdr_version,
    u16 tgt_code, u8 ptr_size_bits, u8 flag, u32 reason), COREDUMP_HDR_FLAG_CRC 0x01, the
    packed block headers coredump_arch_hdr_t ('A', u16 version, u16 num_bytes),
    coredump_mem_hdr_t ('M', u16 version 1, uintptr_t start, uintptr_t end) and
    coredump_crc_hdr_t ('C', u16 version 1, u32 CRC-32 IEEE of every byte before it);
    COREDUMP_TGT_ARM_CORTEX_M = 3.
  - arch/arm/core/cortex_m/coredump.c: struct arm_arch_block, u32 r0 r1 r2 r3 r12 lr pc xpsr
    sp (arch block version 1: scripts/coredump/gdbstubs/arch/arm_cortex_m.py unpacks 9 words),
    then r4..r11 (version 2: 17 words), then callee_saved_valid, callee_saved_offset
    (version 3).
  - arch/arm/include/cortex_m/exception.h z_arm_set_fault_sp: sp is the exception frame's
    address + 32 (+ the FP part with an extended frame), | 4 when the stacked xPSR bit 9 is
    set: the SP of the code that faulted, which is what a spoor dump's sp is too.
  - subsys/debug/coredump/coredump_backend_logging.c: "#CD:BEGIN#", then lines "#CD:" + at
    most 64 hex digits (LOG_BUF_SZ), "#CD:END#"; each through LOG_ERR, so the log's own prefix
    ("[00:00:01.000,000] <err> coredump: ") and colour escapes come around them.
  - subsys/debug/coredump/coredump_backend_flash_partition.c: struct flash_hdr_t (packed:
    'C','D', u16 hdr_version 1, size_t size, u16 flags, u16 checksum = the 16-bit sum of the
    dump's bytes, int error), the dump after the header rounded up to the write size.
"""
import struct
import zlib

K_ERR_CPU_EXCEPTION = 0


def header(reason=K_ERR_CPU_EXCEPTION, crc=False, version=2, target=3):
    return struct.pack("<2sHHBBI", b"ZE", version, target, 5, 1 if crc else 0, reason)


def arch_block(version, regs, sp, callee_offset=0x28, callee_valid=True):
    """regs: dict r0..r12, lr, pc, xpsr; sp the arch block's sp. Version 3 without
    callee_valid: callee_saved_valid 0, as when Zephyr did not collect r4-r11; their words
    then hold a marker (Zephyr leaves them zero) so a reader that takes them anyway shows."""
    words = [regs[k] for k in ("r0", "r1", "r2", "r3", "r12", "lr", "pc", "xpsr")] + [sp]
    if version >= 2:
        words += [regs[f"r{i}"] if callee_valid else 0xBAD00000 + i for i in range(4, 12)]
    if version >= 3:
        words += [1 if callee_valid else 0, callee_offset if callee_valid else 0]
    body = struct.pack(f"<{len(words)}I", *words)
    return struct.pack("<cHH", b"A", version, len(body)) + body


def memory_block(start, data):
    return struct.pack("<cHII", b"M", 1, start, start + len(data)) + data


def threads_block(kernel_bytes):
    return struct.pack("<cHH", b"T", 1, len(kernel_bytes)) + kernel_bytes


def crc_trailer(before):
    return struct.pack("<cHI", b"C", 1, zlib.crc32(before))


def binary(arch_version, regs, sp, regions, reason=K_ERR_CPU_EXCEPTION, crc=False, extra=b"",
           callee_valid=True):
    """A whole dump: header, arch block, extra blocks, memory blocks, CRC trailer if crc."""
    out = header(reason, crc) + arch_block(arch_version, regs, sp, callee_valid=callee_valid)
    out += extra
    for start, data in regions:
        out += memory_block(start, data)
    if crc:
        out += crc_trailer(out)
    return out


def log(dump, prefix="[00:00:01.234,000] <err> coredump: ", colour=True):
    """The dump as the logging backend prints it, inside other log lines."""
    red, reset = ("\x1b[1;31m", "\x1b[0m") if colour else ("", "")
    lines = ["*** Booting Zephyr OS build v3.7.0 ***",
             "[00:00:01.230,000] <err> os: ***** USAGE FAULT *****",
             f"{red}{prefix}#CD:BEGIN#{reset}"]
    for at in range(0, len(dump), 32):
        lines.append(f"{red}{prefix}#CD:{dump[at:at + 32].hex()}{reset}")
    lines += [f"{red}{prefix}#CD:END#{reset}", "[00:00:01.240,000] <err> os: Halting system"]
    return ("\r\n".join(lines) + "\r\n").encode()


def flash_image(dump, write_size=16, partition=0x4000):
    hdr = struct.pack("<2sHIHHi", b"CD", 1, len(dump), 0, sum(dump) & 0xFFFF, 0)
    hdr += b"\xff" * (max(write_size, 16) - len(hdr))
    image = hdr + dump
    return image + b"\xff" * max(0, partition - len(image))
