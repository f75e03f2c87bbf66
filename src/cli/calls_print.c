/* One call-recorder record as text (calls_print.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "calls_print.h"

static void put_function(outbuf *ob, const spoor_elf *elf, uint32_t fn)
{
    uint32_t off;
    const char *name = calls_name_at(elf, fn, &off);
    if (!name) {
        ob_str(ob, "???");
        return;
    }
    ob_text(ob, name); /* an ELF's string: escaped for the terminal */
    if (off)
        ob_printf(ob, ":0x%04" PRIX32, off);
}

static void put_site(outbuf *ob, const spoor_elf *elf, uint32_t site)
{
    const char *exc = spoor_calls_exc_return_text(site);
    if (exc) {
        ob_printf(ob, "<exception from %s>", exc);
        return;
    }
    uint32_t off;
    const char *name = calls_name_at(elf, site, &off);
    if (name) {
        ob_text(ob, name);
        ob_printf(ob, ":0x%04" PRIX32, off);
    } else {
        ob_str(ob, "???");
    }
}

void calls_record_text(outbuf *ob, const calls_view *v, const spoor_call_record *r,
                       const spoor_call_context *ctx)
{
    char buf[CALLS_LABEL_MAX];
    if (v->many)
        ob_printf(ob, "%-*s| ", v->label_width, calls_context_label(v, ctx, buf, sizeof buf));
    for (int d = 0; d < r->depth; d++)
        ob_char(ob, ' ');
    bool enter = r->kind == SPOOR_CALL_ENTER;
    ob_printf(ob, "%c %08" PRIX32 "%s%08" PRIX32 "  ", enter ? '{' : '}', r->site,
              enter ? "->" : "<-", r->function);
    put_site(ob, v->elf, r->site);
    ob_str(ob, enter ? "->" : "<-");
    put_function(ob, v->elf, r->function);
    if (v->has_time)
        ob_printf(ob, "  @%" PRIu64, r->time_ticks);
    ob_char(ob, '\n');
}
