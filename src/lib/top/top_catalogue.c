/* spoor top's live thread catalogue (top/top_catalogue.h): each thread read through the RTOS
 * layer when it is first current, and read again on a running target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/gdb_remote.h"
#include "spoor/memory.h"
#include "spoor/openocd.h"
#include "top/top_catalogue.h"

bool spoor_top_catalogue_init(spoor_top_catalogue *c, const spoor_top_session_config *cfg,
                              spoor_top *stats, spoor_top_notice_fn notice, void *ctx)
{
    memset(c, 0, sizeof *c);
    c->elf = cfg->elf;
    c->rtos = cfg->rtos;
    if (cfg->target) {
        c->mem = cfg->target->mem;
        c->gdb = cfg->target->gdb;
        c->openocd = cfg->target->openocd;
    }
    c->stats = stats;
    c->stack = cfg->stack;
    c->let_run = cfg->live && c->gdb;
    c->idle_pending = c->let_run && c->rtos; /* a target halted at reset has no RAM set up yet */
    c->fills = -1;
    c->notice = notice;
    c->ctx = ctx;
    c->threads = calloc(SPOOR_TOP_MAX_THREADS, sizeof *c->threads);
    if (!c->threads) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    return true;
}

void spoor_top_catalogue_free(spoor_top_catalogue *c)
{
    free(c->threads);
    c->threads = NULL;
}

bool spoor_top_catalogue_lost(spoor_top_catalogue *c)
{
    if (c->lost[0])
        return true;
    const char *why = c->openocd ? spoor_openocd_broken(c->openocd) : NULL;
    if (!why && c->gdb && !spoor_gdb_alive(c->gdb))
        why = spoor_last_error();
    if (!why)
        return false;
    snprintf(c->lost, sizeof c->lost, "%s", why);
    return true;
}

/* A read that failed: said, unless the connection is lost (said once, at the end). */
static void read_failed(spoor_top_catalogue *c, spoor_top_notice notice)
{
    if (!spoor_top_catalogue_lost(c) && c->notice)
        c->notice(c->ctx, notice, spoor_last_error());
}

void spoor_top_catalogue_let_run(spoor_top_catalogue *c)
{
    if (c->let_run && !spoor_gdb_continue(c->gdb))
        read_failed(c, SPOOR_TOP_NOTICE_TARGET_READ);
}

void spoor_top_catalogue_read_idle(spoor_top_catalogue *c)
{
    uint32_t idle;
    if (!c->mem) /* no idle thread without memory */
        return;
    if (spoor_rtos_read_idle(c->rtos, spoor_mem_reader, c->mem, &idle)) {
        spoor_top_set_idle(c->stats, idle);
        return;
    }
    if (spoor_top_catalogue_lost(c))
        return;
    c->idle_unknown = true;
    if (c->notice)
        c->notice(c->ctx, SPOOR_TOP_NOTICE_IDLE_UNKNOWN, spoor_last_error());
}

/* Backtraces tried per thread for its entry function: a thread is read when it is switched in,
 * so on a live target it runs then, and its saved context is stale until it is switched out. */
#define ENTRY_TRIES 3

/* Whether the thread of tcb runs now (the RTOS's current-thread pointer names it): 1 it does,
 * 0 it does not, -1 the pointer cannot be read. A read through the memory view's page cache. */
static int runs_now(spoor_top_catalogue *c, uint32_t tcb)
{
    uint32_t current;
    if (!spoor_rtos_read_current(c->rtos, spoor_mem_reader, c->mem, &current))
        return -1;
    return current == tcb;
}

/* The entry function of thread t: the TCB's, or its initial stack frame's, else (a FreeRTOS
 * task whose initial frame is overwritten) the outermost frame of its backtrace: from its saved
 * context when it is not running, from the CPU's registers (a GDB server) when it is. NULL when
 * none is found (yet). */
static const char *entry_function(spoor_top_catalogue *c, spoor_top_thread_info *info,
                                  const spoor_rtos_thread *t)
{
    const char *func = NULL;
    uint32_t entry = t->entry;
    bool known = t->has_entry;
    int runs = known || info->entry_tries >= ENTRY_TRIES ? -1 : runs_now(c, t->tcb);
    if (runs >= 0) {
        spoor_regs cpu;
        bool running = runs == 1;
        if (!running || c->gdb) { /* else: tried when it has been switched out */
            info->entry_tries++;
            known = (!running || spoor_gdb_read_registers(c->gdb, &cpu, NULL, 0)) &&
                    spoor_rtos_entry_from_backtrace(c->rtos, spoor_mem_reader, c->mem, t,
                                                    running ? &cpu : NULL, &entry);
        }
    }
    if (known)
        spoor_elf_function(c->elf, entry, &func, NULL, NULL);
    return func;
}

/* The stack of thread t, its SP the saved one (unknown for the running thread). */
static void read_stack(spoor_top_catalogue *c, spoor_top_thread_info *info,
                       const spoor_rtos_thread *t)
{
    if (!c->stack)
        return;
    if (c->fills < 0)
        c->fills = spoor_stack_usage_rtos_fills(c->rtos, spoor_mem_reader, c->mem);
    bool running = runs_now(c, t->tcb) != 0; /* unknown: its saved SP may be stale */
    spoor_stack_usage_thread(c->rtos, spoor_mem_reader, c->mem, t, t->has_sp && !running, t->sp,
                             c->fills == 1, &info->stack);
    info->has_stack = true;
}

static void take_priority(spoor_top_catalogue *c, spoor_top_thread_info *info,
                          const spoor_rtos_thread *t)
{
    info->has_prio = t->has_prio;
    info->prio = t->prio;
    info->prio_name = t->has_prio ? spoor_rtos_priority_name(c->rtos, t->prio) : NULL;
}

static void describe(spoor_top_catalogue *c, spoor_top_thread_info *info, uint32_t tcb)
{
    memset(info, 0, sizeof *info);
    info->tcb = tcb;
    if (!tcb) {
        snprintf(info->name, sizeof info->name, "(no thread)");
        return;
    }
    if (!c->rtos) /* no RTOS known: a thread is its TCB address */
        return;
    if (!c->mem) { /* no target memory */
        snprintf(info->name, sizeof info->name, "?");
        return;
    }
    if (c->gdb || c->openocd) /* a running target: what was read before may have changed */
        spoor_mem_invalidate(c->mem);
    if (c->idle_pending)
        spoor_top_catalogue_read_idle(c);
    c->idle_pending = false;
    spoor_rtos_thread_ref ref;
    if (!spoor_rtos_listed(c->rtos, spoor_mem_reader, c->mem, tcb, &ref)) {
        /* on none of the RTOS's lists: its bytes are no thread's (Zephyr's start-up dummy
         * thread on the interrupt stack, a deleted TCB) */
        spoor_top_catalogue_let_run(c);
        snprintf(info->name, sizeof info->name, "(start-up)");
        info->unlisted = true;
        return;
    }
    spoor_rtos_thread t;
    bool ok = spoor_rtos_read_thread(c->rtos, spoor_mem_reader, c->mem, tcb, &t);
    if (!ok)
        read_failed(c, SPOOR_TOP_NOTICE_TARGET_READ);
    if (ok) {
        info->func = entry_function(c, info, &t);
        read_stack(c, info, &t);
        spoor_rtos_state_of(c->rtos, spoor_mem_reader, c->mem, &ref, &t, &info->state);
    }
    spoor_top_catalogue_let_run(c);
    if (!ok) {
        snprintf(info->name, sizeof info->name, "?");
        return;
    }
    info->read_ok = true;
    snprintf(info->name, sizeof info->name, "%s", t.name);
    take_priority(c, info, &t);
}

static spoor_top_thread_info *find_thread(spoor_top_catalogue *c, uint32_t tcb)
{
    for (size_t i = c->nthreads; i-- > 0;)
        if (c->threads[i].tcb == tcb)
            return &c->threads[i];
    return NULL;
}

const spoor_top_thread_info *spoor_top_catalogue_thread(spoor_top_catalogue *c, uint32_t tcb)
{
    spoor_top_thread_info *info = find_thread(c, tcb);
    if (info)
        return info;
    if (c->nthreads < SPOOR_TOP_MAX_THREADS) {
        info = &c->threads[c->nthreads++];
        describe(c, info, tcb);
        return info;
    }
    describe(c, &c->unknown, tcb);
    return &c->unknown;
}

/* A thread that ran, its TCB read again: a TCB freed and taken by a new thread (the same
 * address) shows a new name, and gets its entry function anew; an entry no longer found (a
 * FreeRTOS task's initial frame overwritten) keeps the one known, and one not known yet is
 * looked for again (the thread may not be running now); the stack's use is read again. */
static void revalidate(spoor_top_catalogue *c, spoor_top_thread_info *info,
                       const spoor_rtos_thread_ref *ref)
{
    spoor_rtos_thread t;
    if (!spoor_rtos_read_thread(c->rtos, spoor_mem_reader, c->mem, info->tcb, &t))
        return;
    spoor_rtos_state_of(c->rtos, spoor_mem_reader, c->mem, ref, &t, &info->state);
    if (strcmp(t.name, info->name) != 0) { /* another thread: nothing of the old one holds */
        snprintf(info->name, sizeof info->name, "%s", t.name);
        info->func = NULL;
        info->entry_tries = 0;
    }
    if (t.has_entry || !info->func) {
        const char *func = entry_function(c, info, &t);
        if (func)
            info->func = func;
    }
    read_stack(c, info, &t);
    take_priority(c, info, &t);
}

/* A thread that did not run in the interval: only its state (it may have woken, blocked on
 * something else through a timeout, or been suspended) and its priority (inherited) read again;
 * its stack and entry function are what they were. */
static void restate(spoor_top_catalogue *c, spoor_top_thread_info *info,
                    const spoor_rtos_thread_ref *ref)
{
    spoor_rtos_thread t;
    if (!spoor_rtos_read_thread(c->rtos, spoor_mem_reader, c->mem, info->tcb, &t) ||
        strcmp(t.name, info->name) != 0) /* a TCB reused: re-read in full once it runs */
        return;
    spoor_rtos_state_of(c->rtos, spoor_mem_reader, c->mem, ref, &t, &info->state);
    take_priority(c, info, &t);
}

/* Priorities and states change (inheritance, ceilings, the application, every wait), and a TCB
 * may be reused by a new thread: re-read, on a live target, the TCBs of the threads that ran in
 * the interval, and the states and priorities of the others. The memory cache is dropped once:
 * each TCB's page is one read, the lists (not RTX5's) are walked once, a FreeRTOS task blocked on
 * a queue adds the queue's. */
void spoor_top_catalogue_refresh(spoor_top_catalogue *c, const spoor_top_report *r)
{
    if (!c->gdb && !c->openocd)
        return;
    spoor_mem_invalidate(c->mem);
    spoor_rtos_walk walk = {.lists_cut = 1};
    bool lists = c->rtos && spoor_rtos_state_needs_lists(c->rtos);
    size_t n = lists ? spoor_rtos_threads(c->rtos, spoor_mem_reader, c->mem, c->refs,
                                          SPOOR_TOP_CATALOGUE_REFS, &walk)
                     : 0;
    for (size_t i = 0; i < r->nthreads; i++) {
        spoor_top_thread_info *info = find_thread(c, r->threads[i].tcb);
        spoor_rtos_thread_ref ref = {r->threads[i].tcb, SPOOR_THREAD_READY, NULL};
        if (!c->rtos || !info || !info->read_ok ||
            (lists && !spoor_rtos_find(c->rtos, c->refs, n, &walk, info->tcb, &ref)))
            continue;
        if (r->threads[i].cycles)
            revalidate(c, info, &ref);
        else
            restate(c, info, &ref);
    }
    spoor_top_catalogue_lost(c);
    spoor_top_catalogue_let_run(c);
}
