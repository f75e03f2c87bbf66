/* spoor crash's branches and calls sections (crash_sections.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls_print.h"
#include "cli.h"
#include "crash_sections.h"
#include "mtb_print.h"
#include "spoor/error.h"
#include "spoor/mtb_decode.h"

static size_t first_shown(size_t count, unsigned newest)
{
    return count > newest ? count - newest : 0;
}

static void branches_text(outbuf *o, const spoor_elf *elf, const spoor_crash_mtb *b, unsigned n)
{
    if (b->error[0]) {
        ob_printf(o, "\nlast branches (MTB): none: %s\n", b->error);
        return;
    }
    size_t first = first_shown(b->count, n);
    ob_printf(o, "\nlast branches (MTB, from %s: newest %zu of %zu, oldest first; %s):\n",
              strcmp(b->from, "dump") ? "target memory" : "the dump", b->count - first, b->count,
              b->wrapped ? "the buffer wrapped, older branches were overwritten"
                         : "not wrapped, every branch since tracing started");
    for (size_t i = first; i < b->count; i++)
        mtb_packet_text(o, elf, &b->packets[i]);
}

static void calls_text(outbuf *o, spoor_crash *report, const spoor_crash_ring *c, unsigned n)
{
    static calls_view view;
    if (c->error[0]) {
        ob_printf(o, "\nlast calls (call recorder): none: %s\n", c->error);
        return;
    }
    const spoor_call_trace *t = &c->trace;
    calls_view_of_trace(&view, report->elf, t, spoor_mem_reader, report->snap->mem);
    size_t first = first_shown(t->count, n);
    ob_printf(o, "\nlast calls (call recorder: newest %zu of %zu records, oldest first; %s",
              t->count - first, t->count,
              t->wrapped ? "the ring wrapped, older records were overwritten"
                         : "not wrapped, every record since spoor_calls_init");
    if (t->empty_slots)
        ob_printf(o, "; %zu slots claimed but never written", t->empty_slots);
    ob_str(o, "):\n");
    for (size_t i = first; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        if (r->after_gap && i > first)
            ob_str(o, "--- records lost here (a slot was claimed but never written) ---\n");
        calls_record_text(o, &view, r, &t->contexts[r->context]);
    }
}

int crash_sections_option(const char *cmd, spoor_crash_options *cfg, int opt, const char *arg)
{
    switch (opt) {
    case CRASH_OPT_BRANCHES:
    case CRASH_OPT_CALLS:
        if (!cli_parse_u32(arg, opt == CRASH_OPT_CALLS ? &cfg->ncalls : &cfg->nbranches))
            return cli_error(cmd, "--%s: expected a count (0: leave the section out), got '%s'",
                             opt == CRASH_OPT_CALLS ? "calls" : "branches", arg);
        return 0;
    case CRASH_OPT_MTB_REGS:
        if (!cli_parse_u32(arg, &cfg->mtb_regs) || (cfg->mtb_regs & 3u))
            return cli_error(cmd, "--mtb-regs: expected a word-aligned address, got '%s'", arg);
        cfg->mtb_regs_given = true;
        return 0;
    default: return cli_error(cmd, "internal: option %d is no section flag", opt);
    }
}

void crash_sections_text(outbuf *o, spoor_crash *c)
{
    if (c->options.nbranches) {
        const spoor_crash_mtb *b = spoor_crash_branches(c);
        if (b->present)
            branches_text(o, c->elf, b, c->options.nbranches);
    }
    if (c->options.ncalls) {
        const spoor_crash_ring *k = spoor_crash_calls(c);
        if (k->present)
            calls_text(o, c, k, c->options.ncalls);
    }
}
