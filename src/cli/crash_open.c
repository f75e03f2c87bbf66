/* The analysis behind a crash report (crash_report.h): snapshot, fault, backtrace. */
#include <stdio.h>

#include "cli.h"
#include "crash_report.h"

#define MAX_INLINE 16

/* Names every frame once, so that the parts of the ELF that cannot be read are known, and says
 * which on stderr before the report that uses them (the JSON report lists them too). */
static void print_elf_warnings(const struct crash *c, const char *cmd)
{
    for (size_t i = 0; i < c->nframes; i++) {
        spoor_location loc[MAX_INLINE];
        if (c->frames[i].kind != SPOOR_FRAME_EXCEPTION)
            spoor_frame_symbolize(c->elf, &c->frames[i], loc, MAX_INLINE);
    }
    const char *const *list;
    size_t n = spoor_elf_warnings(c->elf, &list);
    for (size_t i = 0; i < n; i++)
        cli_warn_input(cmd, "%s", list[i]);
}

int crash_open(struct crash *c, const char *cmd, const char *elf_path, target_input *in,
               char **args, int nargs)
{
    if (!(c->elf = target_input_elf(cmd, elf_path, args, nargs)))
        return SPOOR_EXIT_USAGE;
    c->snap = target_input_open(cmd, in, args, nargs, c->elf);
    if (!c->snap)
        return SPOOR_EXIT_USAGE;
    c->dump = c->snap->dump;
    if (spoor_dump_build_id_warning(c->dump, c->elf, c->build_id_warning,
                                    sizeof c->build_id_warning))
        cli_warn_input(cmd, "%s", c->build_id_warning);
    spoor_fault_decode(&c->snap->fault, c->snap->exception, c->snap->regs.r[15], &c->fault);
    c->nframes = spoor_unwind(c->elf, &c->snap->regs, spoor_mem_reader, c->snap->mem, NULL,
                              c->frames, MAX_FRAMES, &c->stop);
    print_elf_warnings(c, cmd);
    return SPOOR_EXIT_OK;
}

void crash_close(struct crash *c)
{
    spoor_snapshot_close(c->snap);
    spoor_elf_close(c->elf);
    c->snap = NULL;
    c->elf = NULL;
}
