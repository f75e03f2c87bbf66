/* spoor top's side of the target (top_cli.h): target memory (a live target, a dump, images,
 * the ELF), the threads as the RTOS layer reads them from it, and the ITM/DWT set-up
 * (--setup) through the live target. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/dump_formats.h"
#include "spoor/dwt_setup.h"
#include "spoor/itm_watch.h"
#include "top_cli.h"

/* true when the OpenOCD or GDB connection has failed (closed, timed out, garbled): spoor top
 * stops and says why once (c->lost), instead of a warning per thread. */
bool top_connection_lost(struct top_cli *c)
{
    if (c->lost[0])
        return true;
    const char *why = c->openocd ? spoor_openocd_broken(c->openocd) : NULL;
    if (!why && c->gdb && !spoor_gdb_alive(c->gdb))
        why = spoor_last_error();
    if (!why)
        return false;
    snprintf(c->lost, sizeof c->lost, "%s", why);
    c->stop = true;
    return true;
}

/* ---- threads ------------------------------------------------------------------------------- */

/* A live stream with --gdb: the target runs between batches of reads (each read halts it). */
void top_let_run(struct top_cli *c)
{
    if (c->live && !spoor_gdb_continue(c->gdb) && !top_connection_lost(c))
        cli_warn("top", "%s", spoor_last_error());
}

void top_read_idle(struct top_cli *c)
{
    uint32_t idle;
    if (c->no_memory) /* no idle thread without memory: top_explain_no_memory says so */
        return;
    if (spoor_rtos_read_idle(c->rtos, spoor_mem_reader, c->mem, &idle)) {
        spoor_top_set_idle(c->stats, idle);
        return;
    }
    if (top_connection_lost(c))
        return;
    c->view.idle_unknown = true;
    cli_warn("top", "%s: the idle thread's time counts as busy", spoor_last_error());
}

/* Backtraces tried per thread for its entry function: a thread is read when it is switched in,
 * so on a live target it runs then, and its saved context is stale until it is switched out. */
#define ENTRY_TRIES 3

/* Whether the thread of tcb runs now (the RTOS's current-thread pointer names it): 1 it does,
 * 0 it does not, -1 the pointer cannot be read. A read through the memory view's page cache. */
static int runs_now(struct top_cli *c, uint32_t tcb)
{
    uint32_t current;
    if (!spoor_rtos_read_current(c->rtos, spoor_mem_reader, c->mem, &current))
        return -1;
    return current == tcb;
}

/* The entry function of thread t: the TCB's, or its initial stack frame's, else (a FreeRTOS
 * task whose initial frame is overwritten) the outermost frame of its backtrace: from its saved
 * context when it is not running, from the CPU's registers (--gdb) when it is. NULL when none
 * is found (yet). */
static const char *entry_function(struct top_cli *c, top_thread_info *info,
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

/* --stack: the stack of thread t, its SP the saved one (unknown for the running thread). */
static void read_stack(struct top_cli *c, top_thread_info *info, const spoor_rtos_thread *t)
{
    if (!c->view.stack)
        return;
    if (c->fills < 0)
        c->fills = spoor_stack_usage_rtos_fills(c->rtos, spoor_mem_reader, c->mem);
    bool running = runs_now(c, t->tcb) != 0; /* unknown: its saved SP may be stale */
    spoor_stack_usage_thread(c->rtos, spoor_mem_reader, c->mem, t, t->has_sp && !running, t->sp,
                             c->fills == 1, &info->stack);
    info->has_stack = true;
}

static void take_priority(struct top_cli *c, top_thread_info *info, const spoor_rtos_thread *t)
{
    info->has_prio = t->has_prio;
    info->prio = t->prio;
    info->prio_name = t->has_prio ? spoor_rtos_priority_name(c->rtos, t->prio) : NULL;
}

static void describe(struct top_cli *c, top_thread_info *info, uint32_t tcb)
{
    memset(info, 0, sizeof *info);
    info->tcb = tcb;
    if (!tcb) {
        snprintf(info->name, sizeof info->name, "(no thread)");
        return;
    }
    if (!c->rtos) /* no RTOS known: a thread is its TCB address */
        return;
    if (c->no_memory) { /* said once at the start (top_explain_no_memory) */
        snprintf(info->name, sizeof info->name, "?");
        return;
    }
    if (c->gdb || c->openocd) /* a running target: what was read before may have changed */
        spoor_mem_invalidate(c->mem);
    if (c->idle_pending)
        top_read_idle(c);
    c->idle_pending = false;
    spoor_rtos_thread_ref ref;
    if (!spoor_rtos_listed(c->rtos, spoor_mem_reader, c->mem, tcb, &ref)) {
        /* on none of the RTOS's lists: its bytes are no thread's (Zephyr's start-up dummy
         * thread on the interrupt stack, a deleted TCB) */
        top_let_run(c);
        snprintf(info->name, sizeof info->name, "(start-up)");
        info->unlisted = true;
        return;
    }
    spoor_rtos_thread t;
    bool ok = spoor_rtos_read_thread(c->rtos, spoor_mem_reader, c->mem, tcb, &t);
    if (!ok && !top_connection_lost(c))
        cli_warn("top", "%s", spoor_last_error());
    if (ok) {
        info->func = entry_function(c, info, &t);
        read_stack(c, info, &t);
        spoor_rtos_state_of(c->rtos, spoor_mem_reader, c->mem, &ref, &t, &info->state);
    }
    top_let_run(c);
    if (!ok) {
        snprintf(info->name, sizeof info->name, "?");
        return;
    }
    info->read_ok = true;
    snprintf(info->name, sizeof info->name, "%s", t.name);
    take_priority(c, info, &t);
}

static top_thread_info *find_thread(struct top_cli *c, uint32_t tcb)
{
    for (size_t i = c->nthreads; i-- > 0;)
        if (c->threads[i].tcb == tcb)
            return &c->threads[i];
    return NULL;
}

const top_thread_info *top_thread(void *ctx, uint32_t tcb)
{
    struct top_cli *c = ctx;
    top_thread_info *info = find_thread(c, tcb);
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
 * looked for again (the thread may not be running now); with --stack its use is read again. */
static void revalidate(struct top_cli *c, top_thread_info *info, const spoor_rtos_thread_ref *ref)
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
static void restate(struct top_cli *c, top_thread_info *info, const spoor_rtos_thread_ref *ref)
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
void top_refresh_priorities(struct top_cli *c, const spoor_top_report *r)
{
    if (!c->gdb && !c->openocd)
        return;
    spoor_mem_invalidate(c->mem);
    static spoor_rtos_thread_ref refs[512]; /* the lists walked once for every thread */
    spoor_rtos_walk walk = {.lists_cut = 1};
    bool lists = c->rtos && spoor_rtos_state_needs_lists(c->rtos);
    size_t n = lists ? spoor_rtos_threads(c->rtos, spoor_mem_reader, c->mem, refs, 512, &walk) : 0;
    for (size_t i = 0; i < r->nthreads; i++) {
        top_thread_info *info = find_thread(c, r->threads[i].tcb);
        spoor_rtos_thread_ref ref = {r->threads[i].tcb, SPOOR_THREAD_READY, NULL};
        if (!c->rtos || !info || !info->read_ok ||
            (lists && !spoor_rtos_find(c->rtos, refs, n, &walk, info->tcb, &ref)))
            continue;
        if (r->threads[i].cycles)
            revalidate(c, info, &ref);
        else
            restate(c, info, &ref);
    }
    top_connection_lost(c);
    top_let_run(c);
}

/* ---- set-up ------------------------------------------------------------------------------- */

/* ITM and DWT through the live target (OpenOCD -W or a GDB server --gdb): the registers of
 * spoor_itm_watch_plan() written by spoor_dwt_plan_apply() (which checks that the comparator
 * exists first), or, over OpenOCD, orbtop-rtos's Tcl procedures. */
int top_set_up_trace(struct top_cli *c, const char *how, unsigned comparator)
{
    uint32_t watch = spoor_rtos_current_address(c->rtos);
    char out[1024];
    if (!strcmp(how, "proc")) {
        char command[64];
        if (!c->openocd)
            return cli_error("top", "--setup proc calls OpenOCD procedures: give -W");
        snprintf(command, sizeof command, "rtos_dwt_config 0x%08x", watch);
        if (!spoor_openocd_command(c->openocd, command, out, sizeof out) ||
            (c->view.exceptions &&
             !spoor_openocd_command(c->openocd, "exception_trace_enable", out, sizeof out)))
            return cli_fail("top");
        return 0;
    }
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = spoor_itm_watch_plan(watch, comparator,
                                    strcmp(how, "v8m") ? SPOOR_DWT_ARMV7M : SPOOR_DWT_ARMV8M,
                                    c->view.exceptions, w);
    if (!n)
        return cli_error("top", "the current-thread pointer 0x%08x is not word aligned", watch);
    spoor_dwt_apply_result r;
    if (spoor_dwt_plan_apply(c->mem, w, n, comparator, &r) != SPOOR_DWT_APPLY_OK)
        return cli_error("top", "--setup: %s", spoor_last_error());
    return 0;
}

/* ---- memory -------------------------------------------------------------------------------- */

int top_open_rtos(struct top_cli *c, const char *kind, bool setup)
{
    if ((c->rtos = spoor_rtos_open(c->elf, kind)) != NULL)
        return 0;
    spoor_rtos_kind found;
    if (strcmp(kind, "auto") != 0 || setup || spoor_rtos_detect(c->elf, &found))
        return cli_fail("top");
    /* no RTOS at all: the statistics need none, threads are then TCB addresses */
    cli_warn("top", "%s; threads are shown by TCB address only", spoor_last_error());
    return 0;
}

int top_open_memory(struct top_cli *c, const char *gdb, const char *telnet, const char *dump,
                    const spoor_raw_memory *mems, size_t nmems)
{
    c->mem = spoor_mem_new();
    if (!c->mem)
        return cli_out_of_memory("top");
    /* the ELF's read-only contents first: flash does not change while the target runs, and
     * names in it then cost no round trip */
    if (!spoor_mem_add_elf(c->mem, c->elf))
        return cli_fail("top");
    if (telnet) {
        c->openocd = !strncmp(telnet, "tcl:", 4) ? spoor_openocd_connect_tcl(telnet + 4, 5000)
                                                 : spoor_openocd_connect(telnet, 5000);
        if (!c->openocd || !spoor_mem_add_openocd(c->mem, c->openocd))
            return cli_fail("top");
    }
    if (gdb) {
        c->gdb = spoor_gdb_connect(gdb, 5000);
        if (!c->gdb || !spoor_mem_add_gdb(c->mem, c->gdb))
            return cli_fail("top");
    }
    if (dump) {
        c->dump = spoor_dump_load_as(dump, SPOOR_DUMP_FORMAT_AUTO);
        if (!c->dump || !spoor_mem_add_dump(c->mem, c->dump))
            return cli_fail("top");
    }
    for (size_t i = 0; i < nmems; i++)
        if (!spoor_mem_add_file(c->mem, mems[i].address, mems[i].path))
            return cli_fail("top");
    return 0;
}

void top_print_mem_stats(const struct top_cli *c)
{
    spoor_mem_stats st;
    spoor_mem_stats_get(c->mem, &st);
    cli_note("top",
             "memory: %" PRIu64 " reads; live target: %" PRIu64 " round trips, %" PRIu64
             " bytes, %" PRIu64 " page hits, %" PRIu64 " page misses; %zu threads",
             st.reads, st.round_trips, st.bytes_wire, st.cache_hits, st.cache_misses, c->nthreads);
    spoor_gdb_stats g;
    if (c->live) {
        spoor_gdb_stats_get(c->gdb, &g);
        cli_note("top", "running target: %" PRIu64 " halts, %.3f ms halted in all", g.halts,
                 (double)g.halted_us / 1000.0);
    }
}

void top_cleanup(struct top_cli *c)
{
    spoor_top_free(c->stats);
    spoor_rtos_close(c->rtos);
    spoor_mem_free(c->mem);
    if (c->gdb)
        spoor_gdb_close(c->gdb);
    spoor_openocd_close(c->openocd);
    if (c->dump)
        spoor_dump_free(c->dump);
    if (c->elf)
        spoor_elf_close(c->elf);
    free(c->threads);
}
