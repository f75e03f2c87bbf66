/* Parsing crash dumps (spoor/dump_format.h) into a spoor_dump, and reading target memory
 * from the dump's regions. Raw debugger inputs (regs.json, memory files) are in
 * dump_raw.c / regs_json.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/set_error.h"
#include "spoor/crash.h"
#include "spoor/dump.h"

#include "base/byteorder.h"
#include "base/input_file.h"
#include "base/partition_point.h"
#include "snapshot/dump_internal.h"

#define get16 spoor_le16
#define get32 spoor_le32

const char *spoor_dump_reason_name(uint32_t reason)
{
    switch (reason) {
    case SPOOR_REASON_FAULT: return "fault";
    case SPOOR_REASON_ASSERT: return "assert";
    case SPOOR_REASON_WATCHDOG: return "watchdog";
    case SPOOR_REASON_USER: return "user";
    default: return "unknown";
    }
}

void spoor_dump_free(spoor_dump *dump)
{
    if (!dump)
        return;
    free(dump->file);
    free(dump->message);
    free(dump->fault_words);
    free(dump->regions);
    for (size_t i = 0; i < dump->extra_count; i++)
        free(dump->extra[i]);
    free(dump->extra);
    if (dump->mapped_len)
        munmap(dump->data, dump->mapped_len);
    else
        free(dump->data);
    free(dump);
}

static char *copy_text(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static const char *record_name(unsigned type)
{
    switch (type) {
    case SPOOR_REC_REGISTERS: return "registers";
    case SPOOR_REC_FAULT: return "fault";
    case SPOOR_REC_MEMORY: return "memory";
    case SPOOR_REC_BUILD_ID: return "build-id";
    case SPOOR_REC_REASON: return "reason";
    case SPOOR_REC_MTB: return "MTB";
    case SPOOR_REC_CALL_RECORDS: return "call records";
    default: return "unknown";
    }
}

static bool need(unsigned type, uint32_t off, uint32_t len, uint32_t min)
{
    if (len >= min)
        return true;
    spoor_set_error(SPOOR_ERR_FORMAT,
                    "dump: %s record at byte %" PRIu32 " too short (%" PRIu32
                    " bytes, need %" PRIu32 ")",
                    record_name(type), off, len, min);
    return false;
}

static bool once(bool *seen, unsigned type, uint32_t off)
{
    if (*seen) {
        spoor_set_error(SPOOR_ERR_FORMAT, "dump: second %s record at byte %" PRIu32,
                        record_name(type), off);
        return false;
    }
    *seen = true;
    return true;
}

static bool add_region(spoor_dump *d, uint32_t address, uint32_t length, uint16_t kind,
                       bool truncated, const uint8_t *bytes)
{
    spoor_dump_region *r = realloc(d->regions, (d->region_count + 1) * sizeof *r);
    if (!r) {
        spoor_set_error(SPOOR_ERR_NOMEM, "dump: out of memory");
        return false;
    }
    d->regions = r;
    r[d->region_count++] = (spoor_dump_region){address, length, kind, truncated, bytes};
    return true;
}

void spoor_dump_registers_from_words(spoor_regs *regs, const uint8_t *p)
{
    memset(regs, 0, sizeof *regs);
    regs->flags = get32(p + SPOOR_REGS_FLAGS);
    for (int i = 0; i < 13; i++)
        regs->r[i] = get32(p + SPOOR_REGS_R0 + 4 * i);
    regs->r[13] = get32(p + SPOOR_REGS_SP);
    regs->r[14] = get32(p + SPOOR_REGS_LR);
    regs->r[15] = get32(p + SPOOR_REGS_PC);
    regs->xpsr = get32(p + SPOOR_REGS_XPSR);
    regs->exc_return = get32(p + SPOOR_REGS_EXC_RETURN);
    regs->msp = get32(p + SPOOR_REGS_MSP);
    regs->psp = get32(p + SPOOR_REGS_PSP);
    regs->control = get32(p + SPOOR_REGS_CONTROL);
    regs->msplim = get32(p + SPOOR_REGS_MSPLIM);
    regs->psplim = get32(p + SPOOR_REGS_PSPLIM);
    for (int i = 0; i < 16; i++)
        regs->s[i] = get32(p + SPOOR_REGS_S0 + 4 * i);
    regs->fpscr = get32(p + SPOOR_REGS_FPSCR);
    /* A capture knows the banked SPs and EXC_RETURN except when software took it (no
     * exception entry: no EXC_RETURN); FP state only when the frame held it. */
    regs->have = SPOOR_HAVE_CORE | SPOOR_HAVE_BANKED_SP;
    if (!(regs->flags & SPOOR_REGS_SOFTWARE))
        regs->have |= SPOOR_HAVE_EXC_RETURN;
    if (regs->flags & SPOOR_REGS_HAS_LIMITS)
        regs->have |= SPOOR_HAVE_LIMITS;
    if (regs->flags & SPOOR_REGS_FP_VALID)
        regs->have |= SPOOR_HAVE_FP;
}

static bool parse_record(spoor_dump *d, unsigned type, unsigned flags, uint32_t off,
                         const uint8_t *p, uint32_t len, bool seen[8])
{
    bool truncated = (flags & SPOOR_REC_FLAG_TRUNCATED) != 0;
    switch (type) {
    case SPOOR_REC_REGISTERS:
        if (!need(type, off, len, SPOOR_REGS_SIZE) || !once(&seen[type], type, off))
            return false;
        d->has_registers = true;
        spoor_dump_registers_from_words(&d->regs, p);
        return true;
    case SPOOR_REC_FAULT:
        if (!need(type, off, len, SPOOR_FAULT_SIZE) || !once(&seen[type], type, off))
            return false;
        d->has_fault = true;
        d->fault.valid = get32(p + SPOOR_FAULT_VALID);
        d->fault.cfsr = get32(p + SPOOR_FAULT_CFSR);
        d->fault.hfsr = get32(p + SPOOR_FAULT_HFSR);
        d->fault.dfsr = get32(p + SPOOR_FAULT_DFSR);
        d->fault.mmfar = get32(p + SPOOR_FAULT_MMFAR);
        d->fault.bfar = get32(p + SPOOR_FAULT_BFAR);
        d->fault.afsr = get32(p + SPOOR_FAULT_AFSR);
        d->fault.sfsr = get32(p + SPOOR_FAULT_SFSR);
        d->fault.sfar = get32(p + SPOOR_FAULT_SFAR);
        return true;
    case SPOOR_REC_MEMORY: {
        if (!need(type, off, len, SPOOR_MEM_BYTES))
            return false;
        uint32_t address = get32(p + SPOOR_MEM_ADDRESS);
        uint32_t n = len - SPOOR_MEM_BYTES;
        if ((uint64_t)address + n > 0x100000000ull) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "dump: memory region 0x%08" PRIx32 "+%" PRIu32
                            " runs past the 4 GiB address space",
                            address, n);
            return false;
        }
        if (n == 0)
            return true;
        return add_region(d, address, n, get16(p + SPOOR_MEM_KIND), truncated, p + SPOOR_MEM_BYTES);
    }
    case SPOOR_REC_BUILD_ID:
        if (!once(&seen[type], type, off))
            return false;
        d->build_id = len ? p : NULL;
        d->build_id_len = len;
        return true;
    case SPOOR_REC_REASON: {
        if (!need(type, off, len, SPOOR_REASON_TEXT) || !once(&seen[type], type, off))
            return false;
        uint32_t file_len = get16(p + SPOOR_REASON_FILE_LEN);
        uint32_t msg_len = get16(p + SPOOR_REASON_MSG_LEN);
        if (SPOOR_REASON_TEXT + file_len + msg_len > len) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "dump: reason record at byte %" PRIu32 " has texts of %" PRIu32
                            "+%" PRIu32 " bytes in a %" PRIu32 "-byte record",
                            off, file_len, msg_len, len);
            return false;
        }
        d->has_reason = true;
        d->reason = get32(p + SPOOR_REASON_REASON);
        d->reason_code = get32(p + SPOOR_REASON_CODE);
        d->line = get32(p + SPOOR_REASON_LINE);
        if (file_len && !(d->file = copy_text(p + SPOOR_REASON_TEXT, file_len)))
            return false;
        if (msg_len && !(d->message = copy_text(p + SPOOR_REASON_TEXT + file_len, msg_len)))
            return false;
        return true;
    }
    case SPOOR_REC_MTB:
        if (!need(type, off, len, SPOOR_MTB_BYTES) || !once(&seen[type], type, off))
            return false;
        d->has_mtb = true;
        d->mtb_position = get32(p + SPOOR_MTB_POSITION);
        d->mtb_master = get32(p + SPOOR_MTB_MASTER);
        d->mtb_flow = get32(p + SPOOR_MTB_FLOW);
        d->mtb_base = get32(p + SPOOR_MTB_BASE);
        d->mtb_address = get32(p + SPOOR_MTB_ADDRESS);
        d->mtb_bytes = p + SPOOR_MTB_BYTES;
        d->mtb_len = len - SPOOR_MTB_BYTES;
        return true;
    case SPOOR_REC_CALL_RECORDS:
        if (!need(type, off, len, SPOOR_CALLS_BYTES) || !once(&seen[type], type, off))
            return false;
        d->has_calls = true;
        d->calls_address = get32(p + SPOOR_CALLS_ADDRESS);
        d->calls_entry_size = get16(p + SPOOR_CALLS_ENTRY_SIZE);
        d->calls_count = get32(p + SPOOR_CALLS_COUNT);
        d->calls_next = get32(p + SPOOR_CALLS_NEXT);
        d->calls_bytes = p + SPOOR_CALLS_BYTES;
        d->calls_len = len - SPOOR_CALLS_BYTES;
        return true;
    default: d->skipped_records++; return true;
    }
}

static int region_order(const void *a, const void *b)
{
    const spoor_dump_region *x = a, *y = b;
    return x->address < y->address ? -1 : x->address > y->address;
}

bool spoor_dump_check_regions(spoor_dump *d)
{
    if (d->region_count > 1)
        qsort(d->regions, d->region_count, sizeof *d->regions, region_order);
    for (size_t i = 1; i < d->region_count; i++) {
        const spoor_dump_region *a = &d->regions[i - 1], *b = &d->regions[i];
        if ((uint64_t)a->address + a->length > b->address) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "dump: memory regions 0x%08" PRIx32 "+%" PRIu32 " and 0x%08" PRIx32
                            "+%" PRIu32 " overlap",
                            a->address, a->length, b->address, b->length);
            return false;
        }
    }
    return true;
}

static bool parse_bytes(spoor_dump *d)
{
    const uint8_t *b = d->data;
    size_t len = d->size;
    if (len < 4 || get32(b) != SPOOR_DUMP_MAGIC) {
        spoor_set_error(SPOOR_ERR_FORMAT, "dump: not a spoor crash dump (bad magic%s)",
                        len < 4 ? ", file shorter than 4 bytes" : "");
        return false;
    }
    if (len < SPOOR_DUMP_HEADER_SIZE) {
        spoor_set_error(SPOOR_ERR_TRUNCATED, "dump: truncated at byte %zu of %u", len,
                        SPOOR_DUMP_HEADER_SIZE);
        return false;
    }
    unsigned version = get16(b + SPOOR_DUMP_HDR_VERSION);
    if (version != SPOOR_DUMP_VERSION) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "dump: unsupported version %u (this spoor reads version %u)", version,
                        SPOOR_DUMP_VERSION);
        return false;
    }
    d->version = version;
    uint32_t header_size = get16(b + SPOOR_DUMP_HDR_HEADER_SIZE);
    uint32_t total = get32(b + SPOOR_DUMP_HDR_TOTAL_SIZE);
    if (header_size < SPOOR_DUMP_HEADER_SIZE || header_size % 4 != 0 || total < header_size) {
        spoor_set_error(SPOOR_ERR_FORMAT,
                        "dump: bad header (header size %" PRIu32 ", total size %" PRIu32 ")",
                        header_size, total);
        return false;
    }
    if (len < total) {
        spoor_set_error(SPOOR_ERR_TRUNCATED, "dump: truncated at byte %zu of %" PRIu32, len, total);
        return false;
    }
    uint32_t stored = get32(b + SPOOR_DUMP_HDR_CRC);
    uint32_t crc = spoor_crc32(0, b, SPOOR_DUMP_HDR_CRC);
    crc = spoor_crc32(crc, b + SPOOR_DUMP_HEADER_SIZE, total - SPOOR_DUMP_HEADER_SIZE);
    if (crc != stored) {
        spoor_set_error(SPOOR_ERR_FORMAT,
                        "dump: bad CRC (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", stored,
                        crc);
        return false;
    }

    bool seen[8] = {false};
    uint32_t off = header_size;
    for (;;) {
        if ((uint64_t)off + SPOOR_REC_HEADER_SIZE > total) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "dump: no end record (records run to byte %" PRIu32 " of %" PRIu32 ")",
                            off, total);
            return false;
        }
        unsigned type = get16(b + off + SPOOR_REC_HDR_TYPE);
        unsigned flags = get16(b + off + SPOOR_REC_HDR_FLAGS);
        uint32_t rlen = get32(b + off + SPOOR_REC_HDR_LENGTH);
        uint64_t next = (uint64_t)off + SPOOR_REC_HEADER_SIZE + (((uint64_t)rlen + 3) & ~3ull);
        if (next > total) {
            spoor_set_error(SPOOR_ERR_FORMAT,
                            "dump: record at byte %" PRIu32 " (type %u, %" PRIu32
                            " bytes) runs past the end of the dump at byte %" PRIu32,
                            off, type, rlen, total);
            return false;
        }
        if (type == SPOOR_REC_END) {
            if (next != total) {
                spoor_set_error(SPOOR_ERR_FORMAT,
                                "dump: %" PRIu64 " bytes after the end record at byte %" PRIu32,
                                total - next, off);
                return false;
            }
            break;
        }
        if (!parse_record(d, type, flags, off, b + off + SPOOR_REC_HEADER_SIZE, rlen, seen))
            return false;
        off = (uint32_t)next;
    }
    return spoor_dump_check_regions(d);
}

spoor_dump *spoor_dump_new_copy(const void *bytes, size_t len)
{
    spoor_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->data = malloc(len ? len : 1))) {
        free(d);
        spoor_set_error(SPOOR_ERR_NOMEM, "dump: out of memory");
        return NULL;
    }
    if (len)
        memcpy(d->data, bytes, len);
    d->size = len;
    return d;
}

spoor_dump *spoor_dump_parse(const void *bytes, size_t len)
{
    spoor_dump *d = spoor_dump_new_copy(bytes, len);
    if (!d)
        return NULL;
    if (!parse_bytes(d)) {
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}

int spoor_dump_open_file(const char *path, size_t *size)
{
    struct stat st;
    int fd = spoor_input_open(path, SPOOR_INPUT_REGULAR, &st);
    if (fd < 0)
        return -1;
    if ((uint64_t)st.st_size > SPOOR_MAX_INPUT_FILE) {
        spoor_set_error(SPOOR_ERR_TOO_LARGE, "%s: %lld bytes, larger than 256 MiB", path,
                        (long long)st.st_size);
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

bool spoor_dump_read_file(const char *path, uint8_t **data, size_t *size)
{
    size_t cap, n = 0;
    int fd = spoor_dump_open_file(path, &cap);
    if (fd < 0)
        return false;
    uint8_t *buf = malloc(cap + 1);
    if (!buf) {
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
        close(fd);
        return false;
    }
    while (n < cap) { /* a file that shrinks while read ends early; one that grows is cut */
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            spoor_set_error(SPOOR_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return false;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = 0;
    *data = buf;
    *size = n;
    return true;
}

spoor_dump *spoor_dump_load(const char *path)
{
    uint8_t *data;
    size_t size;
    if (!spoor_dump_read_file(path, &data, &size))
        return NULL;
    spoor_dump *d = spoor_dump_parse(data, size);
    free(data);
    return d;
}

typedef struct region_search {
    const spoor_dump_region *regions; /* sorted by address */
    uint64_t at;
} region_search;

static bool starts_at_or_below(const void *ctx, size_t i)
{
    const region_search *s = ctx;
    return s->regions[i].address <= s->at;
}

bool spoor_dump_read(const spoor_dump *dump, uint32_t addr, void *buf, size_t len)
{
    uint8_t *out = buf;
    uint64_t at = addr;
    const uint64_t end = (uint64_t)addr + len;
    if (!dump || end > 0x100000000ull)
        return false;
    while (at < end) {
        /* the last region that starts at or below `at` */
        const region_search search = {dump->regions, at};
        size_t lo = spoor_partition_point(0, dump->region_count, starts_at_or_below, &search);
        if (lo == 0)
            return false;
        const spoor_dump_region *r = &dump->regions[lo - 1];
        uint64_t r_end = (uint64_t)r->address + r->length;
        if (at >= r_end)
            return false;
        size_t n = (size_t)((r_end < end ? r_end : end) - at);
        memcpy(out, r->bytes + (at - r->address), n);
        out += n;
        at += n;
    }
    return true;
}
