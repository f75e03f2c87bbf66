/* Small readers of the RTOS layer (rtos_internal.h): expressions over the ELF's symbols and
 * DWARF, integers, words and strings of target memory. */
#include <stdio.h>
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"

#define MAX_EXPR 128

/* The next alternative of an '|'-separated list into buf; NULL at the end. */
const char *spoor_rtos_next_alternative(const char *list, char *buf, size_t cap)
{
    if (!list || !*list)
        return NULL;
    size_t n = strcspn(list, "|");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, list, n);
    buf[n] = '\0';
    return list[n] ? list + n + 1 : list + n;
}

/* SYMBOL.path: the address the expression names and the field there. */
static bool eval_one(const spoor_elf *elf, const char *expr, uint32_t *addr, rtos_field *field)
{
    char sym[MAX_EXPR];
    size_t n = strcspn(expr, ".[");
    if (n == 0 || n >= sizeof sym)
        return false;
    memcpy(sym, expr, n);
    sym[n] = '\0';
    uint32_t base, size;
    Dwarf_Die type;
    if (!spoor_elf_symbol(elf, sym, &base, &size) ||
        !spoor_rtos_dwarf_variable_type(spoor_elf_libdw(elf), sym, &type) ||
        !spoor_rtos_dwarf_field(&type, expr + n, field))
        return false;
    *addr = base + field->offset;
    return true;
}

bool spoor_rtos_eval(const spoor_elf *elf, const char *alternatives, uint32_t *addr,
                     rtos_field *field)
{
    char buf[MAX_EXPR];
    const char *rest = alternatives;
    while ((rest = spoor_rtos_next_alternative(rest, buf, sizeof buf)) != NULL)
        if (eval_one(elf, buf[0] == '&' ? buf + 1 : buf, addr, field))
            return true;
    return false;
}

int64_t spoor_rtos_field_int(const rtos_field *f, const uint8_t *tcb)
{
    uint32_t size = f->size > 4 ? 4 : f->size;
    uint32_t v = 0;
    for (uint32_t i = 0; i < size; i++)
        v |= (uint32_t)tcb[f->offset + i] << (8 * i);
    if (f->is_signed && size < 4 && (v >> (8 * size - 1) & 1))
        return (int64_t)v - ((int64_t)1 << (8 * size));
    return f->is_signed && size == 4 ? (int64_t)(int32_t)v : (int64_t)v;
}

/* A NUL-terminated string at addr, byte by byte: a read never crosses from flash the ELF
 * holds into memory it does not, and a live layer fetches the page once. */
void spoor_rtos_read_string(spoor_read_fn read, void *ctx, uint32_t addr, char *out, size_t cap)
{
    size_t i = 0;
    if (addr)
        for (; i + 1 < cap && read(ctx, addr + (uint32_t)i, &out[i], 1) && out[i]; i++)
            ;
    out[i] = '\0';
}

bool spoor_rtos_read32(spoor_read_fn read, void *ctx, uint32_t addr, uint32_t *v)
{
    uint8_t b[4];
    if (!read(ctx, addr, b, 4))
        return false;
    *v = spoor_le32(b);
    return true;
}

void spoor_rtos_printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7F)
            *s = '?';
}
