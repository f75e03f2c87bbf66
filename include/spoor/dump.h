/* Host-side crash dumps: parse the bytes a device wrote (format: spoor/dump_format.h,
 * docs/dump-format.md) or assemble the same structure from raw debugger output
 * (--regs regs.json, --mem ADDR:FILE). Failing calls return NULL/false with a one-line
 * spoor_last_error() that names the problem, e.g.
 *   "dump: bad CRC (stored 0x12345678, computed 0x9abcdef0)"
 *   "dump: truncated at byte 100 of 420"
 *   "dump: unsupported version 7"
 *   "dump: memory regions 0x20000000+256 and 0x20000080+64 overlap" */
#ifndef SPOOR_DUMP_H
#define SPOOR_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump_format.h"
#include "spoor/elf.h"
#include "spoor/regs.h"

/* One MEMORY record: bytes point into the spoor_dump's own copy. */
typedef struct spoor_dump_region {
    uint32_t address;
    uint32_t length;
    uint16_t kind; /* enum spoor_region_kind */
    bool truncated;
    const uint8_t *bytes;
} spoor_dump_region;

typedef struct spoor_dump {
    unsigned version;

    bool has_registers;
    spoor_regs regs; /* flags: the REGISTERS record's SPOOR_REGS_* */

    bool has_fault;
    spoor_fault_status fault;

    bool has_reason;
    uint32_t reason; /* SPOOR_REASON_* */
    uint32_t reason_code;
    uint32_t line;
    char *file; /* NUL-terminated copies, NULL when absent */
    char *message;

    const uint8_t *build_id; /* NULL when absent */
    size_t build_id_len;

    bool has_mtb;
    uint32_t mtb_position, mtb_master, mtb_flow, mtb_base, mtb_address;
    const uint8_t *mtb_bytes;
    uint32_t mtb_len;

    bool has_calls;
    uint32_t calls_address, calls_entry_size, calls_count, calls_next;
    const uint8_t *calls_bytes;
    uint32_t calls_len;

    spoor_dump_region *regions; /* sorted by address, never overlapping */
    size_t region_count;

    unsigned skipped_records; /* records of unknown type that were skipped */

    /* A dump of another tool's format (spoor/dump_formats.h): its name ("zephyr"), NULL for
     * spoor's own; and Zephyr's threads-metadata block, the bytes of its _kernel struct (the
     * snapshot maps them at the ELF's _kernel when no memory block holds it), NULL if none. */
    const char *foreign_format;
    const uint8_t *zephyr_kernel;
    size_t zephyr_kernel_len;
    /* A foreign dump's own words for its fault when it has no fault status registers (Zephyr's
     * reason: "UsageFault, division by zero"), NULL otherwise. */
    char *fault_words;
    /* A core written by spoor core: where its fault status came from (spoor_fault_source; 0:
     * the dump itself), and whether the input had no EXC_RETURN word (a foreign dump). */
    unsigned fault_from;
    bool exc_return_unknown;

    uint8_t *data; /* owned: the dump bytes (or the raw-input buffers) the pointers above use */
    size_t size;
    uint8_t **extra; /* owned buffers of raw inputs */
    size_t extra_count;
    size_t mapped_len; /* data is a mapping of the file (an ELF core, of any size), this long */
} spoor_dump;

/* Parses a dump from memory (the bytes are copied). */
spoor_dump *spoor_dump_parse(const void *bytes, size_t len);
/* Reads and parses a dump file. Errors name the file when it cannot be read:
 * "FILE: cannot open: ...". */
spoor_dump *spoor_dump_load(const char *path);

/* Reads a whole regular file (a dump, a saved spoor crash --json report, a triage shard) into a
 * malloc'd buffer, with a NUL byte after its *size bytes, checking its type and size before
 * reading: false with "PATH: cannot open: ...", "PATH: not a regular file (a FIFO)" (FIFOs and
 * devices are refused, never waited on or read without end), "PATH: N bytes, larger than 256
 * MiB". */
bool spoor_dump_read_file(const char *path, uint8_t **data, size_t *size);
void spoor_dump_free(spoor_dump *dump);

/* A --mem ADDR:FILE argument. */
typedef struct spoor_raw_memory {
    uint32_t address;
    const char *path;
} spoor_raw_memory;

/* Parses "ADDR:FILE" (ADDR decimal or 0x hex) into *out (path points into arg). False with
 * "--mem: expected ADDR:FILE, got 'ARG'" on bad input. */
bool spoor_raw_memory_parse(const char *arg, spoor_raw_memory *out);

/* A dump holding only the registers (and fault registers) of a regs.json file (see
 * spoor_regs_json_parse); its memory comes from --mem images in the memory view. */
spoor_dump *spoor_dump_from_regs_json(const char *regs_path);

/* Parses the flat regs.json format: one JSON object whose keys are register names (r0..r12,
 * sp, lr, pc, xpsr, msp, psp, control, exc_return, msplim, psplim, s0..s15, fpscr, cfsr, hfsr,
 * dfsr, mmfar, bfar, afsr, sfsr, sfar; case-insensitive) and whose values are hex strings with
 * 0x ("0x20001ff0"), decimal JSON numbers, or null (unknown). "pc" and "sp" are required and
 * not null when any core register is given; a register named twice (also as "r15" and "pc")
 * is an error, as are unknown keys. The registers are the CPU's as the debugger saw them
 * (possibly inside a handler). Sets has_registers (when any core register is present) and
 * has_fault (when any fault register is), the matching SPOOR_FAULT_HAS_* bits and the
 * SPOOR_HAVE_* groups given. Registers not given are 0 (lr 0xFFFFFFFF). Errors name the file:
 * "NAME: line N: ..." (name NULL: "regs.json"). */
bool spoor_regs_json_parse(const char *text, size_t len, const char *name, spoor_dump *dump);

/* Copies [addr, addr+len) from the dump's memory regions into buf; false (buf unspecified)
 * unless every byte is in some region. Regions next to each other may be crossed. */
bool spoor_dump_read(const spoor_dump *dump, uint32_t addr, void *buf, size_t len);

/* Whether the dump comes from the ELF's build: when both have a build-id and they differ,
 * writes the one-line warning "build-id mismatch: the dump is from HEX, the ELF is HEX; names
 * and lines may be wrong" into buf (len bytes; 400 hold it whole) and returns buf. NULL when
 * they agree, or when dump (NULL for a live target) or the ELF has no build-id. Every command
 * that reads a dump with an ELF prints it. */
const char *spoor_dump_build_id_warning(const spoor_dump *dump, const spoor_elf *elf, char *buf,
                                        size_t len);

/* "fault", "assert", "watchdog", "user", or "unknown". */
const char *spoor_dump_reason_name(uint32_t reason);

#endif
