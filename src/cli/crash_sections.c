/* spoor crash's branches and calls sections (crash_sections.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls_print.h"
#include "cli.h"
#include "crash_sections.h"
#include "mtb_print.h"
#include "spoor/calls_decode.h"
#include "spoor/error.h"
#include "spoor/firmware_check.h"
#include "spoor/mtb_decode.h"

/* The MTB of the input: a dump's MTB record, else the MTB-M33 register block in memory. */
struct branches {
    bool present;    /* the input has an MTB (a record, or a register block that was set up) */
    char error[300]; /* it could not be decoded: why */
    spoor_mtb_packet *packets;
    size_t count;     /* decoded, oldest first */
    bool wrapped;     /* older packets were overwritten */
    const char *from; /* "dump" or "memory" */
};

struct calls {
    bool present; /* the ELF has the recorder */
    char error[300];
    spoor_calls_info info;
    spoor_call_trace trace;
    calls_view view;
};

/* Whether the 16 bytes of the register block are all zero: an MTB never set up. */
static bool blank_block(const uint8_t *regs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (regs[i])
            return false;
    return true;
}

static void read_branches(struct branches *b, spoor_snapshot *snap,
                          const crash_sections_config *cfg)
{
    memset(b, 0, sizeof *b);
    spoor_mtb_trace t;
    memset(&t, 0, sizeof t);
    bool ok;
    if (snap->dump && snap->dump->has_mtb) {
        b->from = "dump";
        ok = spoor_mtb_from_dump(snap->dump, snap->input, &t);
    } else {
        /* no record: the register block in the input's memory, when it was ever set up; one
         * given with --mtb-regs gets its section, with why it cannot be read */
        uint8_t regs[16];
        bool readable = spoor_mem_read(snap->mem, cfg->mtb_regs, regs, sizeof regs);
        if (!cfg->mtb_regs_given && (!readable || blank_block(regs, sizeof regs)))
            return;
        b->from = "memory";
        if (readable && blank_block(regs, sizeof regs)) {
            b->present = true;
            snprintf(b->error, sizeof b->error,
                     "%s: the MTB registers at 0x%08x are all zero (the MTB was never set up)",
                     snap->input, cfg->mtb_regs);
            return;
        }
        ok = spoor_mtb_read(snap->mem, cfg->mtb_regs, NULL, snap->input, &t);
    }
    b->present = true;
    if (ok) {
        b->packets = malloc(sizeof *b->packets * (t.layout.size / 8u ? t.layout.size / 8u : 1));
        if (!b->packets)
            snprintf(b->error, sizeof b->error, "out of memory");
        else if (!spoor_mtb_decode(&t.layout, t.bytes, t.layout.size, b->packets, &b->count))
            snprintf(b->error, sizeof b->error, "%s", spoor_last_error());
        b->wrapped = t.layout.wrapped;
    } else
        snprintf(b->error, sizeof b->error, "%s", spoor_last_error());
    spoor_mtb_trace_free(&t);
}

/* Whether the recorder never ran, so that its section would only say so (the Make fragment links
 * it into every firmware): its state in the input was never initialised or, when the input does
 * not hold the state, nothing in the ELF calls spoor_calls_init. A recorder that was initialised,
 * or may have been, keeps its section, with why it cannot be read. */
static bool recorder_never_ran(const spoor_elf *elf, spoor_snapshot *snap, uint32_t state)
{
    uint8_t bytes[SPOOR_CALLS_STATE_SIZE];
    spoor_calls_info info;
    if (spoor_mem_read(snap->mem, state, bytes, sizeof bytes))
        return !spoor_calls_parse_state(bytes, sizeof bytes, &info) &&
               spoor_last_status() == SPOOR_ERR_UNAVAILABLE; /* "not initialised" */
    return !spoor_elf_function_used(elf, "spoor_calls_init");
}

static void read_calls(struct calls *c, const spoor_elf *elf, spoor_snapshot *snap)
{
    memset(c, 0, sizeof *c);
    uint32_t addr, size;
    if (!spoor_elf_symbol(elf, SPOOR_CALLS_STATE_SYMBOL, &addr, &size) ||
        recorder_never_ran(elf, snap, addr))
        return;
    c->present = true;
    if (!spoor_calls_read(elf, spoor_mem_reader, snap->mem, snap->input, &c->info, &c->trace))
        snprintf(c->error, sizeof c->error, "%s", spoor_last_error());
    else
        calls_view_of_trace(&c->view, elf, &c->trace, spoor_mem_reader, snap->mem);
}

static size_t first_shown(size_t count, unsigned newest)
{
    return count > newest ? count - newest : 0;
}

static void branches_text(outbuf *o, const spoor_elf *elf, const struct branches *b, unsigned n)
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

static void calls_text(outbuf *o, const struct calls *c, unsigned n)
{
    if (c->error[0]) {
        ob_printf(o, "\nlast calls (call recorder): none: %s\n", c->error);
        return;
    }
    const spoor_call_trace *t = &c->trace;
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
        calls_record_text(o, &c->view, r, &t->contexts[r->context]);
    }
}

int crash_sections_option(const char *cmd, crash_sections_config *cfg, int opt, const char *arg)
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

void crash_sections_text(outbuf *o, const spoor_elf *elf, spoor_snapshot *snap,
                         const crash_sections_config *cfg)
{
    if (cfg->nbranches) {
        struct branches b;
        read_branches(&b, snap, cfg);
        if (b.present)
            branches_text(o, elf, &b, cfg->nbranches);
        free(b.packets);
    }
    if (cfg->ncalls) {
        struct calls c;
        read_calls(&c, elf, snap);
        if (c.present)
            calls_text(o, &c, cfg->ncalls);
        spoor_call_trace_free(&c.trace);
    }
}

void crash_sections_json(json_out *j, const spoor_elf *elf, spoor_snapshot *snap,
                         const crash_sections_config *cfg)
{
    if (cfg->nbranches) {
        struct branches b;
        read_branches(&b, snap, cfg);
        if (b.present) {
            size_t first = first_shown(b.count, cfg->nbranches);
            json_array_begin(j, "branches");
            for (size_t i = first; i < b.count; i++)
                mtb_packet_json(j, &b.packets[i]);
            json_array_end(j);
            json_object_begin(j, "branches_info");
            json_string(j, "from", b.from);
            json_uint(j, "total", b.count);
            json_bool(j, "wrapped", b.wrapped);
            json_string(j, "error", b.error[0] ? b.error : NULL);
            json_object_end(j);
        }
        free(b.packets);
    }
    if (cfg->ncalls) {
        struct calls c;
        read_calls(&c, elf, snap);
        if (c.present) {
            const spoor_call_trace *t = &c.trace;
            size_t first = c.error[0] ? t->count : first_shown(t->count, cfg->ncalls);
            json_array_begin(j, "calls");
            for (size_t i = first; i < t->count; i++)
                calls_record_json(j, &c.view, &t->records[i], &t->contexts[t->records[i].context]);
            json_array_end(j);
            json_object_begin(j, "calls_info");
            json_uint(j, "total", c.error[0] ? 0 : t->count);
            json_bool(j, "wrapped", !c.error[0] && t->wrapped);
            json_uint(j, "empty_slots", c.error[0] ? 0 : t->empty_slots);
            json_string(j, "error", c.error[0] ? c.error : NULL);
            json_object_end(j);
        }
        spoor_call_trace_free(&c.trace);
    }
}
