/* A host program that uses the installed libspoor: spoor top's interval table of a recorded
 * ITM stream through the public API (spoor/top_session.h): the firmware's RTOS, target memory
 * from a RAM image, one line per report and one per thread:
 *   report INDEX SUMMARY PARTIAL QUIET CPU_USAGE CPU_MAX
 *   thread TCB NAME FUNC PRIO CYCLES SWITCHES CPU MAX IDLE
 * (NAME and FUNC "-" when empty or unknown, PRIO "-" when unknown; percentages with 3 decimals).
 * usage: top_table FW.elf HZ INTERVAL_MS STREAM ADDR:IMAGE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/rtos.h"
#include "spoor/snapshot.h"
#include "spoor/top_session.h"
#include "spoor/trace_pump.h"

static spoor_top_session *session;

static const char *text(const char *s)
{
    return s && *s ? s : "-";
}

static void on_report(void *ctx, const spoor_top_report *r)
{
    (void)ctx;
    printf("report %" PRIu64 " %d %d %" PRIu64 " %.3f %.3f\n", r->index, r->summary, r->partial,
           r->quiet, r->cpu_usage, r->cpu_max);
    for (size_t i = 0; i < r->nthreads; i++) {
        const spoor_top_thread_stats *t = &r->threads[i];
        const spoor_top_thread_info *info = spoor_top_session_thread(session, t->tcb);
        char prio[16] = "-";
        if (info->has_prio)
            snprintf(prio, sizeof prio, "%" PRId32, info->prio);
        printf("thread 0x%08" PRIx32 " %s %s %s %" PRIu64 " %" PRIu64 " %.3f %.3f %d\n", t->tcb,
               text(info->name), text(info->func), prio, t->cycles, t->switches, t->pct, t->max_pct,
               t->idle);
    }
}

static int fail(void)
{
    fprintf(stderr, "top_table: %s\n", spoor_last_error());
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: top_table FW.elf HZ INTERVAL_MS STREAM ADDR:IMAGE\n");
        return 2;
    }
    spoor_raw_memory image;
    spoor_elf *elf = spoor_elf_open(argv[1]);
    if (!elf || !spoor_raw_memory_parse(argv[5], &image))
        return fail();
    spoor_rtos *rtos = spoor_rtos_open(elf, "auto");
    spoor_snapshot_source src = {.mems = &image, .nmems = 1, .memory_only = true};
    spoor_snapshot *target = spoor_snapshot_open(&src, elf);
    if (!rtos || !target)
        return fail();
    spoor_top_session_config cfg = {.cpu_hz = strtoull(argv[2], NULL, 0),
                                    .interval_ms = (uint32_t)strtoul(argv[3], NULL, 0),
                                    .comparator = 1,
                                    .elf = elf,
                                    .rtos = rtos,
                                    .target = target};
    spoor_top_session_callbacks cb = {.report = on_report};
    if (!(session = spoor_top_session_new(&cfg, &cb)))
        return fail();
    spoor_trace_pump_config pump_cfg;
    spoor_trace_pump_config_init(&pump_cfg);
    spoor_trace_pump *pump =
        spoor_trace_pump_open(argv[4], 10, &pump_cfg, spoor_top_session_event, session);
    if (!pump)
        return fail();
    spoor_top_session_start(session);
    int status = spoor_trace_pump_run(pump) == SPOOR_TRACE_PUMP_FAILED ? fail() : 0;
    spoor_trace_pump_free(pump);
    spoor_top_session_free(session);
    spoor_snapshot_close(target);
    spoor_rtos_close(rtos);
    spoor_elf_close(elf);
    return status;
}
