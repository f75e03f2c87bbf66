/* spoor top's side of the target (top_cli.h): the RTOS layer, target memory (a live target, a
 * dump, images, the ELF) as a snapshot's layers, and the ITM/DWT set-up (--setup) through the
 * live target. The threads read from that memory are the session's (spoor/top_session.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spoor/dwt_setup.h"
#include "spoor/itm_watch.h"
#include "top_cli.h"

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
        if (!c->target || !c->target->openocd)
            return cli_error("top", "--setup proc calls OpenOCD procedures: give -W");
        snprintf(command, sizeof command, "rtos_dwt_config 0x%08x", watch);
        if (!spoor_openocd_command(c->target->openocd, command, out, sizeof out) ||
            (c->view.exceptions &&
             !spoor_openocd_command(c->target->openocd, "exception_trace_enable", out, sizeof out)))
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
    if (spoor_dwt_plan_apply(c->target->mem, w, n, comparator, &r) != SPOOR_DWT_APPLY_OK)
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
    if (!gdb && !telnet && !dump && !nmems) /* no memory: threads are TCB addresses */
        return 0;
    /* the layers of spoor/memory.h: the dump's regions, the images, the ELF's read-only
     * contents (flash does not change while the target runs, and names in it then cost no round
     * trip), and last the live target */
    spoor_snapshot_source src = {.dump_path = dump,
                                 .gdb = gdb,
                                 .openocd = telnet,
                                 .mems = mems,
                                 .nmems = nmems,
                                 .memory_only = true};
    if (!(c->target = spoor_snapshot_open(&src, c->elf)))
        return cli_fail("top");
    return 0;
}

void top_print_mem_stats(const struct top_cli *c, bool live)
{
    spoor_mem_stats st = {0};
    spoor_top_session_status ss;
    spoor_top_session_status_get(c->session, &ss);
    if (c->target)
        spoor_mem_stats_get(c->target->mem, &st);
    cli_note("top",
             "memory: %" PRIu64 " reads; live target: %" PRIu64 " round trips, %" PRIu64
             " bytes, %" PRIu64 " page hits, %" PRIu64 " page misses; %zu threads",
             st.reads, st.round_trips, st.bytes_wire, st.cache_hits, st.cache_misses, ss.nthreads);
    spoor_gdb_stats g;
    if (live) {
        spoor_gdb_stats_get(c->target->gdb, &g);
        cli_note("top", "running target: %" PRIu64 " halts, %.3f ms halted in all", g.halts,
                 (double)g.halted_us / 1000.0);
    }
}

void top_cleanup(struct top_cli *c)
{
    spoor_top_session_free(c->session);
    spoor_rtos_close(c->rtos);
    spoor_snapshot_close(c->target);
    if (c->elf)
        spoor_elf_close(c->elf);
}
