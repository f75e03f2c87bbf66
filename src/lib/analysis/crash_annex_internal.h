/* The annex of spoor report's page (crash_annex.c), for the page writer (crash_html.c). */
#ifndef SPOOR_ANALYSIS_CRASH_ANNEX_INTERNAL_H
#define SPOOR_ANALYSIS_CRASH_ANNEX_INTERNAL_H

#include <stddef.h>

#include "spoor/analysis.h"

/* The annex document of a crash report's JSON (report[0..len), checked to be one JSON object):
 * {"spoor", "elf", "input", "code", "sources"}, what only the page shows beside the report —
 * the disassembly around every address the report names ("pc", "src", "dst") and the source
 * text around every "file"/"line" it names (found as DWARF gives the name, joined with
 * DW_AT_comp_dir, or under o->source_dirs). Malloc'd, *annex_len bytes; NULL with the error
 * set: "not a spoor crash --json report: byte N: ...", or out of memory. */
char *spoor_crash_annex_json(const spoor_elf *elf, const char *report, size_t len,
                             const spoor_report_options *o, size_t *annex_len);

#endif
