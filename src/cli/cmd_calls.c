/* spoor calls: the function-call recorder's ring (target/include/spoor/calls.h), read from a
 * crash dump, RAM images or a live target, as a call tree with names from the ELF. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls_print.h"
#include "chrome_trace.h"
#include "cli.h"
#include "spoor/call_stack.h"
#include "spoor/calls_decode.h"
#include "spoor/elf.h"
#include "spoor/itm_decoder.h"
#include "spoor/memory.h"
#include "spoor/snapshot.h"
#include "spoor/trace_pump.h"
#include "target_input.h"
#include "util/json_write.h"
#include "util/outbuf.h"

static const char calls_usage[] =
    "usage: spoor calls -e FW.elf [OUTPUT] DUMP\n"
    "       spoor calls -e FW.elf [OUTPUT] --mem ADDR:FILE ... [--regs regs.json]\n"
    "       spoor calls -e FW.elf [OUTPUT] --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "       spoor calls -e FW.elf [OUTPUT] --itm SOURCE --port P [--tpiu[=ID]]\n"
    "Prints the calls and returns the firmware's call recorder (spoor_calls_init,\n"
    "-finstrument-functions) left in its RAM ring, oldest first, indented by call depth:\n"
    "  { SITE->FUNCTION  CALLER:OFFSET->NAME     a call; SITE is the return address\n"
    "  } SITE<-FUNCTION  CALLER:OFFSET<-NAME     its return\n"
    "The ring and its state object (symbol spoor_calls_state) must be in the input: register\n"
    "both as dump regions, or give a RAM image that holds them. With --itm the records come\n"
    "live from the recorder's ITM output (spoor_calls_itm(P)) and are printed as they arrive.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -j, --json         one JSON object per record instead of text\n"
    "      --chrome FILE  Chrome/Perfetto trace-event JSON into FILE (one track per context)\n"
    "      --folded       flame-graph input: one line per call stack with its weight\n"
    "  -s, --stats        per function: calls, and inclusive/exclusive time when "
    "recorded\n" TARGET_INPUT_HELP
    "      --itm SOURCE   ITM stream: a capture file, - (standard input), tcp:HOST:PORT or\n"
    "                     serial:/dev/ttyX:BAUD (as spoor itm)\n"
    "      --port P       the stimulus port given to spoor_calls_itm(): function words on P,\n"
    "                     call sites on P+1\n"
    "  -t, --tpiu[=ID]    the ITM stream is TPIU-formatted: deframe it, take trace source ID\n"
    "                     (default 1)\n"
    "  -h, --help         this text\n\n"
    "A dump whose build-id differs from the ELF's gets a warning (as in spoor crash).\n"
    "Exit status: 0 records printed, 2 usage or input error (no recorder in the ELF, ring\n"
    "not in the input, corrupt state, ...).\n";

enum { OPT_CHROME = 300, OPT_FOLDED, OPT_ITM, OPT_PORT };

struct calls {
    const char *elf_path, *chrome_path, *itm_spec;
    bool json, folded, stats, tpiu, port_given;
    unsigned port, tpiu_id;
    spoor_elf *elf;
    spoor_calls_info state;
    spoor_call_trace trace;
    calls_view v; /* how records print: the ring's options, the text's context column */
    bool live;
    /* the records' call stacks, one per context index: --stats, --folded, --chrome */
    spoor_call_stack stack;
    const spoor_call_record *record; /* the record on the stack now, and its context */
    const spoor_call_context *record_ctx;
    size_t records;
    unsigned contexts_seen; /* highest context index + 1 */
    uint64_t last_ts;
    chrome_trace chrome;
    outbuf out;
    json_out jout; /* JSON writer onto out */
};

/* ---- call stacks: folded, stats ------------------------------------------------------------ */

static void put_name_plain(outbuf *ob, const spoor_elf *elf, uint32_t fn)
{
    uint32_t off;
    const char *name = calls_name_at(elf, fn, &off);
    if (name)
        ob_str(ob, name);
    else
        ob_printf(ob, "0x%08" PRIx32, fn);
}

/* One --folded line: the kept frames of the event's stack (a handler's label first), weight. */
static void put_folded_stack(struct calls *c, const spoor_call_stack_event *ev, uint64_t weight)
{
    char label[CALLS_LABEL_MAX];
    if (c->record_ctx->handler && c->v.many) {
        ob_str(&c->out, calls_context_label(&c->v, c->record_ctx, label, sizeof label));
        ob_char(&c->out, ';');
    }
    for (size_t d = 0; d < ev->nframes; d++) {
        if (d)
            ob_char(&c->out, ';');
        put_name_plain(&c->out, c->elf, ev->frames[d].fn);
    }
    ob_printf(&c->out, " %" PRIu64 "\n", weight);
}

static void print_stats(struct calls *c)
{
    size_t n;
    const spoor_call_fn_stats *tab = spoor_call_stack_stats(&c->stack, &n);
    ob_printf(&c->out, "%10s %14s %14s  %s\n", "calls", "inclusive", "exclusive", "function");
    for (size_t i = 0; i < n; i++) {
        const spoor_call_fn_stats *f = &tab[i];
        if (c->v.has_time)
            ob_printf(&c->out, "%10" PRIu64 " %14" PRIu64 " %14" PRIu64 "  ", f->calls,
                      f->inclusive, f->exclusive);
        else
            ob_printf(&c->out, "%10" PRIu64 " %14s %14s  ", f->calls, "-", "-");
        put_name_plain(&c->out, c->elf, f->fn);
        ob_char(&c->out, '\n');
    }
    ob_printf(&c->out, "%zu records, %u contexts%s\n", c->records, c->contexts_seen,
              c->v.has_time ? ", times in timestamp ticks" : "");
}

/* ---- Chrome trace-event JSON ---------------------------------------------------------------- */

static int chrome_begin(struct calls *c)
{
    if (!chrome_trace_open(&c->chrome, c->chrome_path))
        return cli_error("calls", "%s: cannot create: %s", c->chrome_path, strerror(errno));
    return SPOOR_EXIT_OK;
}

/* B for an enter, E for an exit whose B was written (the stack's): every track nests. A call
 * whose exit is not in the trace (its context ended, the trace did) gets an E of its own at the
 * last ts. */
static void chrome_frame(struct calls *c, const spoor_call_stack_event *ev)
{
    const char *name = "(no exit recorded)";
    char buf[512], hex[16];
    if (ev->cause != SPOOR_CALL_STACK_UNWIND) {
        name = calls_json_name(c->elf, c->record->function, false, buf, sizeof buf);
        if (!name) {
            snprintf(hex, sizeof hex, "0x%08" PRIx32, c->record->function);
            name = hex;
        }
    }
    chrome_trace_event(&c->chrome, name, ev->kind == SPOOR_CALL_STACK_ENTER ? "B" : "E", c->last_ts,
                       1, ev->context);
}

/* The call stacks' events: --chrome events; --folded lines (weight: one per call, or the
 * exclusive time with timestamps). The context's first event names its track
 * (thread_name metadata). */
static void on_stack_event(void *arg, const spoor_call_stack_event *ev)
{
    struct calls *c = arg;
    char label[CALLS_LABEL_MAX];
    bool frame = ev->kind == SPOOR_CALL_STACK_ENTER || ev->kind == SPOOR_CALL_STACK_EXIT;
    if (c->chrome.ob && ev->kind == SPOOR_CALL_STACK_BEGIN)
        chrome_trace_track(&c->chrome, 1, ev->context,
                           calls_context_label(&c->v, c->record_ctx, label, sizeof label));
    if (c->chrome.ob && frame)
        chrome_frame(c, ev);
    if (!c->folded)
        return;
    if (ev->kind == SPOOR_CALL_STACK_ENTER && !c->v.has_time)
        put_folded_stack(c, ev, 1);
    else if (ev->kind == SPOOR_CALL_STACK_EXIT && ev->cause == SPOOR_CALL_STACK_RETURN &&
             ev->kept && c->v.has_time)
        put_folded_stack(c, ev, ev->exclusive);
}

static int chrome_end(struct calls *c)
{
    if (!chrome_trace_close(&c->chrome))
        return cli_error("calls", "%s: write failed", c->chrome_path);
    return SPOOR_EXIT_OK;
}

/* ---- one record to every output -------------------------------------------------------------- */

/* Live records: the context column appears with the first handler record, this wide. */
#define LIVE_LABEL_WIDTH 15

/* gap: why records before this one are lost (text marker), NULL for none. */
static bool emit_record(struct calls *c, const spoor_call_record *r, const spoor_call_context *ctx,
                        const char *gap)
{
    if (c->live && ctx->handler && !c->v.many) { /* the first handler record */
        c->v.many = true;
        c->v.label_width = LIVE_LABEL_WIDTH;
    }
    if (r->context >= c->contexts_seen)
        c->contexts_seen = r->context + 1;
    /* chrome's ts: timestamp ticks when recorded, else the record's position */
    c->last_ts = c->v.has_time ? r->time_ticks : c->records;
    c->record = r;
    c->record_ctx = ctx;
    bool ok = r->kind == SPOOR_CALL_ENTER
                  ? spoor_call_stack_call(&c->stack, r->context, r->function, r->function, r->site,
                                          r->time_ticks)
                  : spoor_call_stack_return(&c->stack, r->context, r->time_ticks);
    if (!ok)
        return false;
    if (c->json) {
        calls_record_json(&c->jout, &c->v, r, ctx);
        json_finish(&c->jout);
    } else if (!c->folded && !c->stats && !c->chrome_path) {
        if (gap)
            ob_printf(&c->out, "--- records lost here (%s) ---\n", gap);
        calls_record_text(&c->out, &c->v, r, ctx);
    }
    c->records++;
    /* a handler invocation found from EXC_RETURN ends with its exit */
    if (ctx->handler && !c->v.has_context && r->kind == SPOOR_CALL_EXIT &&
        spoor_cortexm_is_exc_return(r->site))
        spoor_call_stack_end(&c->stack, r->context, r->time_ticks);
    c->record = NULL; /* the stack's later events (its end) have no record */
    c->record_ctx = NULL;
    return true;
}

/* The calls still open end with the trace: --stats, then --chrome's closing events. */
static int emit_end(struct calls *c)
{
    int rc = SPOOR_EXIT_OK;
    if (c->stats)
        print_stats(c);
    spoor_call_stack_finish(&c->stack, c->last_ts);
    if (c->chrome.ob)
        rc = chrome_end(c);
    spoor_call_stack_free(&c->stack);
    return rc;
}

/* The decoded ring to the outputs, oldest first. */
static int print_ring(struct calls *c, spoor_snapshot *snap)
{
    const spoor_call_trace *t = &c->trace;
    calls_view_of_trace(&c->v, c->elf, t, spoor_mem_reader, snap->mem);
    if (t->wrapped && !c->json && !c->folded && !c->stats && !c->chrome_path)
        ob_printf(&c->out,
                  "--- ring wrapped: older records were overwritten (%" PRIu32
                  " records of %u bytes) ---\n",
                  c->state.capacity, c->state.record_size);
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        const char *gap = r->after_gap && i > 0 ? "a slot was claimed but never written" : NULL;
        if (!emit_record(c, r, &t->contexts[r->context], gap))
            return cli_out_of_memory("calls");
    }
    return SPOOR_EXIT_OK;
}

/* ---- live: the recorder's ITM output ------------------------------------------------------- */

struct live {
    struct calls *c;
    spoor_calls_itm_pairer pair;
    spoor_calls_stream stream;
    bool failed;
    int rc;
};

/* The trace pump's events: packets paired into records, a gap marked as a loss. */
static bool live_event(void *ctx, const spoor_trace_pump_event *ev)
{
    struct live *l = ctx;
    spoor_call_record r;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET:
        if (spoor_calls_itm_pair(&l->pair, ev->packet, &r)) {
            const spoor_call_context *context;
            spoor_calls_stream_add(&l->stream, &r, &context);
            const char *gap = r.after_gap ? spoor_calls_loss_text(l->pair.gap_why) : NULL;
            l->failed = !emit_record(l->c, &r, context, gap);
        }
        break;
    case SPOOR_TRACE_PUMP_IDLE: ob_flush(&l->c->out); break; /* a live source went quiet */
    case SPOOR_TRACE_PUMP_RECONNECTED:
        spoor_calls_itm_lose(&l->pair, SPOOR_CALLS_LOSS_SOURCE);
        break;
    case SPOOR_TRACE_PUMP_ERROR: l->rc = cli_fail("calls"); break;
    default: break;
    }
    return !l->failed;
}

static int run_live(struct calls *c)
{
    static struct live l;
    memset(&l, 0, sizeof l);
    l.c = c;
    c->live = true;
    spoor_calls_itm_pairer_init(&l.pair, c->port);
    spoor_calls_stream_init(&l.stream);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.types = (1u << SPOOR_ITM_SW) | (1u << SPOOR_ITM_OVERFLOW) | (1u << SPOOR_ITM_ERROR);
    cfg.tpiu = c->tpiu;
    cfg.tpiu_id = (int)c->tpiu_id;
    spoor_trace_pump *pump = spoor_trace_pump_open(c->itm_spec, 0, &cfg, live_event, &l);
    if (!pump)
        return cli_fail("calls");
    spoor_trace_pump_run(pump);
    spoor_trace_pump_free(pump);
    if (l.failed)
        return cli_out_of_memory("calls");
    if (l.rc == SPOOR_EXIT_OK && l.pair.loss != SPOOR_CALLS_LOSS_NONE && !c->json)
        cli_note("calls", "%s: records lost at the end of the stream (%s)", c->itm_spec,
                 spoor_calls_loss_text(l.pair.loss));
    if (l.rc == SPOOR_EXIT_OK && l.pair.other_ports >= 16 &&
        l.pair.other_ports / 8 > l.pair.records) /* they dominate: not the odd other channel */
        cli_note("calls",
                 "%s: warning: %" PRIu64 " writes on other stimulus ports than %u "
                 "and %u, %" PRIu64 " records: is --port right?",
                 c->itm_spec, l.pair.other_ports, c->port, c->port + 1, l.pair.records);
    if (l.rc == SPOOR_EXIT_OK && l.pair.page_unknown)
        cli_warn_input(
            "calls",
            "%s: %" PRIu64 " writes on ports %u and %u came after a gap in the "
            "stream before any sync or page packet: their stimulus port page is unknown, "
            "taken as the one before the gap",
            c->itm_spec, l.pair.page_unknown, c->port, c->port + 1);
    return l.rc;
}

/* ---- input ---------------------------------------------------------------------------------- */

/* Reads the ring from a dump, RAM images or a GDB server and prints it. */
static int run_ring(struct calls *c, target_input *in, char **args, int nargs)
{
    in->src.memory_only = true; /* the ring needs no registers */
    spoor_snapshot *snap = target_input_open("calls", in, args, nargs, c->elf);
    if (!snap)
        return SPOOR_EXIT_USAGE;
    cli_warn_build_id("calls", snap->dump, c->elf);
    int rc =
        spoor_calls_read(c->elf, spoor_mem_reader, snap->mem, snap->input, &c->state, &c->trace)
            ? print_ring(c, snap)
            : cli_fail("calls");
    spoor_call_trace_free(&c->trace);
    spoor_snapshot_close(snap);
    return rc;
}

int cmd_calls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"elf", required_argument, 0, 'e'},
        {"json", no_argument, 0, 'j'},
        {"stats", no_argument, 0, 's'},
        {"chrome", required_argument, 0, OPT_CHROME},
        {"folded", no_argument, 0, OPT_FOLDED},
        {"itm", required_argument, 0, OPT_ITM},
        {"port", required_argument, 0, OPT_PORT},
        {"tpiu", optional_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        TARGET_INPUT_LONG_OPTIONS,
        {0, 0, 0, 0},
    };
    static struct calls c;
    memset(&c, 0, sizeof c);
    c.tpiu_id = 1;
    static target_input in;
    memset(&in, 0, sizeof in);
    int opt, err;
    uint32_t v;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "e:jst::h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': c.elf_path = optarg; break;
        case 'j': c.json = true; break;
        case 's': c.stats = true; break;
        case OPT_CHROME: c.chrome_path = optarg; break;
        case OPT_FOLDED: c.folded = true; break;
        case OPT_ITM: c.itm_spec = optarg; break;
        case OPT_PORT:
            if (!cli_parse_u32(optarg, &v) || v > 254)
                return cli_error("calls", "--port %s: a stimulus port is 0..254 (P and P+1)",
                                 optarg);
            c.port = v;
            c.port_given = true;
            break;
        case 't':
            c.tpiu = true;
            if (optarg) {
                if (!cli_parse_u32(optarg, &v) || v < 1 || v > 111)
                    return cli_error("calls", "--tpiu=%s: an ID is 1..111", optarg);
                c.tpiu_id = v;
            }
            break;
        TARGET_INPUT_CASES:
            if ((err = target_input_option("calls", &in, opt, optarg)))
                return err;
            break;
        case 'h': fputs(calls_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("calls", argv);
        }
    }
    if (c.json + c.folded + c.stats > 1)
        return cli_error("calls", "give at most one of --json, --folded, --stats");
    int nargs = argc - optind;
    if (c.itm_spec && (nargs || in.src.nmems || in.src.regs_path || in.src.gdb))
        return cli_error("calls", "--itm reads records from ITM: no DUMP, --mem, --regs or --gdb");
    if (c.itm_spec && !c.port_given)
        return cli_error("calls", "--itm needs --port P (the port given to spoor_calls_itm)");
    if (!c.itm_spec && (c.port_given || c.tpiu))
        return cli_error("calls", "--port and --tpiu go with --itm SOURCE");
    c.elf = target_input_elf("calls", c.elf_path, argv + optind, argc - optind);
    if (!c.elf)
        return SPOOR_EXIT_USAGE;
    c.v.elf = c.elf;
    ob_init(&c.out, 1);
    json_init(&c.jout, &c.out);
    spoor_call_stack_init(&c.stack, SPOOR_CALL_STACK_DEFAULT_LIMIT, SPOOR_CALL_STACK_COUNT,
                          on_stack_event, &c);
    int rc = c.chrome_path ? chrome_begin(&c) : SPOOR_EXIT_OK;
    if (rc == SPOOR_EXIT_OK)
        rc = c.itm_spec ? run_live(&c) : run_ring(&c, &in, argv + optind, nargs);
    if (rc == SPOOR_EXIT_OK)
        rc = emit_end(&c);
    else /* no trace: no file */
        chrome_trace_discard(&c.chrome);
    if (!ob_flush(&c.out) && rc == SPOOR_EXIT_OK)
        rc = cli_error("calls", "write to standard output failed");
    spoor_call_stack_free(&c.stack);
    spoor_elf_close(c.elf);
    return rc;
}
