/* Dumps other tools make, read into the same spoor_dump (spoor/dump.h) a spoor crash dump
 * gives, so every command that takes a DUMP takes them as they are (docs/dump-formats.md).
 * The format is found from the content; a caller may force one (--format).
 *
 * Zephyr coredumps (CONFIG_DEBUG_COREDUMP, Cortex-M): the binary file
 * scripts/coredump/coredump_serial_log_parser.py writes, a UART log holding the logging
 * backend's "#CD:" lines (anything before "#CD:" on a line and lines without it are skipped),
 * and an image of the flash partition (16-byte "CD" header with a byte-sum checksum). Errors
 * are one line, e.g.
 *   "zephyr coredump: truncated: memory block at byte 120 (0x20000000..0x20000400) needs 1024
 *    bytes, 300 left"
 *   "zephyr coredump: bad CRC trailer (stored 0x..., computed 0x...)"
 *   "zephyr coredump log: no #CD:END# after #CD:BEGIN# (the log is cut)" */
#ifndef SPOOR_DUMP_FORMATS_H
#define SPOOR_DUMP_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"

typedef enum spoor_dump_format {
    SPOOR_DUMP_FORMAT_AUTO = 0, /* from the content */
    SPOOR_DUMP_FORMAT_SPOOR,    /* spoor's own crash dump (spoor/dump_format.h) */
    SPOOR_DUMP_FORMAT_ZEPHYR,   /* a Zephyr coredump: binary, #CD: log or flash image */
    SPOOR_DUMP_FORMAT_ELFCORE,  /* an ELF core file (gdb's gcore of a bare-metal target) */
    SPOOR_DUMP_FORMAT_PROBERS,  /* probe-rs's .coredump (MessagePack) */
} spoor_dump_format;

/* "auto", "spoor", "zephyr", "elfcore", "probe-rs" into *out; false with "--format: unknown
 * format 'X' (known: auto, spoor, zephyr, elfcore, probe-rs)". */
bool spoor_dump_format_parse(const char *name, spoor_dump_format *out);

/* The format of bytes by their content: SPOOR_DUMP_FORMAT_AUTO when none is recognised. */
spoor_dump_format spoor_dump_format_detect(const uint8_t *bytes, size_t len);

/* Parses bytes in format (AUTO: detected; unrecognised content is read as a spoor dump, so
 * its error names spoor's magic). The bytes are copied. */
spoor_dump *spoor_dump_parse_as(const void *bytes, size_t len, spoor_dump_format format);

/* Reads a file whole and parses it as spoor_dump_parse_as does. */
spoor_dump *spoor_dump_load_as(const char *path, spoor_dump_format format);

/* A Zephyr coredump in any of its three shapes (binary, #CD: log, flash image). */
spoor_dump *spoor_zephyr_dump_parse(const uint8_t *bytes, size_t len);

/* An ELF core file of an ARM target as gdb's gcore writes it (read with libelf): the first
 * NT_PRSTATUS note's registers, NT_ARM_VFP's s0-s31 and fpscr, every PT_LOAD segment as memory.
 * Errors: "ELF core: no NT_PRSTATUS note: no registers", "ELF core: truncated: ...". The cores
 * spoor core writes (spoor/core_write.h) carry notes named "SPOOR" of these types, read too:
 * the state (MSP, PSP, CONTROL, EXC_RETURN, the fault status, the dump's reason; docs/core.md)
 * and the threads (LWP, TCB, name), and a "GNU" NT_GNU_BUILD_ID with the dump's build-id. */
#define SPOOR_NT_CORE_STATE 1u
#define SPOOR_NT_CORE_THREADS 2u
/* In the state's register-groups word: the input had no EXC_RETURN (a foreign dump). */
#define SPOOR_CORE_STATE_NO_EXC_RETURN 0x80000000u
spoor_dump *spoor_elfcore_dump_parse(const uint8_t *bytes, size_t len);

/* A probe-rs coredump (`.coredump`: probe-rs's CoreDump struct in MessagePack, read with
 * msgpack-c) of a Cortex-M core: r0-r15, xPSR, MSP, PSP, CONTROL, s0-s31 and FPSCR when the
 * core has an FPU, every memory range. Errors: "probe-rs coredump: no \"registers\" field",
 * "probe-rs coredump: core type riscv, not a Cortex-M core", "probe-rs coredump: truncated: ...".
 */
spoor_dump *spoor_probers_dump_parse(const uint8_t *bytes, size_t len);

/* Zephyr's k_fatal_error_reason in words: "K_ERR_CPU_EXCEPTION", ... ; NULL when unknown. */
const char *spoor_zephyr_reason_name(uint32_t reason);

#endif
