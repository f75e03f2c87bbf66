/*
 * The crash dump writer: builds the records of spoor/dump_format.h into the .noinit buffer,
 * seals them with the CRC, keeps the first dump of a crash loop until it is taken, and hands
 * it out in chunks. Portable: the arch code (target/src/cortexm) fills a spoor_capture and
 * supplies the memory reader; host unit tests do the same with fake memory.
 *
 * Buffer layout: a 16-byte control block (magic, state, dropped count, check word), then
 * the dump itself.
 */
#include <string.h>

#include "spoor/crash.h"
#include "spoor/no_instrument.h"

#define CONTROL_MAGIC 0x42435053u /* "SPCB" */
#define STATE_EMPTY 0u
#define STATE_PENDING 1u
#define STATE_TAKEN 2u
/* Smallest useful dump area: header, reason, registers, fault registers, end record. */
#define MIN_DUMP_SIZE                                                                              \
    (SPOOR_DUMP_HEADER_SIZE + 4u * SPOOR_REC_HEADER_SIZE + SPOOR_REASON_TEXT + SPOOR_REGS_SIZE +   \
     SPOOR_FAULT_SIZE)

typedef struct control_block {
    uint32_t magic;
    uint32_t state;
    uint32_t dropped;
    uint32_t check;
} control_block;

typedef struct registered_region {
    uint32_t address;
    uint32_t length;
    uint16_t kind;
} registered_region;

static struct {
    bool ready;
    spoor_crash_config config;
    spoor_memory memory;
    registered_region regions[SPOOR_CRASH_MAX_REGIONS];
    uint32_t region_count;
    bool has_calls;
    uint32_t calls_address;
    uint16_t calls_entry_size;
    uint32_t calls_count;
    const volatile uint32_t *calls_next;
    spoor_dump_extra_fn extra;
} writer;

/* ---- little-endian stores and range checks ------------------------------------------- */

SPOOR_NO_INSTRUMENT static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

SPOOR_NO_INSTRUMENT static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

SPOOR_NO_INSTRUMENT static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

SPOOR_NO_INSTRUMENT static bool readable(const spoor_memory *m, uint32_t addr, uint32_t len)
{
    return spoor_range_contains(m->ram, m->ram_count, addr, len) ||
           spoor_range_contains(m->flash, m->flash_count, addr, len);
}

/* ---- building records ------------------------------------------------------------------ */

typedef struct builder {
    uint8_t *buf;
    uint32_t cap; /* bytes usable for records, the end record's 8 bytes held back */
    uint32_t used;
} builder;

/* Room for a payload of at most want bytes; returns the payload pointer and sets *got, or
 * NULL when not even min bytes fit. The record is not committed until end_record(). */
SPOOR_NO_INSTRUMENT static uint8_t *begin_record(builder *b, uint32_t want, uint32_t min,
                                                 uint32_t *got)
{
    if (b->used + SPOOR_REC_HEADER_SIZE > b->cap)
        return NULL;
    uint32_t room = (b->cap - b->used - SPOOR_REC_HEADER_SIZE) & ~3u;
    if (room < min)
        return NULL;
    *got = want < room ? want : room;
    return b->buf + b->used + SPOOR_REC_HEADER_SIZE;
}

SPOOR_NO_INSTRUMENT static void end_record(builder *b, uint32_t type, uint32_t flags,
                                           uint32_t length)
{
    uint8_t *h = b->buf + b->used;
    put16(h + SPOOR_REC_HDR_TYPE, type);
    put16(h + SPOOR_REC_HDR_FLAGS, flags);
    put32(h + SPOOR_REC_HDR_LENGTH, length);
    uint32_t padded = SPOOR_DUMP_ALIGN4(length);
    memset(h + SPOOR_REC_HEADER_SIZE + length, 0, padded - length);
    b->used += SPOOR_REC_HEADER_SIZE + padded;
}

SPOOR_NO_INSTRUMENT static void put_words(builder *b, uint32_t type, const uint32_t *words,
                                          uint32_t count)
{
    uint32_t got;
    uint8_t *p = begin_record(b, count * 4u, count * 4u, &got);
    if (!p)
        return;
    for (uint32_t i = 0; i < count; i++)
        put32(p + 4u * i, words[i]);
    end_record(b, type, 0, count * 4u);
}

SPOOR_NO_INSTRUMENT static uint32_t text_length(const char *s, uint32_t max)
{
    uint32_t n = 0;
    if (s)
        while (n < max && s[n])
            n++;
    return n;
}

SPOOR_NO_INSTRUMENT static void put_reason(builder *b, const spoor_capture *c)
{
    uint32_t file_len = text_length(c->file, 200);
    uint32_t msg_len = text_length(c->message, 200);
    uint32_t got;
    uint8_t *p = begin_record(b, SPOOR_REASON_TEXT + file_len + msg_len, SPOOR_REASON_TEXT, &got);
    if (!p)
        return;
    /* keep the end of the file name (the part that says which file) when space is short */
    uint32_t room = got - SPOOR_REASON_TEXT;
    uint32_t flags = 0;
    if (file_len + msg_len > room) {
        flags = SPOOR_REC_FLAG_TRUNCATED;
        msg_len = msg_len < room / 2u ? msg_len : room / 2u;
        file_len = room - msg_len < file_len ? room - msg_len : file_len;
    }
    put32(p + SPOOR_REASON_REASON, c->reason);
    put32(p + SPOOR_REASON_CODE, c->code);
    put32(p + SPOOR_REASON_LINE, c->line);
    put16(p + SPOOR_REASON_FILE_LEN, file_len);
    put16(p + SPOOR_REASON_MSG_LEN, msg_len);
    uint32_t file_total = text_length(c->file, 200);
    if (file_len)
        memcpy(p + SPOOR_REASON_TEXT, c->file + (file_total - file_len), file_len);
    if (msg_len)
        memcpy(p + SPOOR_REASON_TEXT + file_len, c->message, msg_len);
    end_record(b, SPOOR_REC_REASON, flags, SPOOR_REASON_TEXT + file_len + msg_len);
}

SPOOR_NO_INSTRUMENT static void put_bytes_record(builder *b, uint32_t type, const uint8_t *bytes,
                                                 uint32_t len)
{
    uint32_t got;
    uint8_t *p = begin_record(b, len, len, &got);
    if (!p)
        return;
    memcpy(p, bytes, len);
    end_record(b, type, 0, len);
}

/* The first memory record in the dump so far that overlaps [addr, end), or false. */
SPOOR_NO_INSTRUMENT static bool find_overlap(const builder *b, uint32_t addr, uint64_t end,
                                             uint32_t *o_start, uint64_t *o_end)
{
    uint32_t off = SPOOR_DUMP_HEADER_SIZE;
    while (off + SPOOR_REC_HEADER_SIZE <= b->used) {
        const uint8_t *h = b->buf + off;
        uint32_t type = (uint32_t)h[0] | (uint32_t)h[1] << 8;
        uint32_t len = get32(h + SPOOR_REC_HDR_LENGTH);
        if (type == SPOOR_REC_MEMORY && len >= SPOOR_MEM_BYTES) {
            uint32_t start = get32(h + SPOOR_REC_HEADER_SIZE + SPOOR_MEM_ADDRESS);
            uint64_t stop = (uint64_t)start + (len - SPOOR_MEM_BYTES);
            if (start < end && addr < stop) {
                *o_start = start;
                *o_end = stop;
                return true;
            }
        }
        off += SPOOR_REC_HEADER_SIZE + SPOOR_DUMP_ALIGN4(len);
    }
    return false;
}

/* Copies [addr, end) of target memory as MEMORY records, leaving out whatever earlier
 * records hold already, so that no two memory records overlap. */
SPOOR_NO_INSTRUMENT static void put_memory(builder *b, const spoor_memory *m, uint32_t addr,
                                           uint64_t end, uint32_t kind, uint32_t flags,
                                           unsigned depth)
{
    if (addr >= end || depth > 2u * SPOOR_CRASH_MAX_REGIONS + 4u)
        return;
    uint32_t o_start;
    uint64_t o_end;
    if (find_overlap(b, addr, end, &o_start, &o_end)) {
        if (o_start > addr)
            put_memory(b, m, addr, o_start, kind, SPOOR_REC_FLAG_TRUNCATED, depth + 1u);
        if (o_end < end)
            put_memory(b, m, (uint32_t)o_end, end, kind, SPOOR_REC_FLAG_TRUNCATED, depth + 1u);
        return;
    }
    uint32_t len = (uint32_t)(end - addr);
    if (!readable(m, addr, len))
        return;
    uint32_t got;
    uint8_t *p = begin_record(b, SPOOR_MEM_BYTES + len, SPOOR_MEM_BYTES + 4u, &got);
    if (!p)
        return;
    uint32_t n = got - SPOOR_MEM_BYTES;
    if (n < len)
        flags |= SPOOR_REC_FLAG_TRUNCATED;
    if (!m->read(m->ctx, addr, p + SPOOR_MEM_BYTES, n))
        return;
    put32(p + SPOOR_MEM_ADDRESS, addr);
    put16(p + SPOOR_MEM_KIND, kind);
    put16(p + SPOOR_MEM_RESERVED, 0);
    end_record(b, SPOOR_REC_MEMORY, flags, SPOOR_MEM_BYTES + n);
}

SPOOR_NO_INSTRUMENT static void put_mtb(builder *b, const spoor_capture *c, const spoor_memory *m)
{
    uint32_t addr = writer.config.mtb_buffer;
    uint32_t len = writer.config.mtb_buffer_size;
    if (len && !readable(m, addr, len))
        len = 0;
    uint32_t got;
    uint8_t *p = begin_record(b, SPOOR_MTB_BYTES + len, SPOOR_MTB_BYTES, &got);
    if (!p)
        return;
    uint32_t n = got - SPOOR_MTB_BYTES;
    uint32_t flags = n < len ? SPOOR_REC_FLAG_TRUNCATED : 0u;
    if (n && !m->read(m->ctx, addr, p + SPOOR_MTB_BYTES, n))
        n = 0;
    for (uint32_t i = 0; i < 4u; i++)
        put32(p + 4u * i, c->mtb_regs[i]);
    put32(p + SPOOR_MTB_ADDRESS, addr);
    end_record(b, SPOOR_REC_MTB, flags, SPOOR_MTB_BYTES + n);
}

SPOOR_NO_INSTRUMENT static void put_calls(builder *b, const spoor_memory *m)
{
    uint32_t len = writer.calls_count * writer.calls_entry_size;
    uint32_t addr = writer.calls_address;
    if (!readable(m, addr, len))
        return;
    uint32_t got;
    uint8_t *p = begin_record(b, SPOOR_CALLS_BYTES + len, SPOOR_CALLS_BYTES + len, &got);
    if (!p || !m->read(m->ctx, addr, p + SPOOR_CALLS_BYTES, len))
        return;
    put32(p + SPOOR_CALLS_ADDRESS, addr);
    put16(p + SPOOR_CALLS_ENTRY_SIZE, writer.calls_entry_size);
    put16(p + SPOOR_CALLS_RESERVED, 0);
    put32(p + SPOOR_CALLS_COUNT, writer.calls_count);
    put32(p + SPOOR_CALLS_NEXT, writer.calls_next ? *writer.calls_next : 0xFFFFFFFFu);
    end_record(b, SPOOR_REC_CALL_RECORDS, 0, SPOOR_CALLS_BYTES + len);
}

typedef struct extra_sink {
    builder *b;
    const spoor_memory *m;
} extra_sink;

SPOOR_NO_INSTRUMENT static void put_extra_region(void *ctx, uint32_t addr, uint32_t len,
                                                 uint32_t kind)
{
    extra_sink *s = ctx;
    put_memory(s->b, s->m, addr, (uint64_t)addr + len, kind, 0, 0);
}

SPOOR_NO_INSTRUMENT uint32_t spoor_dump_build(uint8_t *buf, uint32_t cap, const spoor_capture *c,
                                              const spoor_memory *m)
{
    cap &= ~3u;
    if (cap < MIN_DUMP_SIZE)
        return 0;
    builder b = {buf, cap - SPOOR_REC_HEADER_SIZE, SPOOR_DUMP_HEADER_SIZE};

    /* registers first: they always fit (MIN_DUMP_SIZE), the rest takes what is left */
    put_words(&b, SPOOR_REC_REGISTERS, c->regs, SPOOR_REGS_WORDS);
    if (c->has_fault)
        put_words(&b, SPOOR_REC_FAULT, c->fault, SPOOR_FAULT_SIZE / 4u);
    put_reason(&b, c);
    if (c->build_id && c->build_id_len)
        put_bytes_record(&b, SPOOR_REC_BUILD_ID, c->build_id, c->build_id_len);
    if (c->stack_len)
        put_memory(&b, m, c->stack_start, (uint64_t)c->stack_start + c->stack_len,
                   SPOOR_REGION_STACK, 0, 0);
    if (c->other_stack_len)
        put_memory(&b, m, c->other_stack_start, (uint64_t)c->other_stack_start + c->other_stack_len,
                   SPOOR_REGION_OTHER_STACK, 0, 0);
    if (c->has_mtb)
        put_mtb(&b, c, m);
    if (writer.has_calls)
        put_calls(&b, m);
    for (uint32_t i = 0; i < writer.region_count; i++) {
        const registered_region *r = &writer.regions[i];
        put_memory(&b, m, r->address, (uint64_t)r->address + r->length, r->kind, 0, 0);
    }
    if (writer.extra) {
        extra_sink sink = {&b, m};
        writer.extra(m, put_extra_region, &sink);
    }

    b.cap += SPOOR_REC_HEADER_SIZE; /* the end record's room, held back until now */
    end_record(&b, SPOOR_REC_END, 0, 0);

    put32(buf + SPOOR_DUMP_HDR_MAGIC, SPOOR_DUMP_MAGIC);
    put16(buf + SPOOR_DUMP_HDR_VERSION, SPOOR_DUMP_VERSION);
    put16(buf + SPOOR_DUMP_HDR_HEADER_SIZE, SPOOR_DUMP_HEADER_SIZE);
    put32(buf + SPOOR_DUMP_HDR_TOTAL_SIZE, b.used);
    uint32_t crc = spoor_crc32(0, buf, SPOOR_DUMP_HDR_CRC);
    crc = spoor_crc32(crc, buf + SPOOR_DUMP_HEADER_SIZE, b.used - SPOOR_DUMP_HEADER_SIZE);
    put32(buf + SPOOR_DUMP_HDR_CRC, crc);
    return b.used;
}

/* ---- the .noinit buffer ---------------------------------------------------------------- */

SPOOR_NO_INSTRUMENT static control_block *control(void)
{
    return (control_block *)writer.config.buffer;
}

SPOOR_NO_INSTRUMENT static uint8_t *dump_area(void)
{
    return (uint8_t *)writer.config.buffer + SPOOR_CRASH_CONTROL_SIZE;
}

SPOOR_NO_INSTRUMENT static uint32_t dump_capacity(void)
{
    return writer.config.buffer_size - SPOOR_CRASH_CONTROL_SIZE;
}

SPOOR_NO_INSTRUMENT static void set_state(uint32_t state, uint32_t dropped)
{
    control_block *cb = control();
    cb->magic = CONTROL_MAGIC;
    cb->state = state;
    cb->dropped = dropped;
    cb->check = ~(CONTROL_MAGIC ^ state ^ dropped);
}

SPOOR_NO_INSTRUMENT static bool control_valid(void)
{
    const control_block *cb = control();
    return cb->magic == CONTROL_MAGIC && cb->check == ~(cb->magic ^ cb->state ^ cb->dropped) &&
           cb->state <= STATE_TAKEN;
}

/* The size of a sealed dump in the buffer, 0 if the buffer does not hold one. */
SPOOR_NO_INSTRUMENT static uint32_t sealed_size(void)
{
    const uint8_t *d = dump_area();
    if (get32(d + SPOOR_DUMP_HDR_MAGIC) != SPOOR_DUMP_MAGIC)
        return 0;
    uint32_t size = get32(d + SPOOR_DUMP_HDR_TOTAL_SIZE);
    if (size < SPOOR_DUMP_HEADER_SIZE || size > dump_capacity())
        return 0;
    uint32_t crc = spoor_crc32(0, d, SPOOR_DUMP_HDR_CRC);
    crc = spoor_crc32(crc, d + SPOOR_DUMP_HEADER_SIZE, size - SPOOR_DUMP_HEADER_SIZE);
    return crc == get32(d + SPOOR_DUMP_HDR_CRC) ? size : 0;
}

SPOOR_NO_INSTRUMENT bool spoor_crash_setup(const spoor_crash_config *config,
                                           const spoor_memory *memory)
{
    writer.ready = false;
    if (!config || !config->buffer || ((uintptr_t)config->buffer & 3u) != 0 ||
        config->buffer_size < SPOOR_CRASH_CONTROL_SIZE + MIN_DUMP_SIZE || !memory || !memory->read)
        return false;
    writer.config = *config;
    writer.memory = *memory;
    writer.region_count = 0;
    writer.has_calls = false;
    writer.extra = NULL;
    if (!control_valid())
        set_state(STATE_EMPTY, 0);
    else if (control()->state == STATE_PENDING && sealed_size() == 0)
        set_state(STATE_EMPTY, control()->dropped);
    writer.ready = true;
    return true;
}

SPOOR_NO_INSTRUMENT bool spoor_dump_add_region(const void *addr, uint32_t len,
                                               enum spoor_region_kind kind)
{
    if (writer.region_count >= SPOOR_CRASH_MAX_REGIONS || len == 0)
        return false;
    registered_region *r = &writer.regions[writer.region_count++];
    r->address = (uint32_t)(uintptr_t)addr;
    r->length = len;
    r->kind = (uint16_t)kind;
    return true;
}

SPOOR_NO_INSTRUMENT bool spoor_dump_add_call_records(const void *ring, uint16_t entry_size,
                                                     uint32_t count, const volatile uint32_t *next)
{
    if (!ring || entry_size == 0 || count == 0)
        return false;
    writer.has_calls = true;
    writer.calls_address = (uint32_t)(uintptr_t)ring;
    writer.calls_entry_size = entry_size;
    writer.calls_count = count;
    writer.calls_next = next;
    return true;
}

SPOOR_NO_INSTRUMENT void spoor_dump_set_extra(spoor_dump_extra_fn extra)
{
    writer.extra = extra;
}

SPOOR_NO_INSTRUMENT bool spoor_crash_write(const spoor_capture *capture)
{
    if (!writer.ready)
        return false;
    if (control()->state == STATE_PENDING && sealed_size() != 0) {
        set_state(STATE_PENDING, control()->dropped + 1u);
        return false;
    }
    uint32_t dropped = control()->dropped;
    set_state(STATE_EMPTY, dropped);
    if (spoor_dump_build(dump_area(), dump_capacity(), capture, &writer.memory) == 0)
        return false;
    set_state(STATE_PENDING, dropped);
    return true;
}

SPOOR_NO_INSTRUMENT bool spoor_crash_valid(void)
{
    return writer.ready && control_valid() && control()->state == STATE_PENDING &&
           sealed_size() != 0;
}

SPOOR_NO_INSTRUMENT const uint8_t *spoor_crash_data(uint32_t *size)
{
    if (!spoor_crash_valid())
        return NULL;
    if (size)
        *size = sealed_size();
    return dump_area();
}

SPOOR_NO_INSTRUMENT uint32_t spoor_crash_dropped(void)
{
    return writer.ready && control_valid() ? control()->dropped : 0u;
}

SPOOR_NO_INSTRUMENT bool spoor_crash_stream(spoor_crash_sink_fn sink, void *ctx, uint32_t chunk)
{
    uint32_t size;
    const uint8_t *d = spoor_crash_data(&size);
    if (!d || !sink)
        return false;
    if (chunk == 0)
        chunk = 256;
    for (uint32_t off = 0; off < size; off += chunk) {
        uint32_t n = size - off < chunk ? size - off : chunk;
        if (!sink(ctx, d + off, n))
            return false;
    }
    return true;
}

SPOOR_NO_INSTRUMENT void spoor_crash_take(void)
{
    if (writer.ready)
        set_state(STATE_TAKEN, 0);
}

SPOOR_NO_INSTRUMENT const spoor_crash_config *spoor_crash_current_config(void)
{
    return writer.ready ? &writer.config : NULL;
}

SPOOR_NO_INSTRUMENT const spoor_memory *spoor_crash_current_memory(void)
{
    return writer.ready ? &writer.memory : NULL;
}
