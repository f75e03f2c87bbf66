/* The report behind spoor crash and spoor report (crash_report.h). */
#include <stdio.h>

#include "cli.h"
#include "crash_report.h"

#define MAX_INLINE 16

int crash_open(struct crash *c, const char *cmd, const char *elf_path, target_input *in,
               char **args, int nargs)
{
    if (!(c->elf = target_input_elf(cmd, elf_path, args, nargs)))
        return SPOOR_EXIT_USAGE;
    c->snap = target_input_open(cmd, in, args, nargs, c->elf);
    if (!c->snap)
        return SPOOR_EXIT_USAGE;
    if (!(c->report = spoor_crash_open(c->elf, c->snap, &c->options)))
        return cli_fail(cmd);
    if (c->report->build_id_warning[0])
        cli_warn_input(cmd, "%s", c->report->build_id_warning);
    /* every frame named once, so that the parts of the ELF that cannot be read are known, and
     * said on stderr before the report that uses them (the JSON report lists them too) */
    for (size_t i = 0; i < c->report->nframes; i++) {
        spoor_location loc[MAX_INLINE];
        if (c->report->frames[i].kind != SPOOR_FRAME_EXCEPTION)
            spoor_frame_symbolize(c->elf, &c->report->frames[i], loc, MAX_INLINE);
    }
    const char *const *list;
    size_t n = spoor_elf_warnings(c->elf, &list);
    for (size_t i = 0; i < n; i++)
        cli_warn_input(cmd, "%s", list[i]);
    return SPOOR_EXIT_OK;
}

void crash_close(struct crash *c)
{
    spoor_crash_close(c->report);
    spoor_snapshot_close(c->snap);
    spoor_elf_close(c->elf);
    c->report = NULL;
    c->snap = NULL;
    c->elf = NULL;
}
