/* One crash report, shared by spoor crash and spoor report: the ELF and the target input opened,
 * the report (spoor/analysis.h spoor_crash_open) made of them, and what does not fit said on
 * stderr (crash_open.c). The JSON both commands print is the library's (spoor_crash_json), so the
 * page and the CLI cannot disagree. */
#ifndef SPOOR_CRASH_REPORT_H
#define SPOOR_CRASH_REPORT_H

#include "crash_sections.h"
#include "spoor/analysis.h"
#include "spoor/elf.h"
#include "spoor/snapshot.h"
#include "target_input.h"
#include "util/outbuf.h"

struct crash {
    spoor_elf *elf;
    spoor_snapshot *snap;
    spoor_crash *report;
    int json, stats;
    spoor_crash_options options; /* --threads, --branches, --calls, --mtb-regs */
    outbuf out;
};

/* Opens the ELF (elf_path) and the target input (in, with the positional arguments args), makes
 * the report and says on stderr ("spoor CMD: WARNING: ...") what does not fit (build-id) or
 * cannot be read in the ELF. Returns SPOOR_EXIT_OK, or SPOOR_EXIT_USAGE after a one-line error;
 * crash_close(c) in both cases. */
int crash_open(struct crash *c, const char *cmd, const char *elf_path, target_input *in,
               char **args, int nargs);
void crash_close(struct crash *c);

#endif
