/* probe-rs's coredumps (the `.coredump` files probe-rs writes of a halted core) read into a
 * spoor_dump with msgpack-c (spoor/dump_formats.h). Every layout fact is probe-rs's, from its
 * sources (github.com/probe-rs/probe-rs, commit 67993c4b6f3fcbabfc811d1df334acfe66cef150;
 * docs/dump-formats.md):
 *   - probe-rs/src/core/dump.rs: struct CoreDump { registers: HashMap<RegisterId,
 *     RegisterValue>, data: Vec<(Range<u64>, Vec<u8>)>, instruction_set, supports_native_64bit_
 *     access: bool, core_type: CoreType, fpu_support: bool, floating_point_register_count:
 *     Option<usize> }, written by CoreDump::store with rmp_serde::encode::write_named: a map
 *     keyed by the field names.
 *   - rmp-serde 1.x (rmp-serde/src/encode.rs): a struct with write_named is a map of field name
 *     strings; a tuple an array; Vec<u8> an array of integers (serde's seq; bin is accepted
 *     too); Range<u64> the struct {"start", "end"}; a unit enum variant its name as a string;
 *     a newtype variant a one-entry map {name: value}; a u128 a 16-byte big-endian bin; None nil.
 *   - probe-rs/src/core/registers.rs: RegisterId is #[serde(transparent)] u16, RegisterValue the
 *     enum U32(u32) | U64(u64) | U128(u128).
 *   - probe-rs/src/architecture/arm/core/registers/cortex_m.rs: ids 0-15 r0-r15, 16 xPSR, 17
 *     MSP, 18 PSP, 20 EXTRA (CONTROL in bits 31:24, then FAULTMASK, BASEPRI, PRIMASK, as the
 *     DCRSR selector 0b10100 reads them), 33 FPSCR, 64-95 s0-s31.
 *   - probe-rs-target/src/chip_family.rs: CoreType, #[serde(rename_all = "snake_case")]:
 *     "armv6m", "armv7m", "armv7em", "armv8m" are Cortex-M; the others are refused. */
#include <inttypes.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/set_error.h"
#include "spoor/dump_formats.h"

#include "snapshot/dump_foreign.h"
#include "snapshot/dump_internal.h"

#define PR "probe-rs coredump"

/* probe-rs's Cortex-M register ids (cortex_m.rs). */
enum {
    ID_XPSR = 16,
    ID_MSP = 17,
    ID_PSP = 18,
    ID_EXTRA = 20,
    ID_FPSCR = 33,
    ID_S0 = 64,
    ID_COUNT = 96,
};

typedef struct reader {
    spoor_dump *d;
    uint8_t *mem; /* decoded memory bytes: d->extra[0] */
    size_t mem_used, mem_cap;
    uint32_t value[ID_COUNT];
    bool have[ID_COUNT];
} reader;

static bool fail(spoor_status status, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    spoor_set_error(status, PR ": %s", msg);
    return false;
}

static bool is_str(const msgpack_object *o, const char *s)
{
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(s) &&
           !memcmp(o->via.str.ptr, s, o->via.str.size);
}

static const msgpack_object *field(const msgpack_object *map, const char *name)
{
    for (uint32_t i = 0; i < map->via.map.size; i++)
        if (is_str(&map->via.map.ptr[i].key, name))
            return &map->via.map.ptr[i].val;
    return NULL;
}

/* RegisterValue: {"U32": n}, {"U64": n} or {"U128": 16-byte big-endian bin}. */
static bool register_value(const msgpack_object *v, unsigned id, uint32_t *out)
{
    if (v->type != MSGPACK_OBJECT_MAP || v->via.map.size != 1)
        return fail(SPOOR_ERR_FORMAT, "register %u: not a RegisterValue ({\"U32\": value})", id);
    const msgpack_object *k = &v->via.map.ptr[0].key, *x = &v->via.map.ptr[0].val;
    if ((is_str(k, "U32") || is_str(k, "U64")) && x->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (x->via.u64 > UINT32_MAX)
            return fail(SPOOR_ERR_FORMAT, "register %u: value 0x%" PRIx64 " wider than 32 bits", id,
                        x->via.u64);
        *out = (uint32_t)x->via.u64;
        return true;
    }
    if (is_str(k, "U128") && x->type == MSGPACK_OBJECT_BIN && x->via.bin.size == 16) {
        const uint8_t *b = (const uint8_t *)x->via.bin.ptr;
        for (int i = 0; i < 12; i++)
            if (b[i])
                return fail(SPOOR_ERR_FORMAT, "register %u: value wider than 32 bits", id);
        *out = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        return true;
    }
    return fail(SPOOR_ERR_FORMAT, "register %u: not a RegisterValue ({\"U32\": value})", id);
}

static bool read_registers(reader *rd, const msgpack_object *regs)
{
    if (regs->type != MSGPACK_OBJECT_MAP)
        return fail(SPOOR_ERR_FORMAT, "\"registers\" is not a map");
    for (uint32_t i = 0; i < regs->via.map.size; i++) {
        const msgpack_object *k = &regs->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_POSITIVE_INTEGER || k->via.u64 > UINT16_MAX)
            return fail(SPOOR_ERR_FORMAT, "a register id that is not a 16-bit number");
        unsigned id = (unsigned)k->via.u64;
        uint32_t value = 0;
        if (!register_value(&regs->via.map.ptr[i].val, id, &value))
            return false;
        if (id >= ID_COUNT)
            continue; /* not a Cortex-M register spoor keeps (Armv8-M's banked ones) */
        if (rd->have[id])
            return fail(SPOOR_ERR_FORMAT, "register %u given twice", id);
        rd->value[id] = value;
        rd->have[id] = true;
    }
    return true;
}

static bool all(const reader *rd, unsigned from, unsigned to)
{
    for (unsigned id = from; id <= to; id++)
        if (!rd->have[id])
            return false;
    return true;
}

static bool take_registers(reader *rd, bool fpu)
{
    for (unsigned id = 0; id <= ID_XPSR; id++)
        if (!rd->have[id])
            return fail(SPOOR_ERR_FORMAT, "no value for register %u (%s)", id,
                        (const char *[]){"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9",
                                         "r10", "r11", "r12", "sp", "lr", "pc", "xPSR"}[id]);

    spoor_regs *r = &rd->d->regs;
    memcpy(r->r, rd->value, sizeof r->r);
    r->xpsr = rd->value[ID_XPSR];
    r->exc_return = 0xFFFFFFFFu; /* probe-rs has no EXC_RETURN register: unknown */
    rd->d->exc_return_unknown = true;
    r->have = SPOOR_HAVE_CORE;
    if (rd->have[ID_MSP] && rd->have[ID_PSP] && rd->have[ID_EXTRA]) {
        r->msp = rd->value[ID_MSP];
        r->psp = rd->value[ID_PSP];
        r->control = rd->value[ID_EXTRA] >> 24;
        r->have |= SPOOR_HAVE_BANKED_SP;
    }
    if (fpu && rd->have[ID_FPSCR] && all(rd, ID_S0, ID_S0 + 15)) {
        memcpy(r->s, rd->value + ID_S0, 16 * sizeof r->s[0]);
        r->fpscr = rd->value[ID_FPSCR];
        r->have |= SPOOR_HAVE_FP;
        r->flags |= SPOOR_REGS_FP_VALID;
        if (all(rd, ID_S0 + 16, ID_S0 + 31)) {
            memcpy(r->s + 16, rd->value + ID_S0 + 16, 16 * sizeof r->s[0]);
            r->have |= SPOOR_HAVE_FP_HIGH;
        }
    }
    rd->d->has_registers = true;
    return true;
}

static bool range_bound(const msgpack_object *o, uint64_t *out)
{
    if (!o || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return false;
    *out = o->via.u64;
    return true;
}

/* Range<u64>: {"start": a, "end": b} (write_named), or [a, b] (a compact writer). */
static bool read_range(const msgpack_object *o, size_t n, uint64_t *start, uint64_t *end)
{
    bool ok = false;
    if (o->type == MSGPACK_OBJECT_MAP)
        ok = range_bound(field(o, "start"), start) && range_bound(field(o, "end"), end);
    else if (o->type == MSGPACK_OBJECT_ARRAY && o->via.array.size == 2)
        ok = range_bound(&o->via.array.ptr[0], start) && range_bound(&o->via.array.ptr[1], end);
    if (!ok)
        return fail(SPOOR_ERR_FORMAT, "memory range %zu: not {\"start\": n, \"end\": n}", n);
    if (*end < *start || *end > 0x100000000ull)
        return fail(SPOOR_ERR_FORMAT,
                    "memory range %zu: 0x%" PRIx64 "..0x%" PRIx64
                    " is not inside the 4 GiB address space",
                    n, *start, *end);
    return true;
}

static bool read_block(reader *rd, const msgpack_object *b, size_t n, uint64_t start, uint64_t end)
{
    uint64_t want = end - start;
    uint64_t got = b->type == MSGPACK_OBJECT_BIN     ? b->via.bin.size
                   : b->type == MSGPACK_OBJECT_ARRAY ? b->via.array.size
                                                     : UINT64_MAX;
    if (got == UINT64_MAX)
        return fail(SPOOR_ERR_FORMAT, "memory range %zu: the bytes are not an array or bin", n);
    if (got != want)
        return fail(SPOOR_ERR_FORMAT,
                    "memory range %zu: 0x%" PRIx64 "..0x%" PRIx64 " holds %" PRIu64
                    " bytes, not %" PRIu64,
                    n, start, end, got, want);
    if (rd->mem_cap - rd->mem_used < want) /* cannot happen: each byte costs one in the file */
        return fail(SPOOR_ERR_FORMAT, "memory range %zu: more bytes than the file holds", n);
    uint8_t *dst = rd->mem + rd->mem_used;
    if (b->type == MSGPACK_OBJECT_BIN) {
        if (want)
            memcpy(dst, b->via.bin.ptr, (size_t)want);
    } else {
        for (uint64_t i = 0; i < want; i++) {
            const msgpack_object *x = &b->via.array.ptr[i];
            if (x->type != MSGPACK_OBJECT_POSITIVE_INTEGER || x->via.u64 > 0xff)
                return fail(SPOOR_ERR_FORMAT, "memory range %zu: byte %" PRIu64 " is not 0..255", n,
                            i);
            dst[i] = (uint8_t)x->via.u64;
        }
    }
    rd->mem_used += (size_t)want;
    if (!want)
        return true;
    return spoor_foreign_add_region(rd->d, (uint32_t)start, (uint32_t)want, dst);
}

static bool read_memory(reader *rd, const msgpack_object *data)
{
    if (data->type != MSGPACK_OBJECT_ARRAY)
        return fail(SPOOR_ERR_FORMAT, "\"data\" is not an array of memory ranges");
    for (uint32_t i = 0; i < data->via.array.size; i++) {
        const msgpack_object *e = &data->via.array.ptr[i];
        if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2)
            return fail(SPOOR_ERR_FORMAT, "memory range %u: not a [range, bytes] pair", i);
        uint64_t start = 0, end = 0;
        if (!read_range(&e->via.array.ptr[0], i, &start, &end) ||
            !read_block(rd, &e->via.array.ptr[1], i, start, end))
            return false;
    }
    return true;
}

static bool cortex_m(const msgpack_object *t)
{
    static const char *const names[] = {"armv6m", "armv7m", "armv7em", "armv8m"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (t->via.str.size == strlen(names[i]) &&
            !strncasecmp(t->via.str.ptr, names[i], t->via.str.size))
            return true;
    return false;
}

static bool read_dump(reader *rd, const msgpack_object *root)
{
    if (root->type != MSGPACK_OBJECT_MAP)
        return fail(SPOOR_ERR_FORMAT, "not a MessagePack map of CoreDump's fields");
    const msgpack_object *regs = field(root, "registers"), *data = field(root, "data"),
                         *type = field(root, "core_type"), *fpu = field(root, "fpu_support");
    if (!regs || !data || !type)
        return fail(SPOOR_ERR_FORMAT, "no \"%s\" field",
                    !regs   ? "registers"
                    : !data ? "data"
                            : "core_type");
    if (type->type != MSGPACK_OBJECT_STR)
        return fail(SPOOR_ERR_FORMAT, "\"core_type\" is not a string");
    if (!cortex_m(type))
        return fail(SPOOR_ERR_UNSUPPORTED, "core type %.*s, not a Cortex-M core",
                    (int)(type->via.str.size > 20 ? 20 : type->via.str.size), type->via.str.ptr);
    if (fpu && fpu->type != MSGPACK_OBJECT_BOOLEAN)
        return fail(SPOOR_ERR_FORMAT, "\"fpu_support\" is not a boolean");
    return read_registers(rd, regs) && take_registers(rd, fpu && fpu->via.boolean) &&
           read_memory(rd, data) && spoor_foreign_merge_regions(rd->d);
}

static uint32_t be(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* msgpack-c's C unpacker allocates an array's or map's entries when it reads the container's
 * header, before it knows they are in the data (its C API has no limits, unlike the C++ one's
 * unpack_limit): a 6-byte file declaring 2^32 entries would ask for 128 GiB. So the framing is
 * walked first, without decoding any value: every object still owed needs at least one byte,
 * so no more may be owed than bytes are left. Anything else wrong is msgpack-c's to find. */
static bool counts_fit(const uint8_t *b, size_t len)
{
    uint64_t owed = 1;
    size_t at = 0;
    while (owed && at < len) {
        uint8_t m = b[at];
        uint64_t children = 0, skip = 1;
        if (m >= 0x80 && m <= 0x8f)
            children = 2u * (m & 0x0fu);
        else if (m >= 0x90 && m <= 0x9f)
            children = m & 0x0fu;
        else if (m >= 0xa0 && m <= 0xbf)
            skip = 1u + (m & 0x1fu);
        else if (m >= 0xc4 && m <= 0xc6) /* bin 8/16/32 */
            skip = at + 1 + (1u << (m - 0xc4)) <= len
                       ? 1u + (1u << (m - 0xc4)) + be(b + at + 1, 1u << (m - 0xc4))
                       : len;
        else if (m >= 0xc7 && m <= 0xc9) /* ext 8/16/32: length, type, data */
            skip = at + 1 + (1u << (m - 0xc7)) <= len
                       ? 2u + (1u << (m - 0xc7)) + be(b + at + 1, 1u << (m - 0xc7))
                       : len;
        else if (m == 0xca || m == 0xcb || (m >= 0xcc && m <= 0xd3))
            skip = 1u + (m == 0xca ? 4u : m == 0xcb ? 8u : 1u << ((m - 0xcc) & 3));
        else if (m >= 0xd4 && m <= 0xd8) /* fixext 1/2/4/8/16 */
            skip = 2u + (1u << (m - 0xd4));
        else if (m >= 0xd9 && m <= 0xdb) /* str 8/16/32 */
            skip = at + 1 + (1u << (m - 0xd9)) <= len
                       ? 1u + (1u << (m - 0xd9)) + be(b + at + 1, 1u << (m - 0xd9))
                       : len;
        else if (m >= 0xdc && m <= 0xdf) { /* array 16/32, map 16/32 */
            unsigned n = m & 1 ? 4 : 2;
            if (at + 1 + n > len)
                return true; /* cut in the header: msgpack-c says truncated */
            children = (uint64_t)be(b + at + 1, n) * (m >= 0xde ? 2 : 1);
            skip = 1 + n;
        }
        at = skip > len - at ? len : at + (size_t)skip;
        owed = owed - 1 + children;
        if (owed > len - at)
            return fail(SPOOR_ERR_FORMAT,
                        "truncated or damaged: a MessagePack array or map declares %" PRIu64
                        " more entries than the %zu bytes left can hold",
                        owed, len - at);
    }
    return true;
}

static bool unpack(reader *rd, const uint8_t *bytes, size_t len)
{
    if (!counts_fit(bytes, len))
        return false;
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    bool ok;
    switch (msgpack_unpack_next(&u, (const char *)bytes, len, &off)) {
    case MSGPACK_UNPACK_SUCCESS:
        ok = off == len ? read_dump(rd, &u.data)
                        : fail(SPOOR_ERR_FORMAT, "%zu bytes after the CoreDump map", len - off);
        break;
    case MSGPACK_UNPACK_CONTINUE:
        ok = fail(SPOOR_ERR_TRUNCATED, "truncated: the MessagePack data ends after %zu bytes", len);
        break;
    case MSGPACK_UNPACK_NOMEM_ERROR: ok = fail(SPOOR_ERR_NOMEM, "out of memory"); break;
    default: ok = fail(SPOOR_ERR_FORMAT, "not MessagePack data"); break;
    }
    msgpack_unpacked_destroy(&u);
    return ok;
}

spoor_dump *spoor_probers_dump_parse(const uint8_t *bytes, size_t len)
{
    spoor_dump *d = spoor_foreign_dump_new(bytes, len, "probe-rs");
    if (!d)
        return NULL;
    reader rd = {.d = d, .mem_cap = len};
    d->extra = malloc(sizeof *d->extra);
    rd.mem = malloc(len ? len : 1);
    bool ok = d->extra && rd.mem;
    if (ok) {
        d->extra[d->extra_count++] = rd.mem;
        ok = unpack(&rd, d->data, d->size);
    } else {
        free(rd.mem);
        spoor_set_error(SPOOR_ERR_NOMEM, PR ": out of memory");
    }
    if (!ok) {
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}
