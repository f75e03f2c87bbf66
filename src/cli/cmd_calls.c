/* spoor calls: the function-call recorder's ring (target/include/spoor/calls.h), read from a
 * crash dump, RAM images or a live target, as a call tree with names from the ELF. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_trace.h"
#include "cli.h"
#include "json_out.h"
#include "outbuf.h"
#include "spoor/calls_decode.h"
#include "spoor/elf.h"
#include "spoor/itm.h"
#include "spoor/memory.h"
#include "spoor/snapshot.h"
#include "spoor/tpiu.h"
#include "spoor/trace_source.h"
#include "target_input.h"

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

#define MAX_STACK 256

struct frame {
    uint32_t fn;
    uint64_t start, children;
};

/* Output state of one context: its label, its call stack (stats, folded) and the chrome
 * events open in it. Kept while the context can still have records. */
struct ctx_state {
    unsigned index;
    const char *label;
    char id_label[24]; /* "ctx N" */
    bool handler, named;
    struct frame *frames; /* MAX_STACK, for --stats and --folded */
    size_t depth;         /* frames pushed (may exceed MAX_STACK) */
    uint64_t chrome_open; /* B events without their E */
};

struct fn_stats {
    uint32_t fn;
    uint64_t calls, inclusive, exclusive;
};

struct calls {
    const char *elf_path, *chrome_path, *itm_spec;
    bool json, folded, stats, tpiu, port_given;
    unsigned port, tpiu_id;
    spoor_elf *elf;
    spoor_calls_info state;
    spoor_call_trace trace;
    bool has_time, has_context;
    /* text: the context column (many), its width */
    bool many, live;
    int label_width;
    struct ctx_state *ctxs;
    size_t nctx, ctx_cap;
    struct fn_stats *tab;
    size_t ntab, tab_cap;
    size_t records;
    unsigned contexts_seen; /* highest context index + 1 */
    uint64_t last_ts;
    chrome_trace chrome;
    outbuf out;
};

/* ---- names ----------------------------------------------------------------------------- */

/* "name" or "name:0xOFFS" for addr (Thumb bit cleared), NULL when no symbol covers it. */
static const char *name_at(const spoor_elf *elf, uint32_t addr, uint32_t *offset)
{
    const char *name;
    uint32_t start, size;
    if (!spoor_elf_function(elf, addr, &name, &start, &size) || !name)
        return NULL;
    *offset = addr - start;
    return name;
}

static void put_function(outbuf *ob, const spoor_elf *elf, uint32_t fn)
{
    uint32_t off;
    const char *name = name_at(elf, fn, &off);
    if (!name)
        ob_str(ob, "???");
    else if (off)
        ob_printf(ob, "%s:0x%04" PRIX32, name, off);
    else
        ob_str(ob, name);
}

static void put_site(outbuf *ob, const spoor_elf *elf, uint32_t site)
{
    const char *exc = spoor_calls_exc_return_text(site);
    if (exc) {
        ob_printf(ob, "<exception from %s>", exc);
        return;
    }
    uint32_t off;
    const char *name = name_at(elf, site, &off);
    if (name)
        ob_printf(ob, "%s:0x%04" PRIX32, name, off);
    else
        ob_str(ob, "???");
}

/* The string for JSON: "name" or "name+0xOFF", caller-owned buffer. */
static const char *json_name(const spoor_elf *elf, uint32_t addr, bool site, char *buf, size_t len)
{
    const char *exc = site ? spoor_calls_exc_return_text(addr) : NULL;
    if (exc) {
        snprintf(buf, len, "<exception from %s>", exc);
        return buf;
    }
    uint32_t off;
    const char *name = name_at(elf, addr, &off);
    if (!name)
        return NULL;
    if (!off)
        return name;
    snprintf(buf, len, "%s+0x%" PRIx32, name, off);
    return buf;
}

/* ---- contexts ----------------------------------------------------------------------------- */

/* The label of a context: "thread", the handler's name or "ctx N". id_buf holds "ctx N". */
static const char *context_label(const struct calls *c, const spoor_call_context *ctx, char *id_buf,
                                 size_t id_len)
{
    if (!ctx->handler)
        return "thread";
    if (c->has_context) {
        snprintf(id_buf, id_len, "ctx %" PRIu32, ctx->id);
        return id_buf;
    }
    uint32_t off;
    const char *label = name_at(c->elf, ctx->id, &off);
    return label ? label : "handler";
}

static const char *ctx_name(const struct ctx_state *s)
{
    return s->label ? s->label : s->id_label;
}

/* Room for one more element in *items (count used of *cap, elem bytes each). */
static bool room_for_one(void **items, size_t count, size_t *cap, size_t elem, size_t first)
{
    if (count < *cap)
        return true;
    size_t n = *cap ? *cap * 2 : first;
    void *t = realloc(*items, n * elem);
    if (!t)
        return false;
    *items = t;
    *cap = n;
    return true;
}

/* The output state of context index, created on its first record; NULL when out of memory. */
static struct ctx_state *ctx_state_of(struct calls *c, unsigned index,
                                      const spoor_call_context *ctx)
{
    for (size_t i = c->nctx; i-- > 0;) /* few contexts are live at a time */
        if (c->ctxs[i].index == index)
            return &c->ctxs[i];
    if (!room_for_one((void **)&c->ctxs, c->nctx, &c->ctx_cap, sizeof *c->ctxs, 8))
        return NULL;
    struct ctx_state *s = &c->ctxs[c->nctx++];
    memset(s, 0, sizeof *s);
    s->index = index;
    s->handler = ctx->handler;
    const char *label = context_label(c, ctx, s->id_label, sizeof s->id_label);
    s->label = label == s->id_label ? NULL : label; /* id_label moves with the array */
    return s;
}

/* The ring's contexts are all known: the text column is as wide as the widest label. */
static void measure_labels(struct calls *c)
{
    const spoor_call_trace *t = &c->trace;
    c->many = t->context_count > 1;
    for (size_t i = 0; i < t->context_count; i++) {
        char buf[24];
        int w = (int)strlen(context_label(c, &t->contexts[i], buf, sizeof buf));
        if (w > c->label_width)
            c->label_width = w;
    }
}

/* ---- text ---------------------------------------------------------------------------------- */

/* Live records: the context column appears with the first handler record, this wide. */
#define LIVE_LABEL_WIDTH 15

static void text_record(struct calls *c, const spoor_call_record *r, const struct ctx_state *s)
{
    outbuf *ob = &c->out;
    if (c->many)
        ob_printf(ob, "%-*s| ", c->label_width, ctx_name(s));
    for (int d = 0; d < r->depth; d++)
        ob_char(ob, ' ');
    bool enter = r->kind == SPOOR_CALL_ENTER;
    ob_printf(ob, "%c %08" PRIX32 "%s%08" PRIX32 "  ", enter ? '{' : '}', r->site,
              enter ? "->" : "<-", r->function);
    put_site(ob, c->elf, r->site);
    ob_str(ob, enter ? "->" : "<-");
    put_function(ob, c->elf, r->function);
    if (c->has_time)
        ob_printf(ob, "  @%" PRIu64, r->time_ticks);
    ob_char(ob, '\n');
}

/* ---- JSON lines ---------------------------------------------------------------------------- */

static void json_record(struct calls *c, const spoor_call_record *r, const struct ctx_state *s)
{
    char fbuf[512], sbuf[512];
    json_out j;
    json_init(&j, &c->out);
    json_object_begin(&j, NULL);
    json_string(&j, "kind", r->kind == SPOOR_CALL_ENTER ? "enter" : "exit");
    json_hex32(&j, "fn", r->function);
    json_hex32(&j, "site", r->site);
    json_string(&j, "function", json_name(c->elf, r->function, false, fbuf, sizeof fbuf));
    json_string(&j, "caller", json_name(c->elf, r->site, true, sbuf, sizeof sbuf));
    json_int(&j, "depth", r->depth);
    if (c->has_time)
        json_uint(&j, "time", r->time_ticks);
    if (c->has_context)
        json_uint(&j, "context", r->context_id);
    else if (s->handler)
        json_string(&j, "handler", ctx_name(s));
    if (r->after_gap)
        json_bool(&j, "after_gap", true);
    json_object_end(&j);
    json_finish(&j);
}

/* ---- call stacks: folded, stats ------------------------------------------------------------ */

static int fn_stats_cmp(const void *a, const void *b)
{
    const struct fn_stats *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static struct fn_stats *stats_of(struct calls *c, uint32_t fn)
{
    for (size_t i = 0; i < c->ntab; i++) /* few distinct functions in a trace: linear is fine */
        if (c->tab[i].fn == fn)
            return &c->tab[i];
    if (!room_for_one((void **)&c->tab, c->ntab, &c->tab_cap, sizeof *c->tab, 64))
        return NULL;
    c->tab[c->ntab] = (struct fn_stats){.fn = fn};
    return &c->tab[c->ntab++];
}

static void put_name_plain(outbuf *ob, const spoor_elf *elf, uint32_t fn)
{
    uint32_t off;
    const char *name = name_at(elf, fn, &off);
    if (name)
        ob_str(ob, name);
    else
        ob_printf(ob, "0x%08" PRIx32, fn);
}

static void put_folded_stack(struct calls *c, const struct ctx_state *s, size_t depth)
{
    if (s->handler && c->many) {
        ob_str(&c->out, ctx_name(s));
        ob_char(&c->out, ';');
    }
    for (size_t d = 0; d < depth && d < MAX_STACK; d++) {
        if (d)
            ob_char(&c->out, ';');
        put_name_plain(&c->out, c->elf, s->frames[d].fn);
    }
}

/* One record onto its context's call stack: an exit ends a call (inclusive and exclusive time,
 * with timestamps), an enter counts one. */
static bool stack_record(struct calls *c, const spoor_call_record *r, struct ctx_state *s)
{
    if (!s->frames && !(s->frames = calloc(MAX_STACK, sizeof *s->frames)))
        return false;
    if (r->kind == SPOOR_CALL_ENTER) {
        struct fn_stats *f = stats_of(c, r->function);
        if (!f)
            return false;
        f->calls++;
        if (s->depth < MAX_STACK)
            s->frames[s->depth] = (struct frame){r->function, r->time_ticks, 0};
        s->depth++;
        if (c->folded && !c->has_time) { /* weight: one per call */
            put_folded_stack(c, s, s->depth);
            ob_str(&c->out, " 1\n");
        }
        return true;
    }
    if (s->depth == 0) /* the trace starts inside this call: its entry is lost */
        return true;
    s->depth--;
    if (s->depth >= MAX_STACK)
        return true;
    struct frame *fr = &s->frames[s->depth];
    uint64_t incl = r->time_ticks - fr->start, excl = incl - fr->children;
    if (s->depth > 0)
        s->frames[s->depth - 1].children += incl;
    struct fn_stats *f = stats_of(c, fr->fn);
    if (!f)
        return false;
    f->inclusive += incl;
    f->exclusive += excl;
    if (c->folded && c->has_time) { /* weight: exclusive time */
        put_folded_stack(c, s, s->depth + 1);
        ob_printf(&c->out, " %" PRIu64 "\n", excl);
    }
    return true;
}

static void print_stats(struct calls *c)
{
    qsort(c->tab, c->ntab, sizeof *c->tab, fn_stats_cmp);
    ob_printf(&c->out, "%10s %14s %14s  %s\n", "calls", "inclusive", "exclusive", "function");
    for (size_t i = 0; i < c->ntab; i++) {
        const struct fn_stats *f = &c->tab[i];
        if (c->has_time)
            ob_printf(&c->out, "%10" PRIu64 " %14" PRIu64 " %14" PRIu64 "  ", f->calls,
                      f->inclusive, f->exclusive);
        else
            ob_printf(&c->out, "%10" PRIu64 " %14s %14s  ", f->calls, "-", "-");
        put_name_plain(&c->out, c->elf, f->fn);
        ob_char(&c->out, '\n');
    }
    ob_printf(&c->out, "%zu records, %u contexts%s\n", c->records, c->contexts_seen,
              c->has_time ? ", times in timestamp ticks" : "");
}

/* ---- Chrome trace-event JSON ---------------------------------------------------------------- */

static int chrome_begin(struct calls *c)
{
    if (!chrome_trace_open(&c->chrome, c->chrome_path))
        return cli_error("calls", "%s: cannot create: %s", c->chrome_path, strerror(errno));
    return SPOOR_EXIT_OK;
}

/* E events for the calls still open in s (their exits are not in the trace), at the last ts. */
static void chrome_close(struct calls *c, struct ctx_state *s)
{
    for (; s->chrome_open > 0; s->chrome_open--)
        chrome_trace_event(&c->chrome, "(no exit recorded)", "E", c->last_ts, 1, s->index);
}

/* B for an enter, E for an exit whose B was written: every track nests. The first event of a
 * context names its track (thread_name metadata). */
static void chrome_record(struct calls *c, const spoor_call_record *r, struct ctx_state *s,
                          size_t position)
{
    if (!s->named) {
        s->named = true;
        chrome_trace_track(&c->chrome, 1, s->index, ctx_name(s));
    }
    /* ts: timestamp ticks when recorded, else the record's position */
    c->last_ts = c->has_time ? r->time_ticks : position;
    if (r->kind == SPOOR_CALL_EXIT && s->chrome_open == 0)
        return; /* its B is not in the trace */
    char buf[512], hex[16];
    const char *name = json_name(c->elf, r->function, false, buf, sizeof buf);
    if (!name) {
        snprintf(hex, sizeof hex, "0x%08" PRIx32, r->function);
        name = hex;
    }
    if (r->kind == SPOOR_CALL_ENTER)
        s->chrome_open++;
    else
        s->chrome_open--;
    chrome_trace_event(&c->chrome, name, r->kind == SPOOR_CALL_ENTER ? "B" : "E", c->last_ts, 1,
                       s->index);
}

static int chrome_end(struct calls *c)
{
    for (size_t i = 0; i < c->nctx; i++)
        chrome_close(c, &c->ctxs[i]);
    if (!chrome_trace_close(&c->chrome))
        return cli_error("calls", "%s: write failed", c->chrome_path);
    return SPOOR_EXIT_OK;
}

/* ---- one record to every output -------------------------------------------------------------- */

/* A handler invocation found from EXC_RETURN ends with its exit: its state goes. */
static void ctx_state_end(struct calls *c, struct ctx_state *s)
{
    if (c->chrome.ob)
        chrome_close(c, s);
    free(s->frames);
    *s = c->ctxs[--c->nctx];
}

/* gap: why records before this one are lost (text marker), NULL for none. */
static bool emit_record(struct calls *c, const spoor_call_record *r, const spoor_call_context *ctx,
                        const char *gap)
{
    struct ctx_state *s = ctx_state_of(c, r->context, ctx);
    if (!s)
        return false;
    if (c->live && s->handler && !c->many) { /* the first handler record */
        c->many = true;
        c->label_width = LIVE_LABEL_WIDTH;
    }
    if (r->context >= c->contexts_seen)
        c->contexts_seen = r->context + 1;
    if (c->chrome_path)
        chrome_record(c, r, s, c->records);
    if (c->json)
        json_record(c, r, s);
    else if (c->folded || c->stats) {
        if (!stack_record(c, r, s))
            return false;
    } else if (!c->chrome_path) {
        if (gap)
            ob_printf(&c->out, "--- records lost here (%s) ---\n", gap);
        text_record(c, r, s);
    }
    c->records++;
    if (s->handler && !c->has_context && r->kind == SPOOR_CALL_EXIT &&
        spoor_cortexm_is_exc_return(r->site))
        ctx_state_end(c, s);
    return true;
}

static int emit_end(struct calls *c)
{
    int rc = SPOOR_EXIT_OK;
    if (c->stats)
        print_stats(c);
    if (c->chrome.ob)
        rc = chrome_end(c);
    for (size_t i = 0; i < c->nctx; i++)
        free(c->ctxs[i].frames);
    free(c->ctxs);
    free(c->tab);
    c->ctxs = NULL;
    c->tab = NULL;
    c->nctx = 0;
    return rc;
}

/* The decoded ring to the outputs, oldest first. */
static int print_ring(struct calls *c)
{
    const spoor_call_trace *t = &c->trace;
    c->has_time = t->has_time;
    c->has_context = t->has_context;
    measure_labels(c);
    if (t->wrapped && !c->json && !c->folded && !c->stats && !c->chrome_path)
        ob_printf(&c->out,
                  "--- ring wrapped: older records were overwritten (%" PRIu32
                  " records of %u bytes) ---\n",
                  c->state.capacity, c->state.record_size);
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        const char *gap = r->after_gap && i > 0 ? "a slot was claimed but never written" : NULL;
        if (!emit_record(c, r, &t->contexts[r->context], gap))
            return cli_error("calls", "out of memory");
    }
    return SPOOR_EXIT_OK;
}

/* ---- live: the recorder's ITM output ------------------------------------------------------- */

struct live {
    struct calls *c;
    spoor_itm_decoder dec;
    spoor_calls_itm_pairer pair;
    spoor_calls_stream stream;
    bool failed;
};

/* Takes every packet the ITM decoder has released. */
static void live_drain(struct live *l)
{
    const spoor_itm_packet *pkt;
    spoor_call_record r;
    while (!l->failed && (pkt = spoor_itm_next_ref(&l->dec)) != NULL) {
        if (!spoor_calls_itm_pair(&l->pair, pkt, &r))
            continue;
        const spoor_call_context *ctx;
        spoor_calls_stream_add(&l->stream, &r, &ctx);
        const char *gap = r.after_gap ? spoor_calls_loss_text(l->pair.gap_why) : NULL;
        if (!emit_record(l->c, &r, ctx, gap))
            l->failed = true;
    }
}

static void live_feed(struct live *l, const uint8_t *data, size_t len)
{
    while (len > 0 && !l->failed) {
        size_t n = spoor_itm_feed(&l->dec, data, len);
        data += n;
        len -= n;
        live_drain(l);
    }
}

static void live_tpiu_sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    struct live *l = ctx;
    if (id == l->c->tpiu_id)
        live_feed(l, data, len);
}

static int run_live(struct calls *c)
{
    static struct live l;
    static spoor_tpiu_deframer tpiu;
    memset(&l, 0, sizeof l);
    l.c = c;
    c->live = true;
    spoor_itm_init(&l.dec, false);
    spoor_itm_select(&l.dec,
                     (1u << SPOOR_ITM_SW) | (1u << SPOOR_ITM_OVERFLOW) | (1u << SPOOR_ITM_ERROR));
    spoor_calls_itm_pairer_init(&l.pair, c->port);
    spoor_calls_stream_init(&l.stream);
    if (c->tpiu)
        spoor_tpiu_init(&tpiu, -1, live_tpiu_sink, &l);
    spoor_trace_source *src = spoor_trace_source_open(c->itm_spec, 0);
    if (!src)
        return cli_error("calls", "%s", spoor_last_error());
    int rc = SPOOR_EXIT_OK;
    for (;;) {
        const uint8_t *data;
        ssize_t n = spoor_trace_source_receive(src, &data, 100);
        if (n > 0) {
            if (c->tpiu)
                spoor_tpiu_feed(&tpiu, data, (size_t)n);
            else
                live_feed(&l, data, (size_t)n);
        } else if (n == SPOOR_TRACE_IDLE) { /* a live source went quiet: show what came */
            spoor_itm_flush(&l.dec);
            live_drain(&l);
            ob_flush(&c->out);
        } else if (n == SPOOR_TRACE_RECONNECTED) {
            spoor_itm_finish(&l.dec);
            live_drain(&l);
            spoor_calls_itm_lose(&l.pair, SPOOR_CALLS_LOSS_SOURCE);
        } else if (n == SPOOR_TRACE_EOF) {
            break;
        } else {
            rc = cli_error("calls", "%s", spoor_last_error());
            break;
        }
        if (l.failed)
            break;
    }
    if (c->tpiu)
        spoor_tpiu_finish(&tpiu);
    spoor_itm_finish(&l.dec);
    live_drain(&l);
    spoor_trace_source_close(src);
    if (l.failed)
        return cli_error("calls", "out of memory");
    if (rc == SPOOR_EXIT_OK && l.pair.loss != SPOOR_CALLS_LOSS_NONE && !c->json)
        fprintf(stderr, "spoor calls: %s: records lost at the end of the stream (%s)\n",
                c->itm_spec, spoor_calls_loss_text(l.pair.loss));
    return rc;
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
            ? print_ring(c)
            : cli_error("calls", "%s", spoor_last_error());
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
    int opt;
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
        case 'h': fputs(calls_usage, stdout); return SPOOR_EXIT_OK;
        case TARGET_OPT_REGS:
        case TARGET_OPT_MEM:
        case TARGET_OPT_GDB:
        case TARGET_OPT_ELF_DIR: {
            int rc = target_input_option("calls", &in, opt, optarg);
            if (rc)
                return rc;
            break;
        }
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
    ob_init(&c.out, 1);
    int rc = c.chrome_path ? chrome_begin(&c) : SPOOR_EXIT_OK;
    if (rc == SPOOR_EXIT_OK)
        rc = c.itm_spec ? run_live(&c) : run_ring(&c, &in, argv + optind, nargs);
    if (rc == SPOOR_EXIT_OK)
        rc = emit_end(&c);
    else /* no trace: no file */
        chrome_trace_discard(&c.chrome);
    if (!ob_flush(&c.out) && rc == SPOOR_EXIT_OK)
        rc = cli_error("calls", "write to standard output failed");
    for (size_t i = 0; i < c.nctx; i++)
        free(c.ctxs[i].frames);
    free(c.ctxs);
    free(c.tab);
    spoor_elf_close(c.elf);
    return rc;
}
