/* A crash report as an object (spoor/analysis.h): snapshot, fault, backtrace; threads, the MTB's
 * branches, the call ring and stack use read on first use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/crash_internal.h"
#include "base/set_error.h"
#include "spoor/firmware_check.h"

spoor_crash *spoor_crash_open(const spoor_elf *elf, spoor_snapshot *snap,
                              const spoor_crash_options *options)
{
    static const spoor_crash_options defaults = SPOOR_CRASH_OPTIONS_DEFAULT;
    spoor_crash *c = calloc(1, sizeof *c);
    if (!c || !(c->lazy = calloc(1, sizeof *c->lazy))) {
        free(c);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c->elf = elf;
    c->snap = snap;
    c->dump = snap->dump;
    c->options = options ? *options : defaults;
    if (!spoor_dump_build_id_warning(c->dump, elf, c->build_id_warning, sizeof c->build_id_warning))
        c->build_id_warning[0] = 0;
    spoor_fault_decode(&snap->fault, snap->exception, snap->regs.r[15], &c->fault);
    c->nframes = spoor_unwind(elf, &snap->regs, spoor_mem_reader, snap->mem, NULL, c->frames,
                              SPOOR_CRASH_MAX_FRAMES, &c->stop);
    return c;
}

void spoor_crash_close(spoor_crash *c)
{
    if (!c)
        return;
    spoor_threads_free(c->lazy->threads);
    free(c->lazy->branches.packets);
    spoor_call_trace_free(&c->lazy->calls.trace);
    free(c->lazy);
    free(c);
}

static const char *const fault_registers[8] = {"CFSR", "HFSR", "DFSR", "MMFAR",
                                               "BFAR", "AFSR", "SFSR", "SFAR"};

const char *spoor_crash_fault_register(int i)
{
    return i >= 0 && i < 8 ? fault_registers[i] : NULL;
}

uint32_t spoor_crash_fault_value(const spoor_fault_status *f, int i)
{
    const uint32_t vals[] = {f->cfsr, f->hfsr, f->dfsr, f->mmfar,
                             f->bfar, f->afsr, f->sfsr, f->sfar};
    return i >= 0 && i < 8 ? vals[i] : 0;
}

const char *spoor_crash_task_exit_hook(const spoor_crash *c)
{
    const char *name = NULL;
    if (c->stop != SPOOR_STOP_TASK_ENTRY || c->nframes == 0)
        return NULL;
    uint32_t hook = c->frames[c->nframes - 1].task_exit_hook;
    if (!spoor_elf_function(c->elf, hook, &name, NULL, NULL) || !name)
        return "??";
    return name;
}

/* The main stack's SP at the snapshot: MSP when the input has it, else SP in a handler (which
 * runs on MSP), else SP in thread mode when it lies on the main stack. */
const spoor_stack_usage *spoor_crash_main_stack(spoor_crash *c, const char **no_sp)
{
    spoor_crash_lazy *l = c->lazy;
    if (!l->main_read) {
        const spoor_regs *r = &c->snap->regs;
        spoor_stack_usage *u = &l->main;
        bool banked = (r->have & SPOOR_HAVE_BANKED_SP) != 0;
        bool handler = (r->xpsr & 0x1FFu) != 0;
        uint32_t sp = banked ? r->msp : r->r[13];
        l->main_read = true;
        if (spoor_stack_usage_main(c->elf, spoor_mem_reader, c->snap->mem, true, sp, u)) {
            if (!banked && !handler && (sp < u->low || sp > u->high)) { /* thread code on PSP */
                spoor_stack_usage_main(c->elf, spoor_mem_reader, c->snap->mem, false, 0, u);
                l->main_no_sp = "MSP not in the input";
            }
            if (r->flags & SPOOR_REGS_STACK_OVERFLOW) /* the fault handler saw it (MSPLIM) */
                u->overflowed = u->nearly_full = true;
        }
    }
    if (no_sp)
        *no_sp = l->main_no_sp;
    return &l->main;
}

const spoor_threads *spoor_crash_threads(spoor_crash *c)
{
    spoor_crash_lazy *l = c->lazy;
    if (!l->threads_read) {
        l->threads_read = true;
        l->threads =
            spoor_threads_read(c->elf, c->snap, SPOOR_THREADS_FRAMES | SPOOR_THREADS_STACKS,
                               c->frames, c->nframes, c->stop);
    }
    return l->threads;
}

/* Whether the 16 bytes of the register block are all zero: an MTB never set up. */
static bool blank_block(const uint8_t *regs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (regs[i])
            return false;
    return true;
}

static void read_branches(spoor_crash_mtb *b, spoor_snapshot *snap, const spoor_crash_options *o)
{
    spoor_mtb_trace t;
    memset(&t, 0, sizeof t);
    if (!(snap->dump && snap->dump->has_mtb)) {
        /* no record: the register block in the input's memory, when it was ever set up; one
         * given with --mtb-regs gets its section, with why it cannot be read */
        uint8_t regs[16];
        bool readable = spoor_mem_read(snap->mem, o->mtb_regs, regs, sizeof regs);
        if (!o->mtb_regs_given && (!readable || blank_block(regs, sizeof regs)))
            return;
        if (readable && blank_block(regs, sizeof regs)) {
            b->present = true;
            b->from = "memory";
            snprintf(b->error, sizeof b->error,
                     "%s: the MTB registers at 0x%08x are all zero (the MTB was never set up)",
                     snap->input, o->mtb_regs);
            return;
        }
    }
    bool ok = spoor_mtb_open(snap, o->mtb_regs, NULL, &t, &b->from);
    b->present = true;
    if (ok) {
        b->packets = malloc(sizeof *b->packets * (t.layout.size / 8u ? t.layout.size / 8u : 1));
        if (!b->packets)
            snprintf(b->error, sizeof b->error, "out of memory");
        else if (!spoor_mtb_decode(&t.layout, t.bytes, t.layout.size, b->packets, &b->count))
            snprintf(b->error, sizeof b->error, "%s", spoor_last_error());
        b->wrapped = t.layout.wrapped;
    } else
        snprintf(b->error, sizeof b->error, "%s", spoor_last_error());
    spoor_mtb_trace_free(&t);
}

const spoor_crash_mtb *spoor_crash_branches(spoor_crash *c)
{
    spoor_crash_lazy *l = c->lazy;
    if (!l->branches_read) {
        l->branches_read = true;
        read_branches(&l->branches, c->snap, &c->options);
    }
    return &l->branches;
}

/* Whether the recorder never ran, so that its section would only say so (the Make fragment links
 * it into every firmware): its state in the input was never initialised or, when the input does
 * not hold the state, nothing in the ELF calls spoor_calls_init. A recorder that was initialised,
 * or may have been, keeps its section, with why it cannot be read. */
static bool recorder_never_ran(const spoor_elf *elf, spoor_snapshot *snap, uint32_t state)
{
    uint8_t bytes[SPOOR_CALLS_STATE_SIZE];
    spoor_calls_info info;
    if (spoor_mem_read(snap->mem, state, bytes, sizeof bytes))
        return !spoor_calls_parse_state(bytes, sizeof bytes, &info) &&
               spoor_last_status() == SPOOR_ERR_UNAVAILABLE; /* "not initialised" */
    return !spoor_elf_function_used(elf, "spoor_calls_init");
}

const spoor_crash_ring *spoor_crash_calls(spoor_crash *c)
{
    spoor_crash_lazy *l = c->lazy;
    spoor_crash_ring *k = &l->calls;
    uint32_t addr, size;
    if (l->calls_read)
        return k;
    l->calls_read = true;
    if (!spoor_elf_symbol(c->elf, SPOOR_CALLS_STATE_SYMBOL, &addr, &size) ||
        recorder_never_ran(c->elf, c->snap, addr))
        return k;
    k->present = true;
    if (!spoor_calls_read(c->elf, spoor_mem_reader, c->snap->mem, c->snap->input, &k->info,
                          &k->trace))
        snprintf(k->error, sizeof k->error, "%s", spoor_last_error());
    return k;
}
