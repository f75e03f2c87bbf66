/* spoor mtb --flow's printer: the instructions the MTB flow reconstructs (spoor_mtb_flow), each
 * with its function and source line, the packets between them and the gaps where the code is
 * unknown; text like gdb's `disassemble /s`, or JSON Lines. */
#ifndef SPOOR_MTB_FLOW_PRINT_H
#define SPOOR_MTB_FLOW_PRINT_H

#include "spoor/elf.h"
#include "spoor/mtb_decode.h"
#include "util/json_write.h"
#include "util/outbuf.h"

#define MTB_FLOW_MAX_SOURCES 64

typedef struct source_file {
    char *path;
    char *text;
    char **lines;
    unsigned nlines;
} source_file;

typedef struct mtb_flow_printer {
    const spoor_elf *elf;
    outbuf *out;
    json_out *jout; /* NULL: text */
    /* text: the last location printed */
    const char *last_function, *last_file;
    unsigned last_line;
    source_file sources[MTB_FLOW_MAX_SOURCES]; /* the source files read so far */
    unsigned nsources;
} mtb_flow_printer;

void mtb_flow_printer_init(mtb_flow_printer *m, const spoor_elf *elf, outbuf *out, json_out *jout);
void mtb_flow_printer_free(mtb_flow_printer *m);
void mtb_flow_insn(mtb_flow_printer *m, const spoor_mtb_step *s);
void mtb_flow_packet(mtb_flow_printer *m, const spoor_mtb_packet *p);
void mtb_flow_gap(mtb_flow_printer *m, const spoor_mtb_step *s);

#endif
