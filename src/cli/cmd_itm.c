/* spoor itm: decodes an ITM/DWT trace stream (SWO or TPIU-formatted) from a file, standard
 * input, a TCP server or a serial port. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json_out.h"
#include "outbuf.h"
#include "spoor/elf.h"
#include "spoor/itm.h"
#include "spoor/tpiu.h"
#include "spoor/trace_source.h"

static const char itm_usage[] =
    "usage: spoor itm [OPTIONS] [SOURCE]\n"
    "Decodes ITM/DWT packets (software channels, data trace, exception trace, PC samples,\n"
    "timestamps). SOURCE is a file, - (standard input, the default), tcp:HOST:PORT (e.g.\n"
    "OpenOCD's SWO port) or serial:/dev/ttyX:BAUD.\n\n"
    "  -j, --json            one JSON object per packet (fields: see docs/itm.md)\n"
    "  -c, --channel P,FMT   print software port P as text with printf-like FMT: one %c %d\n"
    "                        %i %u %x or %X with flags (-+ 0#), width and .precision (each at\n"
    "                        most 64); \\n \\t \\r \\e escapes; repeatable\n"
    "  -s, --stats           counts per packet type, bytes, errors and time span\n"
    "  -t, --tpiu[=ID]       the stream is TPIU-formatted: deframe it first and decode every\n"
    "                        source ID (or only ID)\n"
    "      --align=N         TPIU frames start at byte offset N (0-15) instead of finding it\n"
    "  -e, --elf FW.elf      name the function of PC values in the listing\n"
    "      --wait-sync       ignore bytes before the first ITM synchronization packet\n"
    "      --reconnect=SECS  keep reconnecting to a TCP source that went away (default 10,\n"
    "                        0: stop at the first disconnection)\n"
    "  -h, --help            this text\n\n"
    "Without --json or -c, prints one line per packet: OFFSET TIME TYPE FIELDS. TIME is the\n"
    "accumulated local timestamp in cycles; a '~' marks a packet no later timestamp dated.\n";

#define MAX_PORTS 256
#define MAX_IDS 128

/* A -c format, compiled when the option is read: the text around the one conversion (escapes
 * and %% resolved) and the conversion as a printf spec whose width and precision are bounded. */
struct channel {
    bool on;
    bool raw;          /* the format is exactly %c: the bytes as they are */
    char conv;         /* c d u x X (%i is %d), or 0: the format is text only */
    char spec[16];     /* "%" flags width .precision conv, for d u x X */
    char *before;      /* the text before the conversion (all of it when there is none) */
    const char *after; /* the text after it: points into the before allocation */
};

#define CHANNEL_MAX_WIDTH 64 /* for the width and for the precision */

struct stream {
    spoor_itm_decoder dec;
    bool used;
};

struct itm_cli {
    bool json, stats, tpiu, wait_sync, listing;
    int tpiu_id; /* -1: every ID */
    int align;   /* -1: find it */
    struct channel ch[MAX_PORTS];
    bool any_channel;
    /* -c alone and every format is %c: the decoder gathers the ports' bytes (text_ports) and
     * they go straight to the output buffer */
    bool text_only;
    uint32_t text_ports[MAX_PORTS / 32];
    spoor_elf *elf;
    struct stream *streams[MAX_IDS]; /* [0] is the plain ITM stream */
    FILE *out;                       /* text output */
    outbuf ob;                       /* JSON and %c output (on the same descriptor) */
    json_out jout;                   /* JSON writer onto ob */
};

/* Writes out what either output holds; false once a write has failed. */
static bool flush_output(struct itm_cli *c)
{
    bool ok = ob_flush(&c->ob);
    return fflush(c->out) == 0 && !ferror(c->out) && ok;
}

static bool output_failed(struct itm_cli *c)
{
    return c->ob.failed || ferror(c->out);
}

/* ---- software channel text ----------------------------------------------------------------- */

static char *resolve_escapes(const char *s)
{
    char *r = malloc(strlen(s) + 1), *w = r;
    if (!r)
        return NULL;
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            switch (*s) {
            case 'n': *w++ = '\n'; break;
            case 't': *w++ = '\t'; break;
            case 'r': *w++ = '\r'; break;
            case 'e': *w++ = '\033'; break;
            default: *w++ = *s; break;
            }
        } else {
            *w++ = *s;
        }
    }
    *w = '\0';
    return r;
}

/* Reads a width or precision (decimal digits, at most CHANNEL_MAX_WIDTH) at *p into *out,
 * moving *p past the digits; false when it is larger. */
static bool bounded_number(const char **p, unsigned *out)
{
    unsigned v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = v * 10 + (unsigned)(**p - '0');
        if (v > CHANNEL_MAX_WIDTH)
            return false;
    }
    *out = v;
    return true;
}

/* Compiles the escape-resolved FMT of -c ARG into *ch (which takes fmt); returns 0 or the
 * exit status of the one-line error. FMT is literal text and %% with at most one conversion
 * among c d i u x X: flags "-+ 0#" each at most once ('#' only for x and X), a width and a
 * precision of at most CHANNEL_MAX_WIDTH (none of these for %c). */
static int compile_channel(struct channel *ch, char *fmt, const char *arg)
{
    struct channel n = {.on = true, .before = fmt};
    char *w = fmt; /* the text is rewritten in place: %% becomes %, the conversion a NUL */
    for (const char *p = fmt; *p; p++) {
        if (*p != '%' || p[1] == '%') {
            *w++ = *p;
            p += *p == '%';
            continue;
        }
        if (n.conv)
            return cli_error("itm", "-c %s: FORMAT may hold one conversion, not two", arg);
        char flags[8] = "";
        size_t nflags = 0;
        for (p++; *p && strchr("-+ 0#", *p); p++) {
            if (memchr(flags, *p, nflags))
                return cli_error("itm", "-c %s: flag '%c' given twice", arg, *p);
            flags[nflags++] = *p;
        }
        unsigned width = 0, precision = 0;
        if (!bounded_number(&p, &width))
            return cli_error("itm", "-c %s: a width is at most %d", arg, CHANNEL_MAX_WIDTH);
        bool has_precision = *p == '.';
        if (has_precision) {
            p++;
            if (!bounded_number(&p, &precision))
                return cli_error("itm", "-c %s: a precision is at most %d", arg, CHANNEL_MAX_WIDTH);
        }
        if (!*p || !strchr("cdiuxX", *p))
            return cli_error(
                "itm", "-c %s: FORMAT may hold one %%c %%d %%i %%u %%x or %%X conversion", arg);
        if (*p == 'c' && (nflags || width || has_precision)) /* it writes bytes as they are */
            return cli_error("itm", "-c %s: %%c takes no flags, width or precision", arg);
        if (memchr(flags, '#', nflags) && *p != 'x' && *p != 'X')
            return cli_error("itm", "-c %s: flag '#' is for %%x and %%X only", arg);
        n.conv = *p == 'i' ? 'd' : *p;
        char *e = n.spec + snprintf(n.spec, sizeof n.spec, "%%%s", flags);
        if (width)
            e += snprintf(e, 4, "%u", width);
        if (has_precision)
            e += snprintf(e, 5, ".%u", precision);
        e[0] = n.conv;
        e[1] = '\0';
        *w++ = '\0';
        n.after = w;
    }
    *w = '\0';
    if (!n.conv)
        n.after = w;
    n.raw = n.conv == 'c' && !*n.before && !*n.after;
    free(ch->before);
    *ch = n;
    return 0;
}

static void print_channel(FILE *out, const struct channel *ch, uint32_t value, unsigned size)
{
    fputs(ch->before, out);
    switch (ch->conv) {
    case 'c': /* every byte written to the port, lowest address first */
        for (unsigned i = 0; i < size; i++)
            putc_unlocked((int)(value >> (8 * i) & 0xFF), out);
        break;
    case 'd': {
        int32_t v = size == 1 ? (int8_t)value : size == 2 ? (int16_t)value : (int32_t)value;
        fprintf(out, ch->spec, (int)v);
        break;
    }
    case 0: break;
    default: fprintf(out, ch->spec, (unsigned)value); break;
    }
    fputs(ch->after, out);
}

/* ---- packet output ------------------------------------------------------------------------- */

static const char *action_name(spoor_itm_exception_action a)
{
    return a == SPOOR_ITM_EXC_ENTER ? "enter" : a == SPOOR_ITM_EXC_EXIT ? "exit" : "return";
}

static void print_symbol(struct itm_cli *c, uint32_t pc)
{
    if (!c->elf)
        return;
    spoor_location loc;
    if (spoor_elf_symbolize(c->elf, pc, &loc, 1) == 0 || !loc.function)
        return;
    fprintf(c->out, " %s+0x%x", loc.function, loc.offset);
    if (loc.file)
        fprintf(c->out, " at %s:%u", loc.file, loc.line);
}

static void print_json(struct itm_cli *c, int id, const spoor_itm_packet *p)
{
    json_out *j = &c->jout;
    json_object_begin(j, NULL);
    json_key_string(j, JSON_KEY("type"), spoor_itm_type_name(p->type));
    json_key_uint(j, JSON_KEY("offset"), p->offset);
    json_key_uint(j, JSON_KEY("time"), p->time);
    if (c->tpiu)
        json_key_uint(j, JSON_KEY("stream"), (unsigned)id);
    switch (p->type) {
    case SPOOR_ITM_SYNC:
    case SPOOR_ITM_OVERFLOW:
    case SPOOR_ITM_TYPE_COUNT: break;
    case SPOOR_ITM_TS_LOCAL:
        json_key_uint(j, JSON_KEY("delta"), p->u.ts_local.delta);
        json_key_uint(j, JSON_KEY("tc"), p->u.ts_local.tc);
        break;
    case SPOOR_ITM_TS_GLOBAL1:
        json_key_uint(j, JSON_KEY("value"), p->u.ts_global1.value);
        json_key_bool(j, JSON_KEY("wrap"), p->u.ts_global1.wrap);
        json_key_bool(j, JSON_KEY("clkch"), p->u.ts_global1.clkch);
        break;
    case SPOOR_ITM_TS_GLOBAL2: json_key_uint(j, JSON_KEY("value"), p->u.ts_global2.value); break;
    case SPOOR_ITM_EXTENSION:
        json_key_uint(j, JSON_KEY("page"), p->u.ext.page);
        if (p->u.ext.hw)
            json_key_bool(j, JSON_KEY("hw"), true);
        break;
    case SPOOR_ITM_SW:
        json_key_uint(j, JSON_KEY("port"), p->u.sw.port);
        json_key_uint(j, JSON_KEY("size"), p->u.sw.size);
        json_key_uint(j, JSON_KEY("value"), p->u.sw.value);
        break;
    case SPOOR_ITM_EVENT_COUNTER: {
        uint8_t b = p->u.event_counter.bits;
        json_key_uint(j, JSON_KEY("cpi"), b & 1);
        json_key_uint(j, JSON_KEY("exc"), b >> 1 & 1);
        json_key_uint(j, JSON_KEY("sleep"), b >> 2 & 1);
        json_key_uint(j, JSON_KEY("lsu"), b >> 3 & 1);
        json_key_uint(j, JSON_KEY("fold"), b >> 4 & 1);
        json_key_uint(j, JSON_KEY("cyc"), b >> 5 & 1);
        break;
    }
    case SPOOR_ITM_EXCEPTION:
        json_key_uint(j, JSON_KEY("number"), p->u.exception.number);
        json_key_string(j, JSON_KEY("action"), action_name(p->u.exception.action));
        break;
    case SPOOR_ITM_PC_SAMPLE:
        if (p->u.pc_sample.sleep)
            json_key_null(j, JSON_KEY("pc"));
        else
            json_key_uint(j, JSON_KEY("pc"), p->u.pc_sample.pc);
        break;
    case SPOOR_ITM_DWT_PC:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_pc.comparator);
        json_key_uint(j, JSON_KEY("pc"), p->u.dwt_pc.pc);
        break;
    case SPOOR_ITM_DWT_MATCH:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_match.comparator);
        break;
    case SPOOR_ITM_DWT_ADDR:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_addr.comparator);
        json_key_uint(j, JSON_KEY("addr_offset"), p->u.dwt_addr.offset);
        break;
    case SPOOR_ITM_DWT_DATA:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_data.comparator);
        json_key_bool(j, JSON_KEY("write"), p->u.dwt_data.write);
        json_key_uint(j, JSON_KEY("size"), p->u.dwt_data.size);
        json_key_uint(j, JSON_KEY("value"), p->u.dwt_data.value);
        break;
    case SPOOR_ITM_ERROR: {
        char why[160];
        snprintf(why, sizeof why, "%s (detected at %" PRIu64 ")",
                 spoor_itm_error_text(p->u.error.why), p->u.error.detected_at);
        json_key_uint(j, JSON_KEY("bytes_lost"), p->u.error.bytes_lost);
        json_key_string(j, JSON_KEY("why"), why);
        break;
    }
    }
    json_object_end(j);
    json_finish(j);
}

static void print_text(struct itm_cli *c, int id, const spoor_itm_packet *p)
{
    FILE *o = c->out;
    if (c->tpiu)
        fprintf(o, "[%d] ", id);
    fprintf(o, "%8" PRIu64 " %c%-11" PRIu64 " %-13s", p->offset, p->time_exact ? ' ' : '~', p->time,
            spoor_itm_type_name(p->type));
    switch (p->type) {
    case SPOOR_ITM_SYNC:
    case SPOOR_ITM_OVERFLOW:
    case SPOOR_ITM_TYPE_COUNT: break;
    case SPOOR_ITM_TS_LOCAL: fprintf(o, " +%u tc=%u", p->u.ts_local.delta, p->u.ts_local.tc); break;
    case SPOOR_ITM_TS_GLOBAL1:
        fprintf(o, " %" PRIu64 "%s%s", p->u.ts_global1.value, p->u.ts_global1.wrap ? " wrap" : "",
                p->u.ts_global1.clkch ? " clkch" : "");
        break;
    case SPOOR_ITM_TS_GLOBAL2: fprintf(o, " %" PRIu64, p->u.ts_global2.value); break;
    case SPOOR_ITM_EXTENSION:
        fprintf(o, " page %u%s", p->u.ext.page, p->u.ext.hw ? " (hw)" : "");
        break;
    case SPOOR_ITM_SW:
        fprintf(o, " port %u: 0x%0*x", p->u.sw.port, 2 * p->u.sw.size, p->u.sw.value);
        break;
    case SPOOR_ITM_EVENT_COUNTER: {
        static const char *const names[] = {"cpi", "exc", "sleep", "lsu", "fold", "cyc"};
        for (unsigned i = 0; i < 6; i++)
            if (p->u.event_counter.bits >> i & 1)
                fprintf(o, " %s", names[i]);
        break;
    }
    case SPOOR_ITM_EXCEPTION:
        fprintf(o, " %s %u", action_name(p->u.exception.action), p->u.exception.number);
        break;
    case SPOOR_ITM_PC_SAMPLE:
        if (p->u.pc_sample.sleep) {
            fputs(" sleep", o);
        } else {
            fprintf(o, " 0x%08x", p->u.pc_sample.pc);
            print_symbol(c, p->u.pc_sample.pc);
        }
        break;
    case SPOOR_ITM_DWT_PC:
        fprintf(o, " cmp %u pc 0x%08x", p->u.dwt_pc.comparator, p->u.dwt_pc.pc);
        print_symbol(c, p->u.dwt_pc.pc);
        break;
    case SPOOR_ITM_DWT_MATCH: fprintf(o, " cmp %u", p->u.dwt_match.comparator); break;
    case SPOOR_ITM_DWT_ADDR:
        fprintf(o, " cmp %u offset 0x%04x", p->u.dwt_addr.comparator, p->u.dwt_addr.offset);
        break;
    case SPOOR_ITM_DWT_DATA:
        fprintf(o, " cmp %u %s 0x%0*x", p->u.dwt_data.comparator,
                p->u.dwt_data.write ? "write" : "read", 2 * p->u.dwt_data.size,
                p->u.dwt_data.value);
        break;
    case SPOOR_ITM_ERROR:
        fprintf(o, " %" PRIu64 " bytes lost: %s (detected at %" PRIu64 ")", p->u.error.bytes_lost,
                spoor_itm_error_text(p->u.error.why), p->u.error.detected_at);
        break;
    }
    putc_unlocked('\n', o);
}

/* Prints the released packets. The decoder only queues the types the output shows (see
 * stream_for), and keeps the time span itself. */
static void drain(struct itm_cli *c, int id, struct stream *s)
{
    const spoor_itm_packet *p;
    if (!c->json && !c->any_channel && !c->listing) /* --stats alone: counting only */
        return;
    if (c->text_only) { /* the bytes of the %c ports, gathered by the decoder */
        const uint8_t *bytes;
        size_t n;
        while ((n = spoor_itm_next_text(&s->dec, &bytes)) != 0)
            ob_write(&c->ob, (const char *)bytes, n);
        return;
    }
    if (c->any_channel && !c->json) { /* software channels as text: only SW packets queued */
        while ((p = spoor_itm_next_ref(&s->dec)) != NULL) {
            if (p->type != SPOOR_ITM_SW || p->u.sw.port >= MAX_PORTS)
                continue;
            const struct channel *ch = &c->ch[p->u.sw.port];
            if (ch->on)
                print_channel(c->out, ch, p->u.sw.value, p->u.sw.size);
        }
        return;
    }
    while ((p = spoor_itm_next_ref(&s->dec)) != NULL) {
        if (c->json) {
            print_json(c, id, p);
        } else {
            print_text(c, id, p);
        }
    }
}

static struct stream *stream_for(struct itm_cli *c, int id)
{
    if (!c->streams[id]) {
        c->streams[id] = calloc(1, sizeof(struct stream));
        if (!c->streams[id])
            return NULL;
        spoor_itm_init(&c->streams[id]->dec, c->wait_sync);
        if (!c->json && !c->any_channel && !c->listing)
            spoor_itm_select(&c->streams[id]->dec, 0); /* --stats alone: counters only */
        else if (c->text_only)
            spoor_itm_select_text(&c->streams[id]->dec, c->text_ports);
        else if (!c->json && c->any_channel)
            spoor_itm_select(&c->streams[id]->dec, 1u << SPOOR_ITM_SW);
        c->streams[id]->used = true;
    }
    return c->streams[id];
}

static void decode(struct itm_cli *c, int id, const uint8_t *data, size_t len)
{
    struct stream *s = stream_for(c, id);
    if (!s)
        return;
    while (len) {
        size_t n = spoor_itm_feed(&s->dec, data, len);
        data += n;
        len -= n;
        drain(c, id, s);
    }
}

static void tpiu_sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    struct itm_cli *c = ctx;
    if (c->tpiu_id >= 0 && id != c->tpiu_id)
        return;
    decode(c, id, data, len);
}

static void finish_all(struct itm_cli *c, bool flush_only)
{
    for (int id = 0; id < MAX_IDS; id++) {
        struct stream *s = c->streams[id];
        if (!s)
            continue;
        if (flush_only)
            spoor_itm_flush(&s->dec);
        else
            spoor_itm_finish(&s->dec);
        drain(c, id, s);
    }
}

static void print_stats(struct itm_cli *c, const spoor_tpiu_deframer *t)
{
    FILE *o = c->out;
    ob_flush(&c->ob); /* the JSON packets come first */
    if (t && c->json) {
        json_out *j = &c->jout;
        json_object_begin(j, NULL);
        json_key_string(j, JSON_KEY("type"), "tpiu");
        json_key_uint(j, JSON_KEY("bytes"), t->stats.bytes);
        json_key_uint(j, JSON_KEY("frames"), t->stats.frames);
        json_key_uint(j, JSON_KEY("full_syncs"), t->stats.full_syncs);
        json_key_uint(j, JSON_KEY("half_syncs"), t->stats.half_syncs);
        json_key_uint(j, JSON_KEY("id_changes"), t->stats.id_changes);
        json_key_uint(j, JSON_KEY("skipped"), t->stats.skipped);
        json_key_string(j, JSON_KEY("why"), t->why);
        json_object_end(j);
        json_finish(j);
    } else if (t) {
        fprintf(o,
                "tpiu: %" PRIu64 " bytes, %" PRIu64 " frames, %" PRIu64 " full syncs, %" PRIu64
                " half syncs, %" PRIu64 " ID changes, %" PRIu64 " bytes skipped; %s\n",
                t->stats.bytes, t->stats.frames, t->stats.full_syncs, t->stats.half_syncs,
                t->stats.id_changes, t->stats.skipped, t->why);
        fflush(o); /* before the JSON lines */
    }
    for (int id = 0; id < MAX_IDS; id++) {
        struct stream *s = c->streams[id];
        if (!s)
            continue;
        const spoor_itm_stats *st = spoor_itm_stats_get(&s->dec);
        uint64_t first_time = st->time_first, last_time = st->time_last;
        uint64_t total = 0;
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            total += st->packets[k];
        if (c->json) {
            json_out *j = &c->jout;
            json_object_begin(j, NULL);
            json_key_string(j, JSON_KEY("type"), "stats");
            if (c->tpiu)
                json_key_uint(j, JSON_KEY("stream"), (unsigned)id);
            json_key_uint(j, JSON_KEY("bytes"), st->bytes);
            json_key_uint(j, JSON_KEY("packets"), total);
            for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
                json_uint(j, spoor_itm_type_name((spoor_itm_type)k), st->packets[k]);
            json_key_uint(j, JSON_KEY("bytes_lost"), st->bytes_lost);
            json_key_uint(j, JSON_KEY("time_first"), first_time);
            json_key_uint(j, JSON_KEY("time_last"), last_time);
            json_object_end(j);
            json_finish(j);
            continue;
        }
        if (c->tpiu)
            fprintf(o, "stream %d:\n", id);
        fprintf(o, "  bytes       %" PRIu64 "\n  packets     %" PRIu64 "\n", st->bytes, total);
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            if (st->packets[k] && k != SPOOR_ITM_ERROR)
                fprintf(o, "    %-14s %" PRIu64 "\n", spoor_itm_type_name((spoor_itm_type)k),
                        st->packets[k]);
        fprintf(o, "  errors      %" PRIu64 " (%" PRIu64 " bytes lost)\n",
                st->packets[SPOOR_ITM_ERROR], st->bytes_lost);
        fprintf(o, "  time span   %" PRIu64 " .. %" PRIu64 " cycles (%" PRIu64 ")\n", first_time,
                last_time, last_time - first_time);
    }
}

/* ---- main ---------------------------------------------------------------------------------- */

static int add_channel(struct itm_cli *c, const char *arg)
{
    const char *comma = strchr(arg, ',');
    uint32_t port;
    if (!comma || comma == arg)
        return cli_error("itm", "-c %s: expected PORT,FORMAT (e.g. 0,%%c)", arg);
    if (!spoor_parse_u32(arg, (size_t)(comma - arg), SPOOR_NUM_AUTO, &port) || port >= MAX_PORTS)
        return cli_error("itm", "-c %s: port must be 0..255", arg);
    char *fmt = resolve_escapes(comma + 1);
    if (!fmt)
        return cli_error("itm", "out of memory");
    int rc = compile_channel(&c->ch[port], fmt, arg);
    if (rc) {
        free(fmt);
        return rc;
    }
    c->any_channel = true;
    return 0;
}

static void cleanup(struct itm_cli *c)
{
    for (int i = 0; i < MAX_PORTS; i++)
        free(c->ch[i].before);
    for (int i = 0; i < MAX_IDS; i++)
        free(c->streams[i]);
    if (c->elf)
        spoor_elf_close(c->elf);
}

int cmd_itm(int argc, char **argv)
{
    enum { OPT_ALIGN = 1000, OPT_WAIT_SYNC, OPT_RECONNECT };
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"channel", required_argument, NULL, 'c'},
        {"stats", no_argument, NULL, 's'},
        {"tpiu", optional_argument, NULL, 't'},
        {"elf", required_argument, NULL, 'e'},
        {"align", required_argument, NULL, OPT_ALIGN},
        {"wait-sync", no_argument, NULL, OPT_WAIT_SYNC},
        {"reconnect", required_argument, NULL, OPT_RECONNECT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static struct itm_cli c; /* large (channel table), so not on the stack */
    memset(&c, 0, sizeof c);
    c.tpiu_id = -1;
    c.align = -1;
    c.out = stdout;
    ob_init(&c.ob, STDOUT_FILENO);
    json_init(&c.jout, &c.ob);
    const char *elf_path = NULL;
    uint32_t reconnect_s = 10;
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":jc:st::e:h", opts, NULL)) != -1) {
        uint32_t v;
        switch (opt) {
        case 'j': c.json = true; break;
        case 's': c.stats = true; break;
        case 'c':
            if ((rc = add_channel(&c, optarg)) != 0) {
                cleanup(&c);
                return rc;
            }
            break;
        case 't':
            c.tpiu = true;
            if (optarg) {
                if (!cli_parse_u32(optarg, &v) || v == 0 || v >= 0x70) {
                    cleanup(&c);
                    return cli_error("itm", "--tpiu=%s: an ID is 1..111", optarg);
                }
                c.tpiu_id = (int)v;
            }
            break;
        case 'e': elf_path = optarg; break;
        case OPT_ALIGN:
            if (!cli_parse_u32(optarg, &v) || v > 15) {
                cleanup(&c);
                return cli_error("itm", "--align=%s: expected 0..15", optarg);
            }
            c.align = (int)v;
            break;
        case OPT_WAIT_SYNC: c.wait_sync = true; break;
        case OPT_RECONNECT:
            if (!cli_parse_u32(optarg, &reconnect_s)) {
                cleanup(&c);
                return cli_error("itm", "--reconnect=%s: expected seconds", optarg);
            }
            break;
        case 'h':
            fputs(itm_usage, stdout);
            cleanup(&c);
            return SPOOR_EXIT_OK;
        case ':':
            cleanup(&c);
            return cli_error("itm", "option %s needs a value (see spoor itm --help)",
                             argv[optind - 1]);
        default:
            cleanup(&c);
            return cli_error("itm", "unknown option %s (see spoor itm --help)", argv[optind - 1]);
        }
    }
    if (argc - optind > 1) {
        cleanup(&c);
        return cli_error("itm", "one SOURCE at most, got '%s' and '%s'", argv[optind],
                         argv[optind + 1]);
    }
    const char *spec = optind < argc ? argv[optind] : "-";
    c.listing = !c.json && !c.any_channel && !c.stats;
    c.text_only = !c.json && c.any_channel;
    for (int port = 0; port < MAX_PORTS; port++) {
        if (c.ch[port].on && !c.ch[port].raw)
            c.text_only = false;
        if (c.ch[port].raw)
            c.text_ports[port / 32] |= 1u << (port % 32);
    }
    if (elf_path) {
        c.elf = spoor_elf_open(elf_path);
        if (!c.elf) {
            cleanup(&c);
            return cli_error("itm", "%s", spoor_last_error());
        }
    }
    spoor_trace_source *src = spoor_trace_source_open(spec, reconnect_s);
    if (!src) {
        cleanup(&c);
        return cli_error("itm", "%s", spoor_last_error());
    }
    static spoor_tpiu_deframer tpiu;
    if (c.tpiu)
        spoor_tpiu_init(&tpiu, c.align, tpiu_sink, &c);
    static char text_buffer[1 << 16];
    setvbuf(stdout, text_buffer, _IOFBF, sizeof text_buffer);

    int status = SPOOR_EXIT_OK;
    for (;;) {
        const uint8_t *data;
        /* live sources that go quiet for 100 ms release what they hold; files never wait */
        ssize_t n = spoor_trace_source_receive(src, &data, 100);
        if (n > 0) {
            if (c.tpiu)
                spoor_tpiu_feed(&tpiu, data, (size_t)n);
            else
                decode(&c, 0, data, (size_t)n);
            if (output_failed(&c))
                break;
            continue;
        }
        if (n == SPOOR_TRACE_IDLE) {
            finish_all(&c, true);
            flush_output(&c);
            continue;
        }
        if (n == SPOOR_TRACE_RECONNECTED) {
            flush_output(&c);
            fprintf(stderr, "spoor itm: %s: reconnected; the stream has a gap here\n", spec);
            if (c.tpiu) {
                spoor_tpiu_finish(&tpiu);
                spoor_tpiu_init(&tpiu, c.align, tpiu_sink, &c);
            }
            finish_all(&c, false);
            continue;
        }
        if (n == SPOOR_TRACE_ERROR) {
            flush_output(&c);
            fprintf(stderr, "spoor itm: %s\n", spoor_last_error());
            status = SPOOR_EXIT_USAGE;
        }
        break;
    }
    if (c.tpiu) {
        spoor_tpiu_finish(&tpiu);
        if (!c.stats) {
            flush_output(&c);
            fprintf(stderr, "spoor itm: tpiu: %s\n", tpiu.why);
        }
    }
    finish_all(&c, false);
    if (c.stats)
        print_stats(&c, c.tpiu ? &tpiu : NULL);
    if (!flush_output(&c))
        status = cli_error("itm", "cannot write output: %s", strerror(errno));
    spoor_trace_source_close(src);
    cleanup(&c);
    return status;
}
