/* The RTOS layer (spoor/rtos.h): picks the RTOS by its symbols, resolves its members in the
 * DWARF types, reads TCBs through a memory reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/byteorder.h"
#include "base/set_error.h"
#include "elf/elf_sections.h"
#include "rtos/rtos_internal.h"

#define MAX_TCB 4096u
#define MAX_EXPR 128

const char *spoor_rtos_kind_name(spoor_rtos_kind kind)
{
    return (unsigned)kind < SPOOR_RTOS_KIND_COUNT ? spoor_rtos_descs[kind].name : NULL;
}

const char *spoor_rtos_display_name(spoor_rtos_kind kind)
{
    return (unsigned)kind < SPOOR_RTOS_KIND_COUNT ? spoor_rtos_descs[kind].display : NULL;
}

/* Whether the ELF has the symbol the expression list starts with. */
static bool has_symbol(const spoor_elf *elf, const char *alternatives)
{
    char buf[MAX_EXPR];
    const char *rest = alternatives;
    while ((rest = spoor_rtos_next_alternative(rest, buf, sizeof buf)) != NULL) {
        buf[strcspn(buf, ".[")] = '\0';
        uint32_t a, s;
        if (spoor_elf_symbol(elf, buf, &a, &s))
            return true;
    }
    return false;
}

static bool find_tcb_type(const spoor_rtos *r, Dwarf_Die *type)
{
    char buf[MAX_EXPR];
    const char *rest = r->d->tcb_type;
    while ((rest = spoor_rtos_next_alternative(rest, buf, sizeof buf)) != NULL)
        if (spoor_rtos_dwarf_type(spoor_elf_libdw(r->elf), buf, type))
            return true;
    return false;
}

/* A member of the TCB by its alternatives; not found leaves field->found false. */
static void resolve_member(Dwarf_Die *tcb, const char *alternatives, rtos_field *field)
{
    char buf[MAX_EXPR];
    const char *rest = alternatives;
    memset(field, 0, sizeof *field);
    while ((rest = spoor_rtos_next_alternative(rest, buf, sizeof buf)) != NULL)
        if (spoor_rtos_dwarf_field(tcb, buf, field))
            return;
}

/* The first of the alternatives the ELF has, for messages ("pxCurrentTCB", not the list). */
static void present_alternative(const spoor_elf *elf, const char *alternatives, char *out,
                                size_t cap)
{
    char buf[MAX_EXPR];
    const char *rest = alternatives;
    uint32_t addr;
    rtos_field field;
    while ((rest = spoor_rtos_next_alternative(rest, buf, sizeof buf)) != NULL)
        if (spoor_rtos_eval(elf, buf, &addr, &field)) {
            snprintf(out, cap, "%s", buf);
            return;
        }
    snprintf(out, cap, "%s", alternatives);
}

static const rtos_desc *pick(const spoor_elf *elf, const char *kind)
{
    bool automatic = !kind || !strcmp(kind, "auto");
    for (int k = 0; k < SPOOR_RTOS_KIND_COUNT; k++) {
        const rtos_desc *d = &spoor_rtos_descs[k];
        /* "rtxv5": orbtop-rtos's spelling of rtx5 */
        if (automatic
                ? has_symbol(elf, d->current)
                : !strcmp(kind, d->name) || (!strcmp(kind, "rtxv5") && !strcmp(d->name, "rtx5")))
            return d;
    }
    if (automatic)
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "%s: no RTOS found (none of pxCurrentTCB, osRtxInfo, _kernel, "
                        "_tx_thread_current_ptr, sched_current)",
                        spoor_elf_path(elf));
    else
        spoor_set_error(SPOOR_ERR_ARGUMENT,
                        "-T %s: unknown RTOS (known: auto, freertos, rtx5, zephyr, threadx, "
                        "sched)",
                        kind);
    return NULL;
}

bool spoor_rtos_detect(const spoor_elf *elf, spoor_rtos_kind *kind)
{
    for (int k = 0; k < SPOOR_RTOS_KIND_COUNT; k++)
        if (has_symbol(elf, spoor_rtos_descs[k].current)) {
            *kind = (spoor_rtos_kind)k;
            return true;
        }
    return false;
}

spoor_rtos *spoor_rtos_open(const spoor_elf *elf, const char *kind)
{
    const rtos_desc *d = pick(elf, kind);
    if (!d)
        return NULL;
    if (!spoor_elf_libdw(elf)) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "%s: no DWARF: the %s layer reads its types (build with -g)",
                        spoor_elf_path(elf), d->display);
        return NULL;
    }
    spoor_rtos *r = calloc(1, sizeof *r);
    if (!r) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    r->d = d;
    r->elf = elf;
    rtos_field cur;
    if (!spoor_rtos_eval(elf, d->current, &r->current_addr, &cur) || !cur.is_pointer) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "%s: %s: no current-thread pointer %s in the symbols and DWARF",
                        spoor_elf_path(elf), d->display, d->current);
        free(r);
        return NULL;
    }
    present_alternative(elf, d->current, r->current_name, sizeof r->current_name);
    Dwarf_Die tcb;
    if (!find_tcb_type(r, &tcb) || (r->tcb_size = spoor_rtos_dwarf_size(&tcb)) == 0) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: no DWARF type %s (build with -g)",
                        spoor_elf_path(elf), d->tcb_type);
        free(r);
        return NULL;
    }
    if (r->tcb_size > MAX_TCB) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: %s is %u bytes, more than %u",
                        spoor_elf_path(elf), d->tcb_type, r->tcb_size, MAX_TCB);
        free(r);
        return NULL;
    }
    r->tcb_type = tcb;
    resolve_member(&tcb, d->name_member, &r->name);
    resolve_member(&tcb, d->prio_member, &r->prio);
    resolve_member(&tcb, d->entry_member, &r->entry);
    resolve_member(&tcb, d->sp_member, &r->sp);
    resolve_member(&tcb, d->stack_end_member, &r->stack_end);
    resolve_member(&tcb, d->id_member, &r->id);
    resolve_member(&tcb, d->state_member, &r->state);
    resolve_member(&tcb, d->wait_member, &r->wait);
    resolve_member(&tcb, d->timeout_member, &r->timeout);
    if (!r->name.found && !r->prio.found && !r->entry.found) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: %s has none of the members %s, %s, %s",
                        spoor_elf_path(elf), d->tcb_type, d->name_member, d->prio_member,
                        d->entry_member ? d->entry_member : d->stack_end_member);
        free(r);
        return NULL;
    }
    if (d->idle) {
        rtos_field idle;
        r->idle_is_object = d->idle[0] == '&';
        r->has_idle = spoor_rtos_eval(elf, d->idle, &r->idle_addr, &idle) &&
                      (r->idle_is_object || idle.is_pointer);
    }
    spoor_rtos_state_setup(r);
    if (d->prio_enum)
        r->nprios = spoor_rtos_dwarf_enumerators(spoor_elf_libdw(elf), d->prio_enum, r->prios,
                                                 MAX_PRIORITY_NAMES);
    return r;
}

void spoor_rtos_close(spoor_rtos *r)
{
    free(r);
}

spoor_rtos_kind spoor_rtos_kind_of(const spoor_rtos *r)
{
    return r->d->kind;
}

uint32_t spoor_rtos_current_address(const spoor_rtos *r)
{
    return r->current_addr;
}

uint32_t spoor_rtos_tcb_size(const spoor_rtos *r)
{
    return r->tcb_size;
}

/* An integer member of the TCB bytes, sign-extended when its type is signed. */
/* The entry function from the initial exception frame the port built below the top of the
 * stack (xPSR with the Thumb bit, then PC, then LR, going down), while it is still there. */
static bool entry_from_stack(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t end,
                             uint32_t *entry)
{
    uint8_t w[12];
    if (end < 12 || !read(ctx, end - 12, w, sizeof w))
        return false;
    uint32_t pc = spoor_le32(w + 4), xpsr = spoor_le32(w + 8);
    if (!(xpsr & 0x01000000u) || (xpsr & 0x1FFu) || !spoor_elf_is_code(r->elf, pc & ~1u))
        return false;
    *entry = pc & ~1u;
    return true;
}

bool spoor_rtos_read_thread(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                            spoor_rtos_thread *out)
{
    memset(out, 0, sizeof *out);
    out->tcb = tcb;
    if (!tcb) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "TCB 0: no thread");
        return false;
    }
    uint8_t *b = malloc(r->tcb_size);
    if (!b) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    spoor_set_error(SPOOR_OK, "%s", ""); /* cleared: a reader that fails may say why */
    if (!read(ctx, tcb, b, r->tcb_size)) {
        char why[200];
        snprintf(why, sizeof why, "%s", spoor_last_error());
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "TCB 0x%08x: memory not available%s%s%s", tcb,
                        why[0] ? " (" : "", why, why[0] ? ")" : "");
        free(b);
        return false;
    }
    if (r->id.found && (uint32_t)spoor_rtos_field_int(&r->id, b) != r->d->id_value) {
        spoor_set_error(SPOOR_ERR_FORMAT, "TCB 0x%08x: not a %s thread (id 0x%02x)", tcb,
                        r->d->display, (unsigned)spoor_rtos_field_int(&r->id, b));
        free(b);
        return false;
    }
    if (r->name.found && r->name.is_array) {
        size_t n = r->name.size < sizeof out->name ? r->name.size : sizeof out->name - 1;
        memcpy(out->name, b + r->name.offset, n);
        out->name[n] = '\0';
    } else if (r->name.found && r->name.is_pointer) {
        spoor_rtos_read_string(read, ctx, spoor_le32(b + r->name.offset), out->name,
                               sizeof out->name);
    }
    spoor_rtos_printable(out->name);
    if (r->prio.found) {
        out->has_prio = true;
        out->prio = (int32_t)spoor_rtos_field_int(&r->prio, b);
    }
    if (r->state.found) {
        out->has_state_word = true;
        out->state_word = (uint32_t)spoor_rtos_field_int(&r->state, b);
    }
    if (r->wait.found && r->wait.size == 4) {
        out->has_wait_word = true;
        out->wait_word = spoor_le32(b + r->wait.offset);
    }
    if (r->timeout.found && r->timeout.size == 4) {
        out->has_timeout_link = true;
        out->timeout_link = spoor_le32(b + r->timeout.offset);
    }
    if (r->sp.found) {
        out->has_sp = true;
        out->sp = spoor_le32(b + r->sp.offset);
    }
    if (r->entry.found) {
        uint32_t e = spoor_le32(b + r->entry.offset) & ~1u;
        if (e) {
            out->has_entry = true;
            out->entry = e;
            out->entry_from = "tcb";
        }
    } else if (r->stack_end.found &&
               entry_from_stack(r, read, ctx, spoor_le32(b + r->stack_end.offset), &out->entry)) {
        out->has_entry = true;
        out->entry_from = "stack";
    }
    free(b);
    return true;
}

bool spoor_rtos_read_priority(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t tcb,
                              int32_t *prio)
{
    if (!r->prio.found || !tcb)
        return false;
    uint8_t b[4] = {0};
    uint32_t size = r->prio.size > 4 ? 4 : r->prio.size;
    if (!read(ctx, tcb + r->prio.offset, b, size))
        return false;
    rtos_field f = r->prio;
    f.offset = 0;
    *prio = (int32_t)spoor_rtos_field_int(&f, b);
    return true;
}

const char *spoor_rtos_priority_name(const spoor_rtos *r, int32_t prio)
{
    for (size_t i = 0; i < r->nprios; i++)
        if (r->prios[i].value == prio)
            return r->prios[i].name;
    return NULL;
}

bool spoor_rtos_read_idle(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t *tcb)
{
    if (r->d->kind == SPOOR_RTOS_THREADX) {
        *tcb = 0;
        return true;
    }
    if (!r->has_idle) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "ELF: no idle thread found (%s)", r->d->idle);
        return false;
    }
    if (r->idle_is_object) {
        *tcb = r->idle_addr;
        return true;
    }
    uint8_t b[4];
    if (!read(ctx, r->idle_addr, b, 4)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "idle thread pointer %s at 0x%08x: memory not "
                        "available",
                        r->d->idle, r->idle_addr);
        return false;
    }
    *tcb = spoor_le32(b);
    return true;
}

bool spoor_rtos_read_current(const spoor_rtos *r, spoor_read_fn read, void *ctx, uint32_t *tcb)
{
    uint8_t b[4];
    if (!read(ctx, r->current_addr, b, 4))
        return false;
    *tcb = spoor_le32(b);
    return true;
}
