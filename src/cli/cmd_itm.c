/* spoor itm: decodes an ITM/DWT trace stream (SWO or TPIU-formatted) from a file, standard
 * input, a TCP server or a serial port, through the trace pump (spoor/trace_pump.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "itm_cli.h"
#include "json_out.h"
#include "outbuf.h"
#include "spoor/elf.h"
#include "spoor/itm_decoder.h"
#include "spoor/trace_pump.h"

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

struct itm_cli {
    bool json, stats, listing;
    const char *spec, *elf_path;
    unsigned reconnect_s;
    spoor_trace_pump_config cfg;
    itm_channels channels;
    spoor_elf *elf;
    spoor_trace_pump *pump;
    int status;
    FILE *out;     /* text output */
    outbuf ob;     /* JSON and %c output (on the same descriptor) */
    json_out jout; /* JSON writer onto ob */
};

/* Writes out what either output holds; false once a write has failed. */
static bool flush_output(struct itm_cli *c)
{
    bool ok = ob_flush(&c->ob);
    return fflush(c->out) == 0 && !ferror(c->out) && ok;
}

static bool output_failed(struct itm_cli *c)
{
    return c->ob.failed || ferror_unlocked(c->out);
}

/* The pump's events: packets printed (the decoder only releases the types the output shows:
 * see run), the %c ports' bytes copied, the output flushed when a live source pauses. */
static bool on_event(void *ctx, const spoor_trace_pump_event *ev)
{
    struct itm_cli *c = ctx;
    const spoor_itm_packet *p = ev->packet;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET:
        if (c->json) {
            itm_print_json(&c->jout, c->cfg.tpiu ? ev->stream : -1, p);
        } else if (!c->channels.any) {
            itm_print_text(c->out, c->elf, c->cfg.tpiu ? ev->stream : -1, p);
        } else if (p->type == SPOOR_ITM_SW && p->u.sw.port < ITM_MAX_PORTS) {
            const itm_channel *ch = &c->channels.ch[p->u.sw.port];
            if (ch->on)
                itm_channel_print(c->out, ch, p->u.sw.value, p->u.sw.size);
        }
        break;
    case SPOOR_TRACE_PUMP_TEXT: ob_write(&c->ob, (const char *)ev->text, ev->len); break;
    case SPOOR_TRACE_PUMP_IDLE: flush_output(c); break;
    case SPOOR_TRACE_PUMP_RECONNECTED:
        flush_output(c);
        cli_note("itm", "%s: reconnected; the stream has a gap here", c->spec);
        break;
    case SPOOR_TRACE_PUMP_ERROR:
        flush_output(c);
        cli_note("itm", "%s", spoor_last_error());
        c->status = SPOOR_EXIT_USAGE;
        break;
    case SPOOR_TRACE_PUMP_END: break;
    }
    return !output_failed(c);
}

static void print_stats(struct itm_cli *c)
{
    FILE *o = c->out;
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(c->pump);
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
    for (int id = 0; id < SPOOR_TRACE_PUMP_STREAMS; id++) {
        const spoor_itm_stats *st = spoor_trace_pump_stats(c->pump, id);
        if (!st)
            continue;
        uint64_t first_time = st->time_first, last_time = st->time_last;
        uint64_t total = 0;
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            total += st->packets[k];
        if (c->json) {
            json_out *j = &c->jout;
            json_object_begin(j, NULL);
            json_key_string(j, JSON_KEY("type"), "stats");
            if (c->cfg.tpiu)
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
        if (c->cfg.tpiu)
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

/* The options into *c; 0, -1 for --help (printed), or the exit status of a one-line error. */
static int parse_args(int argc, char **argv, struct itm_cli *c)
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
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":jc:st::e:h", opts, NULL)) != -1) {
        uint32_t v;
        switch (opt) {
        case 'j': c->json = true; break;
        case 's': c->stats = true; break;
        case 'c':
            if ((rc = itm_channel_add(&c->channels, optarg)) != 0)
                return rc;
            break;
        case 't':
            c->cfg.tpiu = true;
            if (optarg) {
                if (!cli_parse_u32(optarg, &v) || v == 0 || v >= 0x70)
                    return cli_error("itm", "--tpiu=%s: an ID is 1..111", optarg);
                c->cfg.tpiu_id = (int)v;
            }
            break;
        case 'e': c->elf_path = optarg; break;
        case OPT_ALIGN:
            if (!cli_parse_u32(optarg, &v) || v > 15)
                return cli_error("itm", "--align=%s: expected 0..15", optarg);
            c->cfg.tpiu_align = (int)v;
            break;
        case OPT_WAIT_SYNC: c->cfg.wait_sync = true; break;
        case OPT_RECONNECT:
            if (!cli_parse_u32(optarg, &v))
                return cli_error("itm", "--reconnect=%s: expected seconds", optarg);
            c->reconnect_s = v;
            break;
        case 'h': fputs(itm_usage, stdout); return -1;
        case ':':
            return cli_error("itm", "option %s needs a value (see spoor itm --help)",
                             argv[optind - 1]);
        default:
            return cli_error("itm", "unknown option %s (see spoor itm --help)", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        return cli_error("itm", "one SOURCE at most, got '%s' and '%s'", argv[optind],
                         argv[optind + 1]);
    c->spec = optind < argc ? argv[optind] : "-";
    c->listing = !c->json && !c->channels.any && !c->stats;
    /* the decoders release only what the output shows */
    if (!c->json && !c->channels.any && !c->listing)
        c->cfg.types = 0; /* --stats alone: the counters */
    else if (!c->json && c->channels.any)
        c->cfg.types = 1u << SPOOR_ITM_SW;
    /* -c alone, every format %c: the decoders gather the ports' bytes for the output buffer */
    c->cfg.text = !c->json && itm_channels_raw(&c->channels, c->cfg.text_ports);
    return 0;
}

/* Opens the ELF and the source and decodes the stream to the end. */
static int run(struct itm_cli *c)
{
    if (c->elf_path && !(c->elf = spoor_elf_open(c->elf_path)))
        return cli_fail("itm");
    c->pump = spoor_trace_pump_open(c->spec, c->reconnect_s, &c->cfg, on_event, c);
    if (!c->pump)
        return cli_fail("itm");
    static char text_buffer[1 << 16];
    setvbuf(stdout, text_buffer, _IOFBF, sizeof text_buffer);
    spoor_trace_pump_run(c->pump);
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(c->pump);
    if (t && !c->stats) {
        flush_output(c);
        cli_note("itm", "tpiu: %s", t->why);
    }
    const spoor_itm_stats *st = t ? NULL : spoor_trace_pump_stats(c->pump, 0);
    const uint8_t *head;
    size_t n = spoor_trace_pump_head(c->pump, &head);
    uint64_t page_unknown = 0;
    for (int id = 0; id < SPOOR_TRACE_PUMP_STREAMS; id++) {
        const spoor_itm_stats *s = spoor_trace_pump_stats(c->pump, id);
        page_unknown += s ? s->sw_page_unknown : 0;
    }
    if (page_unknown) {
        flush_output(c);
        cli_warn_input("itm",
                       "%s: %" PRIu64 " software writes came after a gap in the stream before any "
                       "sync or page packet: their stimulus port page is unknown, taken as the one "
                       "before the gap (marked 'page unknown')",
                       c->spec, page_unknown);
    }
    if (st && st->bytes_lost && spoor_tpiu_looks_framed(head, n)) {
        flush_output(c);
        cli_warn("itm",
                 "%s: %" PRIu64 " bytes lost; the stream looks "
                 "TPIU-formatted (full syncs FF FF FF 7F, trace ID changes at 16-byte frame "
                 "boundaries): try --tpiu",
                 c->spec, st->bytes_lost);
    }
    return c->status;
}

int cmd_itm(int argc, char **argv)
{
    static struct itm_cli c; /* large (channel table), so not on the stack */
    memset(&c, 0, sizeof c);
    spoor_trace_pump_config_init(&c.cfg);
    c.reconnect_s = 10;
    c.out = stdout;
    ob_init(&c.ob, STDOUT_FILENO);
    json_init(&c.jout, &c.ob);
    int status = parse_args(argc, argv, &c);
    if (status == 0) {
        status = run(&c);
        if (c.pump && c.stats)
            print_stats(&c);
        if (c.pump && !flush_output(&c))
            status = cli_error("itm", "cannot write output: %s", strerror(errno));
    }
    spoor_trace_pump_free(c.pump);
    itm_channels_free(&c.channels);
    if (c.elf)
        spoor_elf_close(c.elf);
    return status < 0 ? SPOOR_EXIT_OK : status;
}
