/* The annex of spoor report's page: what only the page shows beside the crash report's JSON —
 * the disassembly around every address the report names ("pc", "src", "dst") and the source
 * text around every "file"/"line" it names (found as DWARF gives the name, joined with
 * DW_AT_comp_dir, or under --source-dir). */
#ifndef SPOOR_REPORT_ANNEX_H
#define SPOOR_REPORT_ANNEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_scan.h"
#include "spoor/elf.h"
#include "util/json_write.h"

#define REPORT_MAX_SOURCE_DIRS 16
#define REPORT_MAX_COMP_DIRS 64
#define MAX_ADDRS 1024 /* code windows in the annex */
#define MAX_LINES 4096 /* source lines of interest */

struct line_ref {
    char *file;
    unsigned line;
};

struct annex {
    uint32_t addrs[MAX_ADDRS];
    size_t naddrs;
    struct line_ref lines[MAX_LINES];
    size_t nlines;
    char last_file[JSON_SCAN_MAX_STRING]; /* the "file" of the object being read */
    unsigned last_file_object;
    const char *source_dirs[REPORT_MAX_SOURCE_DIRS];
    size_t nsource_dirs;
    const char *comp_dirs[REPORT_MAX_COMP_DIRS]; /* the ELF's DW_AT_comp_dir values */
    size_t ncomp_dirs;
    bool out_of_memory;
};

/* json_scan's callback over the report: collects its addresses and file:line pairs into a
 * (struct annex *ctx). */
void report_annex_collect(void *ctx, const json_scan_value *v);
/* The "code" member: CODE_BEFORE instructions before each address and CODE_AFTER from it. */
void report_annex_code(json_out *j, const spoor_elf *elf, struct annex *a);
/* The "sources" member: CONTEXT lines each side of every line of interest. */
void report_annex_sources(json_out *j, struct annex *a);
/* A whole file of at most max bytes (NUL-terminated, *len without the NUL); NULL with errno. */
char *report_read_file(const char *path, size_t max, size_t *len);

#endif
