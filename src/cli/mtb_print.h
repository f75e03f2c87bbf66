/* One MTB packet as `spoor mtb` lists it (text: the ">S: ... D: ..." rows with function and
 * file:line; JSON: {"src","dst","a","s","kind"}), shared by spoor mtb and spoor crash's
 * "branches" section (docs/mtb.md, docs/crash.md). */
#ifndef SPOOR_MTB_PRINT_H
#define SPOOR_MTB_PRINT_H

#include "spoor/elf.h"
#include "spoor/mtb_decode.h"
#include "util/outbuf.h"
#include "util/record_json.h"

/* The packet's two text rows, each ending with a newline; a "Begin Trace Session" row first
 * when its S-bit is set. */
void mtb_packet_text(outbuf *o, const spoor_elf *elf, const spoor_mtb_packet *p);

#endif
