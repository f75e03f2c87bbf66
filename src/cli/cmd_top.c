/* spoor top: RTOS thread and exception statistics from an ITM/DWT stream (live over TCP or a
 * recorded file), thread names, priorities and entry functions read from the target's memory
 * through the RTOS layer (spoor/rtos.h), statistics by spoor/top_stats.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "spoor/itm_decoder.h"
#include "spoor/trace_pump.h"
#include "top_cli.h"

static const char top_usage[] =
    "usage: spoor top -e FW.elf -F HZ (-s HOST:PORT | --input FILE) [OPTIONS]\n"
    "Per-thread CPU use of an RTOS from the DWT data trace of its current-thread pointer, and\n"
    "with -E per-exception statistics from exception trace, one table per interval of target\n"
    "time. Thread names, priorities and entry functions are read from target memory: a live\n"
    "target (--gdb), a crash dump (DUMP) or --mem images; the ELF supplies code and constants.\n\n"
    "  -e, --elf FILE        the firmware ELF (DWARF types of the RTOS: build with -g)\n"
    "  -s, --server HOST:PORT  the live ITM stream (OpenOCD's SWO port, an Orbuculum server)\n"
    "      --input FILE      a recorded stream (- for standard input)\n"
    "  -p, --protocol ITM|TPIU  the stream as the ITM sends it (default) or TPIU-framed (the "
    "ITM's\n"
    "                        trace ID 1 is decoded)\n"
    "  -t, --tpiu[=ID]       the stream is TPIU-formatted: deframe it, decode trace source ID\n"
    "                        (default 1, as -p TPIU)\n"
    "  -T, --rtos KIND       auto (default: by symbols), freertos, rtx5 (or rtxv5), zephyr,\n"
    "                        threadx, sched\n"
    "  -F, --cpu-freq HZ     the core clock: timestamps are cycles (prescaler 1); a live\n"
    "                        stream without timestamps is timed by the host's clock\n"
    "      --prescaler N     the ITM's local timestamp prescaler (ITM_TCR.TSPrescale): 1, 4,\n"
    "                        16 or 64 cycles per timestamp tick (default 1)\n"
    "  -I, --interval MS     the interval (default 1000)\n"
    "  -n, --intervals N     stop after N intervals\n"
    "  -E, --exceptions      exception statistics (DWT_CTRL.EXCTRCENA)\n"
    "      --comparator N    the DWT comparator watching the current-thread pointer (default 1)\n"
    "  -j, --json FILE|udp:[HOST:]PORT  one JSON object per interval to FILE, or datagrams\n"
    "                        to HOST (default 127.0.0.1):PORT (console off; a missing\n"
    "                        listener is counted, not an error)\n"
    "      --ftrace FILE     thread switches (and exceptions with -E) as Linux ftrace text\n"
    "      --chrome FILE     Chrome/Perfetto trace-event JSON: a track per thread, exceptions\n"
    "      --gdb HOST:PORT   target memory from a GDB server (OpenOCD, pyOCD, QEMU); with -s\n"
    "                        the target runs, halted briefly for each batch of reads\n"
    "  -W, --telnet [HOST:]PORT  target memory from OpenOCD's telnet server (4444), read while\n"
    "                        the target runs (one mdw per new thread); -W tcl:[HOST:]PORT\n"
    "                        through its Tcl RPC server (6666) instead (read_memory)\n"
    "      --setup v7m|v8m|proc  before reading the stream, set up ITM/DWT through -W or --gdb:\n"
    "                        write the registers for an ARMv7-M or ARMv8-M core, or (-W) call\n"
    "                        the OpenOCD procedure rtos_dwt_config ADDR (and\n"
    "                        exception_trace_enable with -E)\n"
    "      --mem ADDR:FILE   target memory from an image (repeatable)\n"
    "      --stack           stack columns per thread: size, used (saved SP), peak (the RTOS's\n"
    "                        fill pattern), OVERFLOWED / NEARLY FULL; re-read each interval\n"
    "                        on a live target\n"
    "      --stats           memory statistics on stderr (reads, GDB round trips, halts)\n"
    "      --elf-dir DIR     instead of -e: the ELF under DIR whose build-id the DUMP has\n"
    "  -h, --help            this text\n\n"
    "A DUMP argument (a crash dump) supplies target memory too. See docs/top.md.\n";

/* ---- engine callbacks ---------------------------------------------------------------------- */

static void on_report(void *ctx, const spoor_top_report *r)
{
    struct top_cli *c = ctx;
    if (c->stop)
        return;
    if (!r->summary && !r->partial)
        top_refresh_priorities(c, r);
    if (top_connection_lost(c))
        return;
    if (c->console) {
        struct winsize ws;
        if (c->refresh) /* read each time: the terminal may have been resized */
            c->view.cols = ioctl(1, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
        top_console_report(c->out, &c->view, r, c->refresh);
        ob_flush(c->out);
    }
    if (c->json)
        top_json_report(c->json, &c->view, r, c->udp, c->udp ? &c->udp_refused : NULL);
    if (c->max_intervals && !r->summary && !r->partial &&
        r->index + (r->quiet ? r->quiet : 1) >= c->max_intervals)
        c->stop = true;
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    struct top_cli *c = ctx;
    top_thread(c, next); /* a new TCB is read now, while it is current */
    if (c->ftrace.f)
        top_ftrace_switch(&c->ftrace, &c->view, time, prev, prev_known, next);
    if (c->chrome.trace.ob)
        top_chrome_switch(&c->chrome, &c->view, time, next);
    c->have_current = true;
    c->current = next;
}

static void on_exception(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth)
{
    struct top_cli *c = ctx;
    if (c->chrome.trace.ob && c->view.exceptions && enter_known)
        top_chrome_exception(&c->chrome, &c->view, number, enter, exit, depth);
}

static void packet(struct top_cli *c, const spoor_itm_packet *p)
{
    if (c->stop)
        return;
    spoor_itm_packet timed = *p; /* the stream's time in cycles, or the host's (top_clock) */
    timed.time = top_clock_packet(&c->clock, p);
    p = &timed;
    top_explain_host_clock(c);
    if (c->ftrace.f && c->view.exceptions && p->type == SPOOR_ITM_EXCEPTION &&
        p->u.exception.number && p->u.exception.action != SPOOR_ITM_EXC_RETURN)
        top_ftrace_exception(&c->ftrace, &c->view, p->time, p->u.exception.number,
                             p->u.exception.action == SPOOR_ITM_EXC_ENTER, c->have_current,
                             c->current);
    if (p->type == SPOOR_ITM_DWT_MATCH && p->u.dwt_match.comparator == c->comparator &&
        !c->warned_match) { /* a switch was seen, but not to which thread */
        cli_warn("top",
                 "comparator %u sends data trace match packets, which carry "
                 "no value: it watches the address without the value (ARMv8-M DWT_FUNCTION MATCH "
                 "0b0101); thread switches need MATCH 0b1101, as --setup v8m and "
                 "spoor_itm_watch_current_thread() write",
                 c->comparator);
        c->warned_match = true;
    }
    if (!c->any_packet) /* said once the stream gives something to show */
        top_explain_no_memory(c, !c->no_memory);
    c->any_packet = true;
    top_note_packet(c, p);
    spoor_top_packet(c->stats, p, c->comparator);
    if (p->time > c->last_time)
        c->last_time = p->time;
}

/* ---- the stream ---------------------------------------------------------------------------- */

/* The trace pump's events: packets to the statistics, the end of the stream closes them. */
static bool on_event(void *ctx, const spoor_trace_pump_event *ev)
{
    struct top_cli *c = ctx;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET: packet(c, ev->packet); break;
    case SPOOR_TRACE_PUMP_RECONNECTED:
        cli_note("top", "%s: reconnected; the stream has a gap here", c->spec);
        break;
    case SPOOR_TRACE_PUMP_ERROR: c->status = cli_fail("top"); break;
    case SPOOR_TRACE_PUMP_END:
        if (c->any_packet) /* an empty stream has no table: top_explain_stream says so */
            spoor_top_finish(c->stats, c->last_time);
        break;
    case SPOOR_TRACE_PUMP_IDLE: { /* the pump released what the decoder held */
        uint64_t now;
        if (c->any_packet && top_clock_idle(&c->clock, &now)) { /* host-timed: intervals end */
            spoor_top_advance(c->stats, now);
            c->last_time = now;
        }
        break;
    }
    default: break;
    }
    return !c->stop;
}

/* What the TPIU deframer could not use, one warning line: bytes outside whole frames (a frame
 * cut short by a sync, a capture starting mid-frame), data before any trace ID, reserved IDs. */
static void report_tpiu(const spoor_tpiu_deframer *t)
{
    const spoor_tpiu_stats *st = &t->stats;
    if (!st->skipped && !st->no_id_bytes && !st->reserved_ids)
        return;
    cli_warn("top",
             "TPIU: %llu bytes outside whole frames (cut short by a sync, or "
             "before the first), %llu bytes before any trace ID, %llu reserved IDs; %s",
             (unsigned long long)st->skipped, (unsigned long long)st->no_id_bytes,
             (unsigned long long)st->reserved_ids, t->why);
}

static int run(struct top_cli *c, const spoor_trace_pump_config *cfg)
{
    spoor_trace_pump *pump = spoor_trace_pump_open(c->spec, 10, cfg, on_event, c);
    if (!pump)
        return cli_fail("top");
    top_let_run(c); /* connected to the stream: the target may run now */
    spoor_trace_pump_run(pump);
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(pump);
    if (t && !top_connection_lost(c))
        report_tpiu(t);
    if (!c->status && !top_connection_lost(c))
        c->status = top_explain_stream(c, pump, cfg->tpiu);
    spoor_trace_pump_free(pump);
    return c->status;
}

#define MAX_MEMS 64

struct top_args {
    const char *elf, *server, *input, *kind, *json, *ftrace, *chrome, *gdb, *telnet, *setup;
    bool stats;
    spoor_trace_pump_config cfg;
    uint32_t hz, interval_ms, intervals, comparator;
    spoor_raw_memory mems[MAX_MEMS];
    size_t nmems;
};

static int parse_args(int argc, char **argv, struct top_args *a, struct top_cli *c)
{
    enum {
        OPT_INPUT = 300,
        OPT_COMPARATOR,
        OPT_FTRACE,
        OPT_CHROME,
        OPT_GDB,
        OPT_MEM,
        OPT_STATS,
        OPT_SETUP,
        OPT_PRESCALER,
        OPT_STACK
    };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"server", required_argument, 0, 's'},
                                         {"input", required_argument, 0, OPT_INPUT},
                                         {"protocol", required_argument, 0, 'p'},
                                         {"tpiu", optional_argument, 0, 't'},
                                         {"rtos", required_argument, 0, 'T'},
                                         {"cpu-freq", required_argument, 0, 'F'},
                                         {"interval", required_argument, 0, 'I'},
                                         {"intervals", required_argument, 0, 'n'},
                                         {"exceptions", no_argument, 0, 'E'},
                                         {"comparator", required_argument, 0, OPT_COMPARATOR},
                                         {"json", required_argument, 0, 'j'},
                                         {"ftrace", required_argument, 0, OPT_FTRACE},
                                         {"chrome", required_argument, 0, OPT_CHROME},
                                         {"gdb", required_argument, 0, OPT_GDB},
                                         {"mem", required_argument, 0, OPT_MEM},
                                         {"stats", no_argument, 0, OPT_STATS},
                                         {"telnet", required_argument, 0, 'W'},
                                         {"setup", required_argument, 0, OPT_SETUP},
                                         {"prescaler", required_argument, 0, OPT_PRESCALER},
                                         {"stack", no_argument, 0, OPT_STACK},
                                         {"help", no_argument, 0, 'h'},
                                         CLI_ELF_DIR_LONG_OPTION,
                                         {0, 0, 0, 0}};
    int opt;
    uint32_t id;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:s:p:t::T:F:I:n:Ej:W:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': a->elf = optarg; break;
        case CLI_OPT_ELF_DIR: cli_elf_dir_option("top", optarg); break;
        case 's': a->server = optarg; break;
        case OPT_INPUT: a->input = optarg; break;
        case 'p':
            if (strcasecmp(optarg, "TPIU") && strcasecmp(optarg, "ITM"))
                return cli_error("top", "-p %s: expected ITM or TPIU", optarg);
            a->cfg.tpiu = !strcasecmp(optarg, "TPIU");
            a->cfg.tpiu_id = 1;
            break;
        case 't':
            a->cfg.tpiu = true;
            a->cfg.tpiu_id = 1;
            if (optarg && (!cli_parse_u32(optarg, &id) || id == 0 || id >= 0x70))
                return cli_error("top", "--tpiu=%s: an ID is 1..111", optarg);
            if (optarg)
                a->cfg.tpiu_id = (int)id;
            break;
        case 'T': a->kind = optarg; break;
        case 'F':
            if (!cli_parse_u32(optarg, &a->hz) || !a->hz)
                return cli_error("top", "-F %s: expected the CPU clock in Hz", optarg);
            break;
        case 'I':
            if (!cli_parse_u32(optarg, &a->interval_ms) || !a->interval_ms)
                return cli_error("top", "-I %s: expected milliseconds (1 or more)", optarg);
            break;
        case 'n':
            if (!cli_parse_u32(optarg, &a->intervals) || !a->intervals)
                return cli_error("top", "-n %s: expected a count (1 or more)", optarg);
            break;
        case 'E': c->view.exceptions = true; break;
        case OPT_COMPARATOR:
            if (!cli_parse_u32(optarg, &a->comparator) || a->comparator > 3)
                return cli_error("top",
                                 "--comparator %s: the data trace packet names "
                                 "comparators 0..3",
                                 optarg);
            break;
        case 'j': a->json = optarg; break;
        case OPT_FTRACE: a->ftrace = optarg; break;
        case OPT_CHROME: a->chrome = optarg; break;
        case OPT_GDB: a->gdb = optarg; break;
        case OPT_MEM:
            if (a->nmems == MAX_MEMS)
                return cli_error("top", "too many --mem (at most %d)", MAX_MEMS);
            if (!spoor_raw_memory_parse(optarg, &a->mems[a->nmems++]))
                return cli_fail("top");
            break;
        case OPT_STATS: a->stats = true; break;
        case 'W': a->telnet = optarg; break;
        case OPT_SETUP:
            if (strcmp(optarg, "v7m") && strcmp(optarg, "v8m") && strcmp(optarg, "proc"))
                return cli_error("top", "--setup %s: expected v7m, v8m or proc", optarg);
            a->setup = optarg;
            break;
        case OPT_PRESCALER:
            if (!cli_parse_u32(optarg, &c->prescaler) || (c->prescaler != 1 && c->prescaler != 4 &&
                                                          c->prescaler != 16 && c->prescaler != 64))
                return cli_error(
                    "top", "--prescaler %s: ITM_TCR.TSPrescale divides by 1, 4, 16 or 64", optarg);
            break;
        case OPT_STACK: c->view.stack = true; break;
        case 'h': fputs(top_usage, stdout); return -1;
        default: return cli_bad_option("top", argv);
        }
    }
    if (!a->server == !a->input)
        return cli_error("top", "give one of -s HOST:PORT or --input FILE (the stream)");
    if (!a->hz)
        return cli_error("top", "give the CPU clock: -F HZ (timestamps count its cycles)");
    if (argc - optind > 1)
        return cli_error("top", "more than one DUMP given");
    if (a->setup && !a->telnet && !a->gdb)
        return cli_error("top", "--setup writes to the live target: give -W [HOST:]PORT or --gdb");
    if (a->telnet && a->gdb)
        return cli_error("top", "give one live target: -W or --gdb");
    if (c->view.stack && !a->telnet && !a->gdb && !a->nmems && argc - optind < 1)
        return cli_error("top", "--stack reads the threads' stacks from target memory: give "
                                "--mem, a DUMP, --gdb or -W");
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static struct top_args a;
    static struct top_cli c;
    memset(&a, 0, sizeof a);
    memset(&c, 0, sizeof c);
    c.fills = -1;
    spoor_trace_pump_config_init(&a.cfg);
    a.interval_ms = 1000;
    a.comparator = 1;
    a.kind = "auto";
    int rc = parse_args(argc, argv, &a, &c);
    if (rc)
        return rc < 0 ? SPOOR_EXIT_OK : rc;
    const char *dump = optind < argc ? argv[optind] : NULL;
    static outbuf out, json;
    ob_init(&out, 1);
    c.out = &out;
    c.comparator = a.comparator;
    c.max_intervals = a.intervals;
    c.threads = calloc(SPOOR_TOP_MAX_THREADS, sizeof *c.threads);
    if (!c.threads)
        return cli_out_of_memory("top");
    if (!(c.elf = cli_open_elf_for("top", a.elf, dump))) {
        top_cleanup(&c);
        return SPOOR_EXIT_USAGE;
    }
    if ((rc = top_open_rtos(&c, a.kind, a.setup != NULL)) != 0 ||
        (rc = top_open_memory(&c, a.gdb, a.telnet, dump, a.mems, a.nmems)) != 0)
        goto out;
    cli_warn_build_id("top", c.dump, c.elf);
    c.no_memory = !a.gdb && !a.telnet && !dump && !a.nmems;
    c.tpiu_id = a.cfg.tpiu_id;
    if (a.setup && (rc = top_set_up_trace(&c, a.setup, a.comparator)) != 0)
        goto out;
    c.live = c.gdb && a.server;
    top_clock_init(&c.clock, a.server != NULL, a.hz, c.prescaler);
    c.view.rtos_name = c.rtos ? spoor_rtos_display_name(spoor_rtos_kind_of(c.rtos)) : "no RTOS";
    c.view.cpu_hz = a.hz;
    c.view.interval_ms = a.interval_ms;
    c.view.thread = top_thread;
    c.view.ctx = &c;
    c.console = true;
    if (a.json) {
        int fd;
        if ((rc = top_json_open(a.json, &fd, &c.udp)) != 0)
            goto out;
        c.console = !c.udp;
        ob_init(&json, fd);
        c.json = &json;
    }
    c.refresh = c.console && isatty(1);
    if (a.ftrace && !top_ftrace_open(&c.ftrace, a.ftrace)) {
        rc = cli_error("top", "--ftrace %s: cannot open: %s", a.ftrace, strerror(errno));
        goto out;
    }
    if (a.chrome && !top_chrome_open(&c.chrome, a.chrome)) {
        rc = cli_error("top", "--chrome %s: cannot open: %s", a.chrome, strerror(errno));
        goto out;
    }
    uint64_t interval = (uint64_t)a.interval_ms * a.hz / 1000u;
    if (!interval) {
        rc = cli_error("top", "-I %u at -F %u is less than one cycle", a.interval_ms, a.hz);
        goto out;
    }
    spoor_top_callbacks cb = {on_report, on_switch, on_exception, &c};
    if (!(c.stats = spoor_top_new(interval, &cb))) {
        rc = cli_fail("top");
        goto out;
    }
    c.idle_pending = c.live && c.rtos; /* a target halted at reset has no RAM set up yet */
    if (c.rtos && !c.live)
        top_read_idle(&c);
    if (top_connection_lost(&c)) {
        rc = cli_error("top", "%s", c.lost);
        goto out;
    }
    spoor_top_set_idle(c.stats, 0); /* no thread at all: the scheduler waits */
    char spec[300];
    if (a.server)
        snprintf(spec, sizeof spec, "tcp:%s", a.server);
    else
        snprintf(spec, sizeof spec, "%s", a.input);
    c.spec = spec;
    rc = run(&c, &a.cfg);
    if (top_connection_lost(&c) && !rc)
        rc = cli_error("top", "%s", c.lost);
    if (c.ftrace.f && !top_ftrace_close(&c.ftrace))
        rc = cli_error("top", "--ftrace %s: write failed", a.ftrace);
    if (c.chrome.trace.ob && !top_chrome_close(&c.chrome, &c.view, spoor_top_now(c.stats)))
        rc = cli_error("top", "--chrome %s: write failed", a.chrome);
    if (!ob_flush(&out) || (c.json && !ob_flush(c.json)))
        rc = cli_error("top", "cannot write the output: %s", strerror(errno));
    if (c.udp_refused)
        cli_note("top",
                 "-j %s: %" PRIu64 " datagrams found nobody listening (connection "
                 "refused) and were not delivered",
                 a.json, c.udp_refused);
    if (a.stats)
        top_print_mem_stats(&c);
out:
    if (c.json)
        close(c.json->fd);
    if (c.ftrace.f)
        fclose(c.ftrace.f);
    chrome_trace_discard(&c.chrome.trace); /* not closed above: failed, no file */
    top_cleanup(&c);
    return rc;
}
