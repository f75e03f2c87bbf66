/* One MTB packet as text or JSON (mtb_print.h). */
#include "mtb_print.h"

/* "func @ file:line", or "0x... @ ?:?" for an address the ELF does not know. */
static void put_place(outbuf *o, const spoor_elf *elf, uint32_t addr)
{
    spoor_location loc[8];
    spoor_elf_symbolize(elf, addr, loc, 8);
    const spoor_location *l = &loc[0];
    if (l->function)
        ob_text(o, l->function);
    else
        ob_hex8(o, addr);
    ob_str(o, " @ ");
    ob_text(o, l->file ? l->file : "?");
    ob_char(o, ':');
    if (l->line)
        ob_u32(o, l->line);
    else
        ob_char(o, '?');
}

void mtb_packet_text(outbuf *o, const spoor_elf *elf, const spoor_mtb_packet *p)
{
    if (p->s)
        ob_str(o, "Begin Trace Session\n");
    ob_str(o, ">S: ");
    ob_hex8(o, p->src);
    ob_str(o, " - ");
    if (p->a && spoor_mtb_is_exc_return(p->src)) {
        ob_str(o, "Exception Return (EXC_RETURN)\n");
    } else {
        if (p->a)
            ob_str(o, "Exception (or debug) Entry from ");
        put_place(o, elf, p->src);
        ob_char(o, '\n');
    }
    ob_str(o, " D: ");
    ob_hex8(o, p->dst);
    ob_str(o, " - ");
    if (!p->a && spoor_mtb_is_exc_return(p->dst))
        ob_str(o, "Exception Return (EXC_RETURN)");
    else
        put_place(o, elf, p->dst);
    ob_char(o, '\n');
}
