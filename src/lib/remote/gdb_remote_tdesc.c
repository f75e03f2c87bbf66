/* GDB target descriptions (GDB manual, "Target Descriptions"): the <reg> and <xi:include>
 * elements of the XML a server sends for qXfer:features:read, in document order, and the
 * register table they make (numbers, sizes, offsets in the 'g' reply). A small scanner, not a
 * general XML parser: comments, processing instructions, DOCTYPE and text are skipped; any
 * unterminated construct is an error. */
#include <string.h>

#include "remote/gdb_remote_internal.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == ':' || c == '.' || c == '-';
}

/* Position just after the first occurrence of end at or after pos; 0 when there is none. */
static size_t skip_past(const char *s, size_t len, size_t pos, const char *end)
{
    size_t n = strlen(end);
    for (; pos + n <= len; pos++)
        if (!memcmp(s + pos, end, n))
            return pos + n;
    return 0;
}

static bool decimal(const char *s, size_t n, unsigned long limit, unsigned long *out)
{
    unsigned long v = 0;
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
        if (v > limit)
            return false;
    }
    *out = v;
    return true;
}

static bool copy_value(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return false;
    memcpy(dst, s, n);
    dst[n] = 0;
    return true;
}

/* One attribute of a <reg> or <xi:include>; false when a value we need is out of range. */
static bool take_attribute(gdb_tdesc_kind kind, const char *an, size_t anlen, const char *v,
                           size_t vlen, gdb_tdesc_item *item, bool *have_name, bool *have_bits)
{
    unsigned long num;
    if (kind == GDB_TDESC_INCLUDE) {
        if (anlen == 4 && !memcmp(an, "href", 4))
            return copy_value(item->href, sizeof item->href, v, vlen) && vlen;
        return true;
    }
    if (anlen == 4 && !memcmp(an, "name", 4)) {
        if (!copy_value(item->name, sizeof item->name, v, vlen))
            item->name[0] = 0; /* too long for any register spoor knows */
        *have_name = vlen != 0;
    } else if (anlen == 7 && !memcmp(an, "bitsize", 7)) {
        if (!decimal(v, vlen, GDB_MAX_REG_BITS, &num) || !num)
            return false;
        item->bitsize = (unsigned)num;
        *have_bits = true;
    } else if (anlen == 6 && !memcmp(an, "regnum", 6)) {
        if (!decimal(v, vlen, GDB_MAX_REGS * 8, &num))
            return false;
        item->regnum = (long)num;
    }
    return true;
}

/* The element starting at s[pos] == '<' (not a comment or declaration). */
static gdb_tdesc_kind element(const char *s, size_t len, size_t *pos, gdb_tdesc_item *item)
{
    size_t p = *pos + 1, start = p;
    while (p < len && is_name_char(s[p]))
        p++;
    if (p == start)
        return GDB_TDESC_ERROR;
    gdb_tdesc_kind kind = GDB_TDESC_END; /* END here: an element we skip */
    if (p - start == 3 && !memcmp(s + start, "reg", 3))
        kind = GDB_TDESC_REG;
    else if (p - start == 10 && !memcmp(s + start, "xi:include", 10))
        kind = GDB_TDESC_INCLUDE;
    memset(item, 0, sizeof *item);
    item->regnum = -1;
    bool have_name = false, have_bits = false;
    for (;;) {
        while (p < len && is_space(s[p]))
            p++;
        if (p >= len)
            return GDB_TDESC_ERROR;
        if (s[p] == '>' || (s[p] == '/' && p + 1 < len && s[p + 1] == '>'))
            break;
        size_t an = p;
        while (p < len && is_name_char(s[p]))
            p++;
        size_t anlen = p - an;
        while (p < len && is_space(s[p]))
            p++;
        if (!anlen || p >= len || s[p] != '=')
            return GDB_TDESC_ERROR;
        p++;
        while (p < len && is_space(s[p]))
            p++;
        if (p >= len || (s[p] != '"' && s[p] != '\''))
            return GDB_TDESC_ERROR;
        const char *close = memchr(s + p + 1, s[p], len - p - 1);
        if (!close)
            return GDB_TDESC_ERROR;
        size_t v = p + 1, vlen = (size_t)(close - (s + v));
        if (kind != GDB_TDESC_END &&
            !take_attribute(kind, s + an, anlen, s + v, vlen, item, &have_name, &have_bits))
            return GDB_TDESC_ERROR;
        p = v + vlen + 1;
    }
    *pos = p + (s[p] == '>' ? 1 : 2);
    if (kind == GDB_TDESC_REG && (!have_name || !have_bits))
        return GDB_TDESC_ERROR;
    if (kind == GDB_TDESC_INCLUDE && !item->href[0])
        return GDB_TDESC_ERROR;
    return kind;
}

gdb_tdesc_kind spoor_gdb_tdesc_next(const char *xml, size_t len, size_t *pos, gdb_tdesc_item *item)
{
    size_t p = *pos;
    while (p < len) {
        const char *lt = memchr(xml + p, '<', len - p);
        if (!lt) {
            *pos = len;
            return GDB_TDESC_END;
        }
        p = (size_t)(lt - xml);
        size_t rest = len - p;
        if (rest >= 4 && !memcmp(lt, "<!--", 4))
            p = skip_past(xml, len, p + 4, "-->");
        else if (rest >= 2 && lt[1] == '?')
            p = skip_past(xml, len, p + 2, "?>");
        else if (rest >= 2 && (lt[1] == '!' || lt[1] == '/'))
            p = skip_past(xml, len, p + 2, ">");
        else {
            gdb_tdesc_kind k = element(xml, len, &p, item);
            if (k != GDB_TDESC_END) {
                *pos = p;
                return k;
            }
            continue;
        }
        if (!p) {
            *pos = len;
            return GDB_TDESC_ERROR;
        }
    }
    *pos = len;
    return GDB_TDESC_END;
}

bool spoor_gdb_tdesc_add(spoor_gdb_reg *regs, size_t *count, size_t cap, const gdb_tdesc_item *item,
                         unsigned *next_regnum)
{
    unsigned num = item->regnum >= 0 ? (unsigned)item->regnum : *next_regnum;
    if (*count >= cap || num >= GDB_MAX_REGS * 8)
        return false;
    for (size_t i = 0; i < *count; i++)
        if (regs[i].regnum == num)
            return false;
    spoor_gdb_reg *r = &regs[(*count)++];
    memset(r, 0, sizeof *r);
    memcpy(r->name, item->name, sizeof r->name);
    r->regnum = num;
    r->bitsize = item->bitsize;
    *next_regnum = num + 1;
    return true;
}

void spoor_gdb_tdesc_layout(spoor_gdb_reg *regs, size_t count)
{
    /* 'g' carries the registers in number order, each in whole bytes. */
    for (size_t i = 0; i < count; i++) {
        unsigned off = 0;
        for (size_t j = 0; j < count; j++)
            if (regs[j].regnum < regs[i].regnum)
                off += (regs[j].bitsize + 7) / 8;
        regs[i].offset = off;
    }
}

long spoor_gdb_parse_tdesc(const char *xml, size_t len, spoor_gdb_reg *regs, size_t count,
                           size_t cap, unsigned *next_regnum)
{
    size_t pos = 0;
    gdb_tdesc_item item;
    for (;;) {
        switch (spoor_gdb_tdesc_next(xml, len, &pos, &item)) {
        case GDB_TDESC_END: spoor_gdb_tdesc_layout(regs, count); return (long)count;
        case GDB_TDESC_ERROR: return -1;
        case GDB_TDESC_INCLUDE: break; /* the caller fetches and feeds it */
        case GDB_TDESC_REG:
            if (!spoor_gdb_tdesc_add(regs, &count, cap, &item, next_regnum))
                return -1;
            break;
        }
    }
}
