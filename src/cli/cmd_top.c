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

/* ---- the session's outputs ------------------------------------------------------------------ */

static void on_report(void *ctx, const spoor_top_report *r)
{
    struct top_cli *c = ctx;
    if (c->console) {
        struct winsize ws;
        if (c->refresh) /* read each time: the terminal may have been resized */
            c->view.cols = ioctl(1, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
        top_console_report(c->out, &c->view, r, c->refresh);
        ob_flush(c->out);
    }
    if (c->json)
        top_json_report(c->json, c->session, r, c->view.exceptions,
                        c->udp ? &c->udp_refused : NULL);
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    struct top_cli *c = ctx;
    if (c->ftrace.f)
        top_ftrace_switch(&c->ftrace, &c->view, time, prev, prev_known, next);
    if (c->chrome.trace.ob)
        top_chrome_switch(&c->chrome, &c->view, time, next);
}

static void on_exception(void *ctx, unsigned number, uint64_t enter, bool enter_known,
                         uint64_t exit, unsigned depth)
{
    struct top_cli *c = ctx;
    if (c->chrome.trace.ob && c->view.exceptions && enter_known)
        top_chrome_exception(&c->chrome, &c->view, number, enter, exit, depth);
}

static void on_packet(void *ctx, const spoor_itm_packet *p)
{
    struct top_cli *c = ctx;
    uint32_t current;
    if (c->ftrace.f && c->view.exceptions && p->type == SPOOR_ITM_EXCEPTION &&
        p->u.exception.number && p->u.exception.action != SPOOR_ITM_EXC_RETURN) {
        bool known = spoor_top_session_current(c->session, &current);
        top_ftrace_exception(&c->ftrace, &c->view, p->time, p->u.exception.number,
                             p->u.exception.action == SPOOR_ITM_EXC_ENTER, known, current);
    }
}

static void on_notice(void *ctx, spoor_top_notice n, const char *text)
{
    struct top_cli *c = ctx;
    switch (n) {
    case SPOOR_TOP_NOTICE_FIRST_PACKET: top_explain_no_memory(c); break;
    case SPOOR_TOP_NOTICE_HOST_CLOCK: top_explain_host_clock(c); break;
    case SPOOR_TOP_NOTICE_MATCH_WITHOUT_VALUE: /* a switch was seen, but not to which thread */
        cli_warn("top",
                 "comparator %u sends data trace match packets, which carry "
                 "no value: it watches the address without the value (ARMv8-M DWT_FUNCTION MATCH "
                 "0b0101); thread switches need MATCH 0b1101, as --setup v8m and "
                 "spoor_itm_watch_current_thread() write",
                 c->comparator);
        break;
    case SPOOR_TOP_NOTICE_IDLE_UNKNOWN:
        c->view.idle_unknown = true;
        cli_warn("top", "%s: the idle thread's time counts as busy", text);
        break;
    case SPOOR_TOP_NOTICE_TARGET_READ: cli_warn("top", "%s", text); break;
    case SPOOR_TOP_NOTICE_RECONNECTED:
        cli_note("top", "%s: reconnected; the stream has a gap here", c->spec);
        break;
    case SPOOR_TOP_NOTICE_STREAM_ERROR: c->status = cli_fail("top"); break;
    }
}

/* The thread behind a TCB (top_view's thread callback; ctx is the session). */
static const top_thread_info *thread_of(void *ctx, uint32_t tcb)
{
    return spoor_top_session_thread(ctx, tcb);
}

/* ---- the stream ---------------------------------------------------------------------------- */

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
    spoor_trace_pump *pump =
        spoor_trace_pump_open(c->spec, 10, cfg, spoor_top_session_event, c->session);
    if (!pump)
        return cli_fail("top");
    spoor_top_session_start(c->session); /* connected to the stream: the target may run now */
    spoor_trace_pump_run(pump);
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(pump);
    if (t && !spoor_top_session_lost(c->session))
        report_tpiu(t);
    if (!c->status && !spoor_top_session_lost(c->session))
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
    uint32_t prescaler; /* --prescaler: cycles per local timestamp tick (0, 1: none) */
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
            if (!cli_parse_u32(optarg, &a->prescaler) || (a->prescaler != 1 && a->prescaler != 4 &&
                                                          a->prescaler != 16 && a->prescaler != 64))
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
    if (!(c.elf = cli_open_elf_for("top", a.elf, dump))) {
        top_cleanup(&c);
        return SPOOR_EXIT_USAGE;
    }
    if ((rc = top_open_rtos(&c, a.kind, a.setup != NULL)) != 0 ||
        (rc = top_open_memory(&c, a.gdb, a.telnet, dump, a.mems, a.nmems)) != 0)
        goto out;
    cli_warn_build_id("top", c.target ? c.target->dump : NULL, c.elf);
    c.tpiu_id = a.cfg.tpiu_id;
    if (a.setup && (rc = top_set_up_trace(&c, a.setup, a.comparator)) != 0)
        goto out;
    bool live = c.target && c.target->gdb && a.server; /* halted only for reads */
    c.view.rtos_name = c.rtos ? spoor_rtos_display_name(spoor_rtos_kind_of(c.rtos)) : "no RTOS";
    c.view.cpu_hz = a.hz;
    c.view.interval_ms = a.interval_ms;
    c.view.thread = thread_of;
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
    if (!((uint64_t)a.interval_ms * a.hz / 1000u)) {
        rc = cli_error("top", "-I %u at -F %u is less than one cycle", a.interval_ms, a.hz);
        goto out;
    }
    char spec[300];
    if (a.server)
        snprintf(spec, sizeof spec, "tcp:%s", a.server);
    else
        snprintf(spec, sizeof spec, "%s", a.input);
    c.spec = spec;
    spoor_top_session_config cfg = {.cpu_hz = a.hz,
                                    .interval_ms = a.interval_ms,
                                    .prescaler = a.prescaler,
                                    .comparator = a.comparator,
                                    .live = a.server != NULL,
                                    .stack = c.view.stack,
                                    .max_intervals = a.intervals,
                                    .elf = c.elf,
                                    .rtos = c.rtos,
                                    .target = c.target};
    spoor_top_session_callbacks cb = {on_report, on_switch, on_exception, on_packet, on_notice, &c};
    if (!(c.session = spoor_top_session_new(&cfg, &cb))) {
        rc = cli_fail("top");
        goto out;
    }
    c.view.ctx = c.session;
    const char *lost = spoor_top_session_lost(c.session);
    if (lost) {
        rc = cli_error("top", "%s", lost);
        goto out;
    }
    rc = run(&c, &a.cfg);
    if ((lost = spoor_top_session_lost(c.session)) != NULL && !rc)
        rc = cli_error("top", "%s", lost);
    spoor_top_session_status st;
    spoor_top_session_status_get(c.session, &st);
    if (c.ftrace.f && !top_ftrace_close(&c.ftrace))
        rc = cli_error("top", "--ftrace %s: write failed", a.ftrace);
    if (c.chrome.trace.ob && !top_chrome_close(&c.chrome, &c.view, st.now))
        rc = cli_error("top", "--chrome %s: write failed", a.chrome);
    if (!ob_flush(&out) || (c.json && !ob_flush(c.json)))
        rc = cli_error("top", "cannot write the output: %s", strerror(errno));
    if (c.udp_refused)
        cli_note("top",
                 "-j %s: %" PRIu64 " datagrams found nobody listening (connection "
                 "refused) and were not delivered",
                 a.json, c.udp_refused);
    if (a.stats)
        top_print_mem_stats(&c, live);
out:
    if (c.json)
        close(c.json->fd);
    if (c.ftrace.f)
        fclose(c.ftrace.f);
    chrome_trace_discard(&c.chrome.trace); /* not closed above: failed, no file */
    top_cleanup(&c);
    return rc;
}
