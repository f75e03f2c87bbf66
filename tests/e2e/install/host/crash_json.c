/* A host program that uses the installed libspoor's analysis (spoor/analysis.h), nothing of
 * spoor's CLI:
 *   crash_json FW.elf INPUT [--threads]: the crash report's JSON (spoor_crash_json), the document
 *     spoor crash --json [--threads] prints;
 *   crash_json --list FW.elf INPUT: every RTOS thread of the snapshot (spoor_threads_read), one
 *     line each: "TCB NAME STATE CURRENT PC SP" (NAME "-" when the TCB was not read, PC and SP
 *     "-" without registers), then "not shown N".
 * INPUT is a crash dump, or REGS.json followed by ADDR:FILE memory images. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/analysis.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"

#define MAX_MEMS 16

static int fail(const char *what)
{
    fprintf(stderr, "crash_json: %s: %s\n", what, spoor_last_error());
    return 2;
}

static void list_threads(const spoor_threads *ts)
{
    for (size_t i = 0; i < ts->count; i++) {
        const spoor_thread *t = &ts->thread[i];
        printf("0x%08x %s %s %d", t->tcb, t->read_ok ? t->info.name : "-",
               spoor_thread_state_name(t->state.state), t->current);
        if (t->has_regs)
            printf(" 0x%08x 0x%08x\n", t->regs.r[15], t->regs.r[13]);
        else
            printf(" - -\n");
    }
    printf("not shown %zu\n", ts->walk.not_shown);
}

int main(int argc, char **argv)
{
    bool list = argc > 1 && !strcmp(argv[1], "--list");
    bool threads = argc > 1 && !strcmp(argv[argc - 1], "--threads");
    int first = list ? 2 : 1, last = threads ? argc - 1 : argc;
    if (last - first < 2) {
        fprintf(stderr, "usage: crash_json [--list] FW.elf DUMP|REGS.json ADDR:FILE... "
                        "[--threads]\n");
        return 2;
    }
    spoor_elf *elf = spoor_elf_open(argv[first]);
    if (!elf)
        return fail(argv[first]);
    spoor_snapshot_source src = {0};
    spoor_raw_memory mems[MAX_MEMS];
    if (last - first == 2) {
        src.dump_path = argv[first + 1];
    } else {
        src.regs_path = argv[first + 1];
        for (int i = first + 2; i < last && src.nmems < MAX_MEMS; i++)
            if (!spoor_raw_memory_parse(argv[i], &mems[src.nmems++]))
                return fail(argv[i]);
        src.mems = mems;
    }
    spoor_snapshot *snap = spoor_snapshot_open(&src, elf);
    if (!snap)
        return fail(argv[first + 1]);
    int status = 0;
    if (list) {
        spoor_threads *ts =
            spoor_threads_read(elf, snap, SPOOR_THREADS_FRAMES, NULL, 0, SPOOR_STOP_RESET);
        if (!ts || !ts->rtos)
            status = ts ? (fprintf(stderr, "crash_json: %s\n", ts->error), 1) : fail("threads");
        else
            list_threads(ts);
        spoor_threads_free(ts);
    } else {
        spoor_crash_options options = SPOOR_CRASH_OPTIONS_DEFAULT;
        options.threads = threads;
        spoor_crash *c = spoor_crash_open(elf, snap, &options);
        size_t len;
        char *json = c ? spoor_crash_json(c, &len) : NULL;
        if (json)
            fwrite(json, 1, len, stdout);
        else
            status = fail("crash report");
        free(json);
        spoor_crash_close(c);
    }
    spoor_snapshot_close(snap);
    spoor_elf_close(elf);
    return status;
}
