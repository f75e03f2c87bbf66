/* spoor crash's stack usage lines and objects (crash_stacks.h). */
#include <stdint.h>

#include "crash_stacks.h"
#include "spoor/stack_usage.h"

/* The main stack's SP at the snapshot: MSP when the input has it, else SP in a handler (which
 * runs on MSP), else SP in thread mode when it lies on the main stack. */
static void main_usage(const spoor_elf *elf, const spoor_snapshot *snap, spoor_stack_usage *u,
                       const char **no_sp)
{
    const spoor_regs *r = &snap->regs;
    bool banked = (r->have & SPOOR_HAVE_BANKED_SP) != 0;
    bool handler = (r->xpsr & 0x1FFu) != 0;
    uint32_t sp = banked ? r->msp : r->r[13];
    *no_sp = NULL;
    if (!spoor_stack_usage_main(elf, spoor_mem_reader, snap->mem, true, sp, u))
        return;
    if (!banked && !handler && (sp < u->low || sp > u->high)) { /* thread code on PSP */
        spoor_stack_usage_main(elf, spoor_mem_reader, snap->mem, false, 0, u);
        *no_sp = "MSP not in the input";
    }
    if (r->flags & SPOOR_REGS_STACK_OVERFLOW) /* the fault handler saw it (MSPLIM, MSTKERR) */
        u->overflowed = u->nearly_full = true;
}

/* A thread's SP: the snapshot's for the running thread (PSP, or SP in thread mode), the saved
 * one for the others. */
static void thread_usage(const spoor_rtos *rt, const spoor_snapshot *snap,
                         const spoor_rtos_thread *t, bool current, bool fills, spoor_stack_usage *u)
{
    const spoor_regs *r = &snap->regs;
    bool has_sp = t->has_sp;
    uint32_t sp = t->sp;
    if (current) {
        has_sp = (r->have & SPOOR_HAVE_BANKED_SP) || (r->xpsr & 0x1FFu) == 0;
        sp = (r->have & SPOOR_HAVE_BANKED_SP) ? r->psp : r->r[13];
    }
    spoor_stack_usage_thread(rt, spoor_mem_reader, snap->mem, t, has_sp, sp, fills, u);
}

static void text_line(outbuf *o, const char *indent, const char *what, const spoor_stack_usage *u,
                      const char *no_sp)
{
    ob_printf(o, "%s%s: ", indent, what);
    if (!u->found) {
        ob_printf(o, "unknown (%s)\n", u->why);
        return;
    }
    if (u->has_high)
        ob_printf(o, "0x%08x-0x%08x, %u bytes", u->low, u->high, u->size);
    else
        ob_printf(o, "from 0x%08x, size unknown", u->low);
    ob_printf(o, " (%s): ", u->from);
    if (u->has_sp && u->has_high)
        ob_printf(o, "%u used (SP 0x%08x)", u->used, u->sp);
    else if (u->has_sp)
        ob_printf(o, "SP 0x%08x", u->sp);
    else
        ob_printf(o, "use unknown (%s)", no_sp ? no_sp : "no SP");
    if (u->filled && u->has_high)
        ob_printf(o, ", peak %u, %u never written", u->peak, u->free_min);
    else if (u->filled)
        ob_printf(o, ", %u never written", u->free_min);
    else if (u->unreadable)
        ob_printf(o, ", peak unknown (memory at 0x%08x not in the input)", u->unreadable_at);
    else
        ob_str(o, ", peak unknown (no fill pattern)");
    if (u->overflowed)
        ob_str(o, "  OVERFLOWED");
    else if (u->overflow_unknown)
        ob_str(o, "  overflow unknown");
    else if (u->nearly_full)
        ob_str(o, "  NEARLY FULL (under 10 % free)");
    ob_char(o, '\n');
}

static void json_opt(json_out *j, const char *key, bool known, uint32_t v)
{
    if (known)
        json_uint(j, key, v);
    else
        json_null(j, key);
}

void stack_usage_json(json_out *j, const char *key, const spoor_stack_usage *u)
{
    if (!u->found) {
        json_null(j, key);
        return;
    }
    json_object_begin(j, key);
    json_hex32(j, "low", u->low);
    if (u->has_high)
        json_hex32(j, "high", u->high);
    else
        json_null(j, "high");
    json_opt(j, "size", u->has_high, u->size);
    json_opt(j, "used", u->has_sp && u->has_high, u->used);
    json_opt(j, "peak", u->filled && u->has_high, u->peak);
    json_opt(j, "free_min", u->filled, u->free_min);
    if (u->overflow_unknown)
        json_null(j, "overflowed");
    else
        json_bool(j, "overflowed", u->overflowed);
    json_bool(j, "nearly_full", u->nearly_full);
    json_string(j, "from", u->from);
    if (u->unreadable)
        json_hex32(j, "unreadable", u->unreadable_at);
    else
        json_null(j, "unreadable");
    json_object_end(j);
}

void crash_stacks_main_text(outbuf *o, const spoor_elf *elf, const spoor_snapshot *snap)
{
    spoor_stack_usage u;
    const char *no_sp;
    main_usage(elf, snap, &u, &no_sp);
    ob_char(o, '\n');
    text_line(o, "", "main stack", &u, no_sp);
}

void crash_stacks_main_json(json_out *j, const spoor_elf *elf, const spoor_snapshot *snap)
{
    spoor_stack_usage u;
    const char *no_sp;
    main_usage(elf, snap, &u, &no_sp);
    stack_usage_json(j, "main_stack", &u);
}

void crash_stacks_thread_text(outbuf *o, const spoor_rtos *r, const spoor_snapshot *snap,
                              const spoor_rtos_thread *t, bool current, bool fills)
{
    spoor_stack_usage u;
    thread_usage(r, snap, t, current, fills, &u);
    text_line(o, "    ", "stack", &u, NULL);
}

void crash_stacks_thread_json(json_out *j, const spoor_rtos *r, const spoor_snapshot *snap,
                              const spoor_rtos_thread *t, bool current, bool fills)
{
    spoor_stack_usage u;
    thread_usage(r, snap, t, current, fills, &u);
    stack_usage_json(j, "stack", &u);
}
