/* Zephyr coredumps (CONFIG_DEBUG_COREDUMP) of Cortex-M targets read into a spoor_dump
 * (spoor/dump_formats.h). Every layout fact is Zephyr's, from its sources (docs/dump-formats.md
 * names the files):
 *   - include/zephyr/debug/coredump.h: the packed headers. The dump header is 12 bytes: 'Z','E',
 *     u16 header version, u16 target code (3: Cortex-M), u8 log2 of the pointer size, u8 flags
 *     (bit 0: a CRC trailer ends the dump), u32 reason (enum k_fatal_error_reason). Blocks follow,
 *     each led by one id byte and a u16 version: 'A' arch block (u16 length, then the bytes), 'T'
 *     threads metadata (u16 length, then the _kernel struct), 'M' memory (u32 start, u32 end,
 *     then end - start bytes), 'F' a per-CPU register snapshot (u16 length, u32 cpu, u32 thread,
 *     then the bytes), 'C' the CRC trailer (u32 CRC-32 IEEE of every byte before the trailer).
 *   - arch/arm/core/cortex_m/coredump.c: the arch block, u32 words r0 r1 r2 r3 r12 lr pc xpsr sp
 *     (version 1), then r4..r11 (version 2, zero unless CONFIG_EXTRA_EXCEPTION_INFO collected
 *     them), then callee_saved_valid and callee_saved_offset (version 3: r4..r11 valid when the
 *     first is non-zero).
 *   - arch/arm/include/cortex_m/exception.h z_arm_set_fault_sp: the stored sp is the exception
 *     frame's address plus the frame (32 bytes, 0x68 with the FP state), with bit 2 set when
 *     the stacked xPSR bit 9 says the hardware aligned the stack: the SP of the code that
 *     faulted. Zephyr releases before that function stored the frame's address itself; the
 *     frame is looked for in the dump's memory at both places.
 *   - subsys/debug/coredump/coredump_backend_logging.c: "#CD:BEGIN#", lines of "#CD:" and up to
 *     64 hex digits, "#CD:END#" or "#CD:ERROR CANNOT DUMP#"; the log prefixes its own text
 *     before "#CD:" (scripts/coredump/coredump_serial_log_parser.py looks for "#CD:" anywhere).
 *   - subsys/debug/coredump/coredump_backend_flash_partition.c: the partition starts with the
 *     packed flash_hdr_t: 'C','D', u16 version (1), u32 size (size_t on a 32-bit target), u16
 *     flags, u16 checksum (the 16-bit sum of the dump's bytes), i32 error; the dump follows at
 *     the header rounded up to the flash write size. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/crash.h"
#include "spoor/dump_formats.h"

#include "base/byteorder.h"
#include "snapshot/dump_foreign.h"
#include "snapshot/dump_internal.h"

#define get16 spoor_le16
#define get32 spoor_le32

#define ZE_HEADER_SIZE 12u
#define ZE_TARGET_CORTEX_M 3u
#define ZE_FLAG_CRC 0x01u
#define ZE_ARCH_V1_SIZE 36u /* r0-r3 r12 lr pc xpsr sp */
#define ZE_ARCH_V2_SIZE 68u /* + r4-r11 */
#define ZE_ARCH_V3_SIZE 76u /* + callee_saved_valid, callee_saved_offset */
#define FLASH_HEADER_SIZE 16u
#define BASIC_FRAME 32u
#define FP_FRAME 0x68u /* the basic frame, s0-s15, fpscr, a reserved word */

/* enum k_fatal_error_reason (include/zephyr/fatal_types.h): 0..4, then K_ERR_ARCH_START = 16,
 * where the Cortex-M reasons of enum k_fatal_error_reason_arch (include/zephyr/arch/arm/arch.h)
 * start; each with its words. Releases before K_ERR_ARCH_START report every Cortex-M fault as
 * K_ERR_CPU_EXCEPTION. */
#define ZE_ARCH_START 16u
typedef struct zephyr_reason {
    const char *name, *words;
} zephyr_reason;
static const zephyr_reason zephyr_reasons[] = {
    {"K_ERR_CPU_EXCEPTION", "CPU exception"},
    {"K_ERR_SPURIOUS_IRQ", "spurious interrupt"},
    {"K_ERR_STACK_CHK_FAIL", "stack overflow (stack check failed)"},
    {"K_ERR_KERNEL_OOPS", "kernel oops"},
    {"K_ERR_KERNEL_PANIC", "kernel panic"},
};
static const zephyr_reason zephyr_arm_reasons[] = {
    {"K_ERR_ARM_MEM_GENERIC", "MemManage fault"},
    {"K_ERR_ARM_MEM_STACKING", "MemManage fault, stacking error"},
    {"K_ERR_ARM_MEM_UNSTACKING", "MemManage fault, unstacking error"},
    {"K_ERR_ARM_MEM_DATA_ACCESS", "MemManage fault, data access violation"},
    {"K_ERR_ARM_MEM_INSTRUCTION_ACCESS", "MemManage fault, instruction access violation"},
    {"K_ERR_ARM_MEM_FP_LAZY_STATE_PRESERVATION", "MemManage fault, lazy FP state preservation"},
    {"K_ERR_ARM_BUS_GENERIC", "BusFault"},
    {"K_ERR_ARM_BUS_STACKING", "BusFault, stacking error"},
    {"K_ERR_ARM_BUS_UNSTACKING", "BusFault, unstacking error"},
    {"K_ERR_ARM_BUS_PRECISE_DATA_BUS", "BusFault, precise data bus error"},
    {"K_ERR_ARM_BUS_IMPRECISE_DATA_BUS", "BusFault, imprecise data bus error"},
    {"K_ERR_ARM_BUS_INSTRUCTION_BUS", "BusFault, instruction bus error"},
    {"K_ERR_ARM_BUS_FP_LAZY_STATE_PRESERVATION", "BusFault, lazy FP state preservation"},
    {"K_ERR_ARM_USAGE_GENERIC", "UsageFault"},
    {"K_ERR_ARM_USAGE_DIV_0", "UsageFault, division by zero"},
    {"K_ERR_ARM_USAGE_UNALIGNED_ACCESS", "UsageFault, unaligned access"},
    {"K_ERR_ARM_USAGE_STACK_OVERFLOW", "UsageFault, stack overflow (stack limit check)"},
    {"K_ERR_ARM_USAGE_NO_COPROCESSOR", "UsageFault, no coprocessor"},
    {"K_ERR_ARM_USAGE_ILLEGAL_EXC_RETURN", "UsageFault, illegal EXC_RETURN"},
    {"K_ERR_ARM_USAGE_ILLEGAL_EPSR", "UsageFault, illegal EPSR (invalid state)"},
    {"K_ERR_ARM_USAGE_UNDEFINED_INSTRUCTION", "UsageFault, undefined instruction"},
    {"K_ERR_ARM_SECURE_GENERIC", "SecureFault"},
    {"K_ERR_ARM_SECURE_ENTRY_POINT", "SecureFault, invalid entry point"},
    {"K_ERR_ARM_SECURE_INTEGRITY_SIGNATURE", "SecureFault, invalid integrity signature"},
    {"K_ERR_ARM_SECURE_EXCEPTION_RETURN", "SecureFault, invalid exception return"},
    {"K_ERR_ARM_SECURE_ATTRIBUTION_UNIT", "SecureFault, attribution unit violation"},
    {"K_ERR_ARM_SECURE_TRANSITION", "SecureFault, invalid transition"},
    {"K_ERR_ARM_SECURE_LAZY_STATE_PRESERVATION", "SecureFault, lazy state preservation"},
    {"K_ERR_ARM_SECURE_LAZY_STATE_ERROR", "SecureFault, lazy state error"},
};
#define ZE_ARM_REASONS (sizeof zephyr_arm_reasons / sizeof *zephyr_arm_reasons)

const char *spoor_zephyr_reason_name(uint32_t reason)
{
    if (reason < sizeof zephyr_reasons / sizeof *zephyr_reasons)
        return zephyr_reasons[reason].name;
    if (reason >= ZE_ARCH_START && reason - ZE_ARCH_START < ZE_ARM_REASONS)
        return zephyr_arm_reasons[reason - ZE_ARCH_START].name;
    return NULL;
}

static const char *reason_words(uint32_t reason)
{
    if (reason < sizeof zephyr_reasons / sizeof *zephyr_reasons)
        return zephyr_reasons[reason].words;
    if (reason >= ZE_ARCH_START && reason - ZE_ARCH_START < ZE_ARM_REASONS)
        return zephyr_arm_reasons[reason - ZE_ARCH_START].words;
    return NULL;
}

/* Whether Zephyr's fault handler gave the reason: a CPU exception, a spurious interrupt, a
 * failed stack check (the MPU guard or the stack limit) or a Cortex-M fault class; oops and
 * panic are the kernel's own calls (k_oops(), k_panic(), a failed assertion). */
static bool reason_is_fault(uint32_t reason)
{
    return reason <= 2 || (reason >= ZE_ARCH_START && reason - ZE_ARCH_START < ZE_ARM_REASONS);
}

static bool fail(spoor_status status, const char *what, const char *fmt, ...) SPOOR_PRINTF(3, 4);

static bool fail(spoor_status status, const char *what, const char *fmt, ...)
{
    char buf[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    spoor_set_error(status, "%s: %s", what, buf);
    return false;
}

#define ZE "zephyr coredump"

static bool header_fits(const char *what, size_t len, unsigned header)
{
    return len >= header || fail(SPOOR_ERR_TRUNCATED, what,
                                 "truncated: %zu bytes, the header alone is %u", len, header);
}

/* Whether the dump's memory holds, at addr, the eight words r0-r3 r12 lr pc xpsr of the arch
 * block (the hardware-stacked frame). */
static bool frame_at(const spoor_dump *d, uint64_t addr, const uint32_t w[8])
{
    uint8_t b[32];
    if (addr > 0xFFFFFFFFu || !spoor_dump_read(d, (uint32_t)addr, b, sizeof b))
        return false;
    for (int i = 0; i < 8; i++)
        if (get32(b + 4 * i) != w[i])
            return false;
    return true;
}

/* The registers of the code that faulted, from the arch block (payload, len bytes, version). */
static void set_registers(spoor_dump *d, const uint8_t *p, unsigned version)
{
    spoor_regs *r = &d->regs;
    memset(r, 0, sizeof *r);
    static const int order[8] = {0, 1, 2, 3, 12, 14, 15, -1}; /* r0-r3 r12 lr pc, then xpsr */
    uint32_t frame[8];
    for (int i = 0; i < 8; i++) {
        frame[i] = get32(p + 4 * i);
        if (order[i] >= 0)
            r->r[order[i]] = frame[i];
    }
    r->xpsr = frame[7];
    uint32_t sp = get32(p + 32);
    bool callee = version == 2 || (version >= 3 && get32(p + ZE_ARCH_V2_SIZE) != 0);
    if (callee)
        for (int i = 0; i < 8; i++)
            r->r[4 + i] = get32(p + ZE_ARCH_V1_SIZE + 4 * i);
    r->have = SPOOR_HAVE_CORE;
    r->exc_return = 0xFFFFFFFFu; /* not in the dump */
    d->exc_return_unknown = true;

    /* Where is the frame? Zephyr since z_arm_set_fault_sp: below sp (basic or FP frame, the
     * alignment word when xPSR bit 9 is set); older releases: at sp. */
    uint32_t align = (r->xpsr & (1u << 9)) ? 4u : 0u;
    uint64_t base = (uint64_t)sp - align;
    if (base >= BASIC_FRAME && frame_at(d, base - BASIC_FRAME, frame)) {
        r->flags |= SPOOR_REGS_FRAME_VALID;
    } else if (base >= FP_FRAME && frame_at(d, base - FP_FRAME, frame)) {
        uint8_t fp[68];
        r->flags |= SPOOR_REGS_FRAME_VALID | SPOOR_REGS_FP_FRAME;
        if (spoor_dump_read(d, (uint32_t)(base - FP_FRAME + BASIC_FRAME), fp, sizeof fp)) {
            for (int i = 0; i < 16; i++)
                r->s[i] = get32(fp + 4 * i);
            r->fpscr = get32(fp + 64);
            r->flags |= SPOOR_REGS_FP_VALID;
            r->have |= SPOOR_HAVE_FP;
        }
    } else if (frame_at(d, sp, frame)) {
        r->flags |= SPOOR_REGS_FRAME_VALID;
        sp = (uint32_t)(sp + BASIC_FRAME + align);
    }
    r->r[13] = sp;
}

static bool parse_binary(spoor_dump *d)
{
    const uint8_t *b = d->data;
    size_t len = d->size;
    if (!header_fits(ZE, len, ZE_HEADER_SIZE))
        return false;
    if (b[0] != 'Z' || b[1] != 'E')
        return fail(SPOOR_ERR_FORMAT, ZE, "no 'ZE' at the start");
    unsigned version = get16(b + 2), target = get16(b + 4), ptr_bits = b[6], flags = b[7];
    uint32_t reason = get32(b + 8);
    if (version < 1 || version > 2)
        return fail(SPOOR_ERR_UNSUPPORTED, ZE, "header version %u (spoor reads 1 and 2)", version);
    if (target != ZE_TARGET_CORTEX_M)
        return fail(SPOOR_ERR_UNSUPPORTED, ZE, "target code %u, not 3 (Cortex-M)", target);
    if (ptr_bits != 5)
        return fail(SPOOR_ERR_UNSUPPORTED, ZE, "pointers of 2^%u bits, not 32", ptr_bits);
    d->version = version;

    const uint8_t *arch = NULL;
    unsigned arch_version = 0;
    bool crc_seen = false;
    size_t off = ZE_HEADER_SIZE;
    while (off < len) {
        if (crc_seen)
            return fail(SPOOR_ERR_FORMAT, ZE, "%zu bytes after the CRC trailer", len - off);
        char id = (char)b[off];
        size_t left = len - off;
        size_t hdr = id == 'M' ? 11u : id == 'C' ? 7u : id == 'F' ? 13u : 5u;
        if (id != 'A' && id != 'T' && id != 'M' && id != 'F' && id != 'C')
            return fail(SPOOR_ERR_FORMAT, ZE, "unknown block id 0x%02x at byte %zu", b[off], off);
        if (left < hdr)
            return fail(SPOOR_ERR_TRUNCATED, ZE,
                        "truncated: block '%c' at byte %zu has %zu of its %zu header bytes", id,
                        off, left, hdr);
        unsigned bver = get16(b + off + 1);
        size_t n;
        if (id == 'C') {
            uint32_t stored = get32(b + off + 3);
            uint32_t crc = spoor_crc32(0, b, (uint32_t)off);
            if (stored != crc)
                return fail(SPOOR_ERR_FORMAT, ZE,
                            "bad CRC trailer (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                            stored, crc);
            crc_seen = true;
            off += hdr;
            continue;
        }
        if (id == 'M') {
            uint32_t start = get32(b + off + 3), end = get32(b + off + 7);
            if (bver != 1)
                return fail(SPOOR_ERR_UNSUPPORTED, ZE, "memory block version %u at byte %zu", bver,
                            off);
            if (end <= start)
                return fail(SPOOR_ERR_FORMAT, ZE,
                            "memory block at byte %zu ends (0x%08" PRIx32
                            ") at or before its start (0x%08" PRIx32 ")",
                            off, end, start);
            n = end - start;
            if (left - hdr < n)
                return fail(SPOOR_ERR_TRUNCATED, ZE,
                            "truncated: memory block at byte %zu (0x%08" PRIx32 "..0x%08" PRIx32
                            ") needs %zu bytes, %zu left",
                            off, start, end, n, left - hdr);
            if (!spoor_foreign_add_region(d, start, (uint32_t)n, b + off + hdr))
                return false;
        } else {
            n = get16(b + off + 3);
            if (left - hdr < n)
                return fail(SPOOR_ERR_TRUNCATED, ZE,
                            "truncated: block '%c' at byte %zu needs %zu bytes, %zu left", id, off,
                            n, left - hdr);
            if (id == 'A') {
                size_t need = bver == 1   ? ZE_ARCH_V1_SIZE
                              : bver == 2 ? ZE_ARCH_V2_SIZE
                                          : ZE_ARCH_V3_SIZE;
                if (arch)
                    return fail(SPOOR_ERR_FORMAT, ZE, "second arch block at byte %zu", off);
                if (bver < 1 || bver > 3)
                    return fail(SPOOR_ERR_UNSUPPORTED, ZE,
                                "arch block version %u (spoor reads 1 to 3)", bver);
                if (n < need)
                    return fail(SPOOR_ERR_FORMAT, ZE,
                                "arch block version %u of %zu bytes, needs %zu", bver, n, need);
                arch = b + off + hdr;
                arch_version = bver;
            } else if (id == 'T') {
                d->zephyr_kernel = n ? b + off + hdr : NULL;
                d->zephyr_kernel_len = n;
            } else {
                d->skipped_records++; /* 'F': another CPU's registers (SMP) */
            }
        }
        off += hdr + n;
    }
    if ((flags & ZE_FLAG_CRC) && !crc_seen)
        return fail(SPOOR_ERR_TRUNCATED, ZE,
                    "truncated: the header announces a CRC trailer and the dump ends at byte %zu "
                    "without one",
                    len);
    if (!spoor_foreign_merge_regions(d))
        return false;
    if (arch) {
        d->has_registers = true;
        set_registers(d, arch, arch_version);
    }
    d->has_reason = true;
    /* Which exception ran is not in the dump (a fault class's reason may come from a HardFault
     * it escalated to): a fault's code stays 0 (unknown). The reason's words stand for the
     * fault status registers the dump does not have. */
    bool fault = reason_is_fault(reason);
    d->reason = fault ? SPOOR_REASON_FAULT : SPOOR_REASON_USER;
    d->reason_code = fault ? 0 : reason;
    const char *name = spoor_zephyr_reason_name(reason), *words = reason_words(reason);
    char text[120];
    if (name)
        snprintf(text, sizeof text, "Zephyr %s (%s)", name, words);
    else
        snprintf(text, sizeof text, "Zephyr fatal error reason %" PRIu32 "%s", reason,
                 reason >= ZE_ARCH_START ? " (architecture-specific, not a Cortex-M one)" : "");
    if (!(d->message = strdup(text)) || (fault && !(d->fault_words = strdup(words))))
        return fail(SPOOR_ERR_NOMEM, ZE, "out of memory");
    return true;
}

static bool is_hex(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned hex_value(int c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* After the hex digits a line may hold spaces, CR and the log's colour escapes (ESC [ ... m). */
static bool only_trailer(const char *p, const char *end)
{
    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == '\r') {
            p++;
        } else if (*p == 0x1b && p + 1 < end && p[1] == '[') {
            p += 2;
            while (p < end && *p != 'm')
                p++;
            if (p == end)
                return false;
            p++;
        } else {
            return false;
        }
    }
    return true;
}

static const char *find(const char *p, const char *end, const char *what)
{
    size_t n = strlen(what);
    for (; (size_t)(end - p) >= n; p++)
        if (*p == what[0] && !memcmp(p, what, n))
            return p;
    return NULL;
}

#define CD_PREFIX "#CD:"
#define LOG "zephyr coredump log"

/* The bytes of the last complete BEGIN..END dump of a #CD: log, into d->data. */
static bool decode_log(spoor_dump *d, const char *text, size_t len)
{
    uint8_t *cur = malloc(len / 2 + 1);
    if (!cur)
        return fail(SPOOR_ERR_NOMEM, LOG, "out of memory");
    size_t n = 0;
    bool in_dump = false, have = false;
    unsigned line = 0, begin_line = 0, error_line = 0;
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        line++;
        const char *cd = find(p, eol, CD_PREFIX);
        p = eol < end ? eol + 1 : end;
        if (!cd)
            continue;
        cd += strlen(CD_PREFIX);
        if (find(cd, eol, "BEGIN#") == cd) {
            in_dump = true;
            begin_line = line;
            n = 0;
            continue;
        }
        if (find(cd, eol, "END#") == cd) {
            if (in_dump) {
                have = true;
                free(d->data);
                d->data = NULL;
                d->size = 0;
                if (!(d->data = malloc(n ? n : 1))) {
                    free(cur);
                    return fail(SPOOR_ERR_NOMEM, LOG, "out of memory");
                }
                memcpy(d->data, cur, n);
                d->size = n;
            }
            in_dump = false;
            continue;
        }
        if (find(cd, eol, "ERROR CANNOT DUMP#") == cd) {
            if (in_dump)
                error_line = line;
            in_dump = false;
            continue;
        }
        if (!in_dump)
            continue;
        const char *h = cd;
        while (h < eol && is_hex((unsigned char)*h))
            h++;
        if ((h - cd) % 2 || h == cd || !only_trailer(h, eol)) {
            free(cur);
            return fail(SPOOR_ERR_FORMAT, LOG, "line %u: '#CD:' not followed by hex byte pairs",
                        line);
        }
        for (const char *q = cd; q < h; q += 2)
            cur[n++] =
                (uint8_t)(hex_value((unsigned char)q[0]) << 4 | hex_value((unsigned char)q[1]));
    }
    free(cur);
    if (have)
        return true;
    if (in_dump)
        return fail(SPOOR_ERR_TRUNCATED, LOG,
                    "no #CD:END# after the #CD:BEGIN# of line %u (the log is cut)", begin_line);
    if (error_line)
        return fail(SPOOR_ERR_FORMAT, LOG,
                    "the target reported #CD:ERROR CANNOT DUMP# at line %u: the dump is not usable",
                    error_line);
    return fail(SPOOR_ERR_FORMAT, ZE,
                "not a Zephyr coredump (no 'ZE' or 'CD' header, no #CD:BEGIN# line)");
}

#define FLASH "zephyr coredump flash partition"

static bool decode_flash(spoor_dump *d)
{
    const uint8_t *b = d->data;
    size_t len = d->size;
    if (!header_fits(FLASH, len, FLASH_HEADER_SIZE))
        return false;
    unsigned version = get16(b + 2), checksum = get16(b + 10);
    uint32_t size = get32(b + 4);
    int32_t error = (int32_t)get32(b + 12);
    if (version != 1)
        return fail(SPOOR_ERR_UNSUPPORTED, FLASH, "header version %u (spoor reads 1)", version);
    if (error != 0)
        return fail(SPOOR_ERR_FORMAT, FLASH,
                    "the backend recorded error %" PRId32 " while dumping: the dump is not usable",
                    error);
    /* The dump starts at the header rounded up to the flash write size: 16 for most flash;
     * larger write blocks are powers of two. */
    for (size_t at = FLASH_HEADER_SIZE; at <= 4096; at *= 2) {
        if (len < at || len - at < size) {
            if (at == FLASH_HEADER_SIZE)
                return fail(SPOOR_ERR_TRUNCATED, FLASH,
                            "truncated: the header says %" PRIu32 " bytes of dump, the image has "
                            "%zu after the header",
                            size, len - at);
            break;
        }
        unsigned sum = 0;
        for (size_t i = 0; i < size; i++)
            sum += b[at + i];
        if ((sum & 0xFFFFu) != checksum)
            continue;
        memmove(d->data, d->data + at, size);
        d->size = size;
        return true;
    }
    return fail(SPOOR_ERR_FORMAT, FLASH,
                "bad checksum (stored 0x%04x; no dump after the header sums to it)", checksum);
}

spoor_dump *spoor_zephyr_dump_parse(const uint8_t *bytes, size_t len)
{
    spoor_dump *d = spoor_foreign_dump_new(bytes, len, "zephyr");
    if (!d)
        return NULL;
    bool ok;
    if (len >= 2 && bytes[0] == 'Z' && bytes[1] == 'E')
        ok = true;
    else if (len >= 2 && bytes[0] == 'C' && bytes[1] == 'D')
        ok = decode_flash(d);
    else
        ok = decode_log(d, (const char *)bytes, len);
    if (!ok || !parse_binary(d)) {
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}
