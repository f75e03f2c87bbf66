/* DWARF type navigation for the RTOS layer: types and variables by name, member offsets by
 * path, enumerator names. Only the top level of each compile unit is searched: that is where
 * C compilers put file-scope types and variables. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "rtos/rtos_internal.h"
#include "util/number.h"

static bool is_declaration(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    bool flag = false;
    return dwarf_attr(die, DW_AT_declaration, &a) && dwarf_formflag(&a, &flag) == 0 && flag;
}

/* Calls visit on every top-level DIE of every compile unit until it returns true. */
static bool each_top_die(Dwarf *dw, bool (*visit)(Dwarf_Die *die, void *ctx), void *ctx)
{
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, child;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
            do {
                if (visit(&child, ctx))
                    return true;
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        off = next;
    }
    return false;
}

static bool peel(Dwarf_Die *die, Dwarf_Die *out)
{
    return dwarf_peel_type(die, out) == 0;
}

static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute a;
    Dwarf_Die t;
    if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
        return false;
    return peel(&t, out);
}

struct type_query {
    const char *name;
    Dwarf_Die *out;
};

static bool visit_type(Dwarf_Die *die, void *ctx)
{
    struct type_query *q = ctx;
    int tag = dwarf_tag(die);
    if (tag != DW_TAG_typedef && tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
        return false;
    const char *name = dwarf_diename(die);
    if (!name || strcmp(name, q->name) != 0)
        return false;
    Dwarf_Die t;
    if (!peel(die, &t) || is_declaration(&t))
        return false;
    int ttag = dwarf_tag(&t);
    if (ttag != DW_TAG_structure_type && ttag != DW_TAG_union_type)
        return false;
    *q->out = t;
    return true;
}

bool spoor_rtos_dwarf_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
    struct type_query q = {name, out};
    return each_top_die(dw, visit_type, &q);
}

static bool visit_variable(Dwarf_Die *die, void *ctx)
{
    struct type_query *q = ctx;
    if (dwarf_tag(die) != DW_TAG_variable)
        return false;
    const char *name = dwarf_diename(die);
    if (!name || strcmp(name, q->name) != 0)
        return false;
    return type_of(die, q->out);
}

bool spoor_rtos_dwarf_variable_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
    struct type_query q = {name, out};
    return each_top_die(dw, visit_variable, &q);
}

uint32_t spoor_rtos_dwarf_size(Dwarf_Die *type)
{
    Dwarf_Word size;
    if (dwarf_aggregate_size(type, &size) != 0 || size > UINT32_MAX)
        return 0;
    return (uint32_t)size;
}

static bool member_offset(Dwarf_Die *member, uint32_t *offset)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    if (!dwarf_attr(member, DW_AT_data_member_location, &a)) {
        *offset = 0; /* a union member */
        return true;
    }
    if (dwarf_formudata(&a, &v) == 0) {
        *offset = (uint32_t)v;
        return true;
    }
    Dwarf_Op *ops; /* DWARF 2: DW_OP_plus_uconst N */
    size_t n;
    if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
        *offset = (uint32_t)ops[0].number;
        return true;
    }
    return false;
}

/* The member named name of the struct or union type (searching anonymous members). */
static bool find_member(Dwarf_Die *type, const char *name, size_t len, uint32_t *offset,
                        Dwarf_Die *mtype)
{
    Dwarf_Die child;
    if (dwarf_child(type, &child) != 0)
        return false;
    do {
        if (dwarf_tag(&child) != DW_TAG_member)
            continue;
        const char *n = dwarf_diename(&child);
        uint32_t off;
        Dwarf_Die t;
        if (!member_offset(&child, &off) || !type_of(&child, &t))
            continue;
        if (n && strlen(n) == len && !memcmp(n, name, len)) {
            *offset = off;
            *mtype = t;
            return true;
        }
        int tag = dwarf_tag(&t);
        if (!n && (tag == DW_TAG_structure_type || tag == DW_TAG_union_type)) {
            uint32_t inner;
            if (find_member(&t, name, len, &inner, mtype)) {
                *offset = off + inner;
                return true;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

static bool array_element(Dwarf_Die *array, Dwarf_Die *elem)
{
    return type_of(array, elem);
}

static void describe(Dwarf_Die *t, rtos_field *out)
{
    int tag = dwarf_tag(t);
    out->type = *t;
    out->size = spoor_rtos_dwarf_size(t);
    out->is_pointer = tag == DW_TAG_pointer_type;
    out->is_array = tag == DW_TAG_array_type;
    out->is_signed = false;
    if (tag == DW_TAG_pointer_type && out->size == 0)
        out->size = 4;
    Dwarf_Die base = *t;
    if (tag == DW_TAG_enumeration_type && !type_of(t, &base))
        return;
    Dwarf_Attribute a;
    Dwarf_Word enc;
    if (dwarf_tag(&base) == DW_TAG_base_type && dwarf_attr(&base, DW_AT_encoding, &a) &&
        dwarf_formudata(&a, &enc) == 0)
        out->is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
}

bool spoor_rtos_dwarf_field(Dwarf_Die *type, const char *path, rtos_field *out)
{
    memset(out, 0, sizeof *out);
    Dwarf_Die cur = *type;
    uint32_t offset = 0;
    const char *p = path;
    while (*p) {
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '[') {
            size_t n = 0;
            while (p[1 + n] >= '0' && p[1 + n] <= '9')
                n++;
            const char *end = p + 1 + n;
            uint32_t index;
            Dwarf_Die elem;
            if (!spoor_parse_u32(p + 1, n, SPOOR_NUM_AUTO, &index) || *end != ']' ||
                dwarf_tag(&cur) != DW_TAG_array_type || !array_element(&cur, &elem))
                return false;
            uint32_t esize = spoor_rtos_dwarf_size(&elem);
            if (!esize)
                return false;
            offset += index * esize;
            cur = elem;
            p = end + 1;
            continue;
        }
        size_t len = strcspn(p, ".[");
        int tag = dwarf_tag(&cur);
        uint32_t off;
        Dwarf_Die mt;
        if ((tag != DW_TAG_structure_type && tag != DW_TAG_union_type) ||
            !find_member(&cur, p, len, &off, &mt))
            return false;
        offset += off;
        cur = mt;
        p += len;
    }
    describe(&cur, out);
    out->offset = offset;
    out->found = true;
    return true;
}

struct enum_query {
    const char *name;
    rtos_enumerator *out;
    size_t n, cap;
};

static bool visit_enum(Dwarf_Die *die, void *ctx)
{
    struct enum_query *q = ctx;
    int tag = dwarf_tag(die);
    if (tag != DW_TAG_typedef && tag != DW_TAG_enumeration_type)
        return false;
    const char *name = dwarf_diename(die);
    Dwarf_Die t, child;
    if (!name || strcmp(name, q->name) != 0 || !peel(die, &t) ||
        dwarf_tag(&t) != DW_TAG_enumeration_type || dwarf_child(&t, &child) != 0)
        return false;
    do {
        Dwarf_Attribute a;
        Dwarf_Sword v;
        if (q->n < q->cap && dwarf_tag(&child) == DW_TAG_enumerator &&
            dwarf_attr(&child, DW_AT_const_value, &a) && dwarf_formsdata(&a, &v) == 0) {
            q->out[q->n].value = v;
            q->out[q->n].name = dwarf_diename(&child);
            q->n++;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

size_t spoor_rtos_dwarf_enumerators(Dwarf *dw, const char *enum_name, rtos_enumerator *out,
                                    size_t cap)
{
    struct enum_query q = {enum_name, out, 0, cap};
    each_top_die(dw, visit_enum, &q);
    return q.n;
}

struct addr_query {
    uint32_t addr;
    const char *name;
    const char *type;
    uint32_t offset;
};

/* The address a variable's DW_AT_location gives when it is one DW_OP_addr. */
static bool variable_address(Dwarf_Die *die, uint32_t *addr)
{
    Dwarf_Attribute a;
    Dwarf_Op *ops;
    size_t n;
    if (!dwarf_attr(die, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) != 0 || n != 1 ||
        ops[0].atom != DW_OP_addr || ops[0].number > UINT32_MAX)
        return false;
    *addr = (uint32_t)ops[0].number;
    return true;
}

/* The name of a type as C writes its tag ("k_sem", "TX_SEMAPHORE"), typedefs kept. */
static const char *type_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    Dwarf_Die t;
    if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
        return NULL;
    for (int depth = 0; depth < 8; depth++) {
        int tag = dwarf_tag(&t);
        const char *n = dwarf_diename(&t);
        if (n && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
            return n;
        if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
            return NULL;
    }
    return NULL;
}

static bool visit_address(Dwarf_Die *die, void *ctx)
{
    struct addr_query *q = ctx;
    uint32_t at;
    Dwarf_Die t;
    if (dwarf_tag(die) != DW_TAG_variable || !variable_address(die, &at) || q->addr < at ||
        !type_of(die, &t))
        return false;
    uint32_t size = spoor_rtos_dwarf_size(&t);
    if (q->addr - at >= (size ? size : 1))
        return false;
    q->name = dwarf_diename(die);
    q->type = type_name(die);
    q->offset = q->addr - at;
    return q->name != NULL;
}

bool spoor_rtos_dwarf_variable_at(Dwarf *dw, uint32_t addr, const char **name, const char **type,
                                  uint32_t *offset)
{
    struct addr_query q = {addr, NULL, NULL, 0};
    if (!addr || !each_top_die(dw, visit_address, &q))
        return false;
    *name = q.name;
    if (type)
        *type = q.type;
    *offset = q.offset;
    return true;
}
