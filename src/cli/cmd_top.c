/* spoor top: RTOS thread and exception statistics from an ITM/DWT stream (live over TCP or a
 * recorded file), thread names, priorities and entry functions read from the target's memory
 * through the RTOS layer (spoor/rtos.h), statistics by spoor/top.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "spoor/dump.h"
#include "spoor/gdb_remote.h"
#include "spoor/itm.h"
#include "spoor/itm_watch.h"
#include "spoor/memory.h"
#include "spoor/openocd.h"
#include "spoor/rtos.h"
#include "spoor/top.h"
#include "spoor/tpiu.h"
#include "spoor/trace_source.h"
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
    "  -T, --rtos KIND       auto (default: by symbols), freertos, rtx5, zephyr, threadx, sched\n"
    "  -F, --cpu-freq HZ     the core clock: timestamps are cycles (prescaler 1)\n"
    "  -I, --interval MS     the interval (default 1000)\n"
    "  -n, --intervals N     stop after N intervals\n"
    "  -E, --exceptions      exception statistics (DWT_CTRL.EXCTRCENA)\n"
    "      --comparator N    the DWT comparator watching the current-thread pointer (default 1)\n"
    "  -j, --json FILE|udp:PORT  one JSON object per interval to FILE, or datagrams to\n"
    "                        127.0.0.1:PORT (console off)\n"
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
    "      --stats           memory statistics on stderr (reads, GDB round trips, halts)\n"
    "      --elf-dir DIR     instead of -e: the ELF under DIR whose build-id the DUMP has\n"
    "  -h, --help            this text\n\n"
    "A DUMP argument (a crash dump) supplies target memory too. See docs/top.md.\n";

#define MAX_MEMS 64

struct top_cli {
    spoor_elf *elf;
    spoor_rtos *rtos;
    spoor_mem *mem;
    spoor_gdb *gdb;
    spoor_openocd *openocd;
    spoor_dump *dump;
    spoor_top *stats;
    top_view view;
    top_thread_info *threads;
    size_t nthreads;
    top_thread_info unknown; /* a TCB beyond the table */
    unsigned comparator;
    uint64_t max_intervals;
    bool stop, console, refresh, udp;
    bool live;         /* -s with --gdb: the target runs, halted only for reads (let_run) */
    bool idle_pending; /* live: the idle thread is read with the first thread (RAM set up) */
    outbuf *out, *json;
    top_ftrace ftrace;
    top_chrome chrome;
    bool have_current;
    uint32_t current;
    uint64_t last_time;
    bool warned_match; /* the watched comparator sends match packets without values */
};

/* true when the OpenOCD connection has failed (closed, timed out): spoor top stops and says
 * why once, instead of a warning per thread. */
static bool connection_lost(struct top_cli *c)
{
    if (!c->openocd || !spoor_openocd_broken(c->openocd))
        return false;
    c->stop = true;
    return true;
}

/* ---- threads ------------------------------------------------------------------------------- */

/* A live stream with --gdb: the target runs between batches of reads (each read halts it). */
static void let_run(struct top_cli *c)
{
    if (c->live && !spoor_gdb_continue(c->gdb))
        fprintf(stderr, "spoor top: warning: %s\n", spoor_last_error());
}

static void describe(struct top_cli *c, top_thread_info *info, uint32_t tcb)
{
    memset(info, 0, sizeof *info);
    info->tcb = tcb;
    if (!tcb) {
        snprintf(info->name, sizeof info->name, "(no thread)");
        return;
    }
    if (!c->rtos) /* no RTOS known: a thread is its TCB address */
        return;
    if (c->gdb || c->openocd) /* a running target: what was read before may have changed */
        spoor_mem_invalidate(c->mem);
    uint32_t idle;
    if (c->idle_pending && spoor_rtos_read_idle(c->rtos, spoor_mem_reader, c->mem, &idle))
        spoor_top_set_idle(c->stats, idle);
    c->idle_pending = false;
    spoor_rtos_thread t;
    bool ok = spoor_rtos_read_thread(c->rtos, spoor_mem_reader, c->mem, tcb, &t);
    if (!ok && !connection_lost(c))
        fprintf(stderr, "spoor top: warning: %s\n", spoor_last_error());
    let_run(c);
    if (!ok) {
        snprintf(info->name, sizeof info->name, "?");
        return;
    }
    info->read_ok = true;
    snprintf(info->name, sizeof info->name, "%s", t.name);
    if (t.has_entry)
        spoor_elf_function(c->elf, t.entry, &info->func, NULL, NULL);
    info->has_prio = t.has_prio;
    info->prio = t.prio;
    info->prio_name = t.has_prio ? spoor_rtos_priority_name(c->rtos, t.prio) : NULL;
}

static top_thread_info *find_thread(struct top_cli *c, uint32_t tcb)
{
    for (size_t i = c->nthreads; i-- > 0;)
        if (c->threads[i].tcb == tcb)
            return &c->threads[i];
    return NULL;
}

static const top_thread_info *thread_info(void *ctx, uint32_t tcb)
{
    struct top_cli *c = ctx;
    top_thread_info *info = find_thread(c, tcb);
    if (info)
        return info;
    if (c->nthreads < SPOOR_TOP_MAX_THREADS) {
        info = &c->threads[c->nthreads++];
        describe(c, info, tcb);
        return info;
    }
    describe(c, &c->unknown, tcb);
    return &c->unknown;
}

/* Priorities change (inheritance, ceilings, the application): re-read, on a live target, those
 * of the threads that ran in the interval, one small read each. */
static void refresh_priorities(struct top_cli *c, const spoor_top_report *r)
{
    if (!c->gdb && !c->openocd)
        return;
    spoor_mem_invalidate(c->mem);
    for (size_t i = 0; i < r->nthreads; i++) {
        top_thread_info *info = find_thread(c, r->threads[i].tcb);
        int32_t prio;
        if (!c->rtos || !info || !info->read_ok || !r->threads[i].cycles ||
            !spoor_rtos_read_priority(c->rtos, spoor_mem_reader, c->mem, info->tcb, &prio))
            continue;
        info->prio = prio;
        info->prio_name = spoor_rtos_priority_name(c->rtos, prio);
    }
    connection_lost(c);
    let_run(c);
}

/* ---- engine callbacks ---------------------------------------------------------------------- */

static void on_report(void *ctx, const spoor_top_report *r)
{
    struct top_cli *c = ctx;
    if (c->stop)
        return;
    if (!r->summary && !r->partial)
        refresh_priorities(c, r);
    if (connection_lost(c))
        return;
    if (c->console) {
        struct winsize ws;
        if (c->refresh) /* read each time: the terminal may have been resized */
            c->view.cols = ioctl(1, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
        top_console_report(c->out, &c->view, r, c->refresh);
        ob_flush(c->out);
    }
    if (c->json)
        top_json_report(c->json, &c->view, r, c->udp, c->udp);
    if (c->max_intervals && !r->summary && !r->partial && r->index + 1 >= c->max_intervals)
        c->stop = true;
}

static void on_switch(void *ctx, uint64_t time, uint32_t prev, bool prev_known, uint32_t next)
{
    struct top_cli *c = ctx;
    thread_info(c, next); /* a new TCB is read now, while it is current */
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
    if (c->ftrace.f && c->view.exceptions && p->type == SPOOR_ITM_EXCEPTION &&
        p->u.exception.number && p->u.exception.action != SPOOR_ITM_EXC_RETURN)
        top_ftrace_exception(&c->ftrace, &c->view, p->time, p->u.exception.number,
                             p->u.exception.action == SPOOR_ITM_EXC_ENTER,
                             c->have_current ? c->current : 0);
    if (p->type == SPOOR_ITM_DWT_MATCH && p->u.dwt_match.comparator == c->comparator &&
        !c->warned_match) { /* a switch was seen, but not to which thread */
        fprintf(stderr,
                "spoor top: warning: comparator %u sends data trace match packets, which carry "
                "no value: it watches the address without the value (ARMv8-M DWT_FUNCTION MATCH "
                "0b0101); thread switches need MATCH 0b1101, as --setup v8m and "
                "spoor_itm_watch_current_thread() write\n",
                c->comparator);
        c->warned_match = true;
    }
    spoor_top_packet(c->stats, p, c->comparator);
    if (p->time > c->last_time)
        c->last_time = p->time;
}

/* ---- input --------------------------------------------------------------------------------- */

struct decode_ctx {
    struct top_cli *c;
    spoor_itm_decoder dec;
};

static void decode(struct decode_ctx *d, const uint8_t *data, size_t len)
{
    while (len && !d->c->stop) {
        size_t n = spoor_itm_feed(&d->dec, data, len);
        data += n;
        len -= n;
        const spoor_itm_packet *p;
        while (!d->c->stop && (p = spoor_itm_next_ref(&d->dec)) != NULL)
            packet(d->c, p);
    }
}

static void drain(struct decode_ctx *d)
{
    const spoor_itm_packet *p;
    while (!d->c->stop && (p = spoor_itm_next_ref(&d->dec)) != NULL)
        packet(d->c, p);
}

static void tpiu_sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    if (id == 1)
        decode(ctx, data, len);
}

/* What the TPIU deframer could not use, one warning line: bytes outside whole frames (a frame
 * cut short by a sync, a capture starting mid-frame), data before any trace ID, reserved IDs. */
static void report_tpiu(const spoor_tpiu_deframer *t)
{
    const spoor_tpiu_stats *st = &t->stats;
    if (!st->skipped && !st->no_id_bytes && !st->reserved_ids)
        return;
    fprintf(stderr,
            "spoor top: warning: TPIU: %llu bytes outside whole frames (cut short by a sync, or "
            "before the first), %llu bytes before any trace ID, %llu reserved IDs; %s\n",
            (unsigned long long)st->skipped, (unsigned long long)st->no_id_bytes,
            (unsigned long long)st->reserved_ids, t->why);
}

static int run(struct top_cli *c, const char *spec, bool tpiu)
{
    spoor_trace_source *src = spoor_trace_source_open(spec, 10);
    if (!src)
        return cli_error("top", "%s", spoor_last_error());
    let_run(c); /* connected to the stream: the target may run now */
    static struct decode_ctx d;
    d.c = c;
    spoor_itm_init(&d.dec, false);
    static spoor_tpiu_deframer tp;
    if (tpiu)
        spoor_tpiu_init(&tp, -1, tpiu_sink, &d);
    int status = SPOOR_EXIT_OK;
    while (!c->stop) {
        const uint8_t *data;
        /* files never wait; a live source going quiet releases what the decoder holds */
        ssize_t n = spoor_trace_source_receive(src, &data, 100);
        if (n > 0) {
            if (tpiu)
                spoor_tpiu_feed(&tp, data, (size_t)n);
            else
                decode(&d, data, (size_t)n);
        } else if (n == SPOOR_TRACE_IDLE) {
            spoor_itm_flush(&d.dec);
            drain(&d);
        } else if (n == SPOOR_TRACE_RECONNECTED) {
            fprintf(stderr, "spoor top: %s: reconnected; the stream has a gap here\n", spec);
            spoor_itm_finish(&d.dec);
            drain(&d);
        } else {
            if (n == SPOOR_TRACE_ERROR)
                status = cli_error("top", "%s", spoor_last_error());
            break;
        }
    }
    if (!c->stop) {
        if (tpiu)
            spoor_tpiu_finish(&tp);
        spoor_itm_finish(&d.dec);
        drain(&d);
        spoor_top_finish(c->stats, c->last_time);
    }
    if (tpiu && !connection_lost(c))
        report_tpiu(&tp);
    spoor_trace_source_close(src);
    return status;
}

/* ---- set-up -------------------------------------------------------------------------------- */

/* A register through the live layer: whole, or the bits of mask (read-modify-write). */
static bool write_register(spoor_mem *m, const spoor_reg_write *w)
{
    uint32_t v = w->value;
    if (w->mask != 0xFFFFFFFFu) {
        uint32_t old;
        if (!spoor_mem_read_u32(m, w->addr, &old))
            return false;
        v = (old & ~w->mask) | (w->value & w->mask);
    }
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return spoor_mem_write(m, w->addr, b, 4);
}

/* ITM and DWT through the live target (OpenOCD -W or a GDB server --gdb): the registers of
 * spoor_itm_watch_plan() (after checking that the comparator exists), or, over OpenOCD,
 * orbtop-rtos's Tcl procedures. */
static int set_up_trace(struct top_cli *c, const char *how, unsigned comparator)
{
    uint32_t watch = spoor_rtos_current_address(c->rtos);
    char out[1024];
    if (!strcmp(how, "proc")) {
        char command[64];
        if (!c->openocd)
            return cli_error("top", "--setup proc calls OpenOCD procedures: give -W");
        snprintf(command, sizeof command, "rtos_dwt_config 0x%08x", watch);
        if (!spoor_openocd_command(c->openocd, command, out, sizeof out) ||
            (c->view.exceptions &&
             !spoor_openocd_command(c->openocd, "exception_trace_enable", out, sizeof out)))
            return cli_error("top", "%s", spoor_last_error());
        return 0;
    }
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = spoor_itm_watch_plan(watch, comparator,
                                    strcmp(how, "v8m") ? SPOOR_DWT_ARMV7M : SPOOR_DWT_ARMV8M,
                                    c->view.exceptions, w);
    if (!n)
        return cli_error("top", "the current-thread pointer 0x%08x is not word aligned", watch);
    uint32_t ctrl;
    if (!write_register(c->mem, &w[0]) || /* DEMCR.TRCENA: the DWT reads as zero without it */
        !spoor_mem_read_u32(c->mem, SPOOR_DWT_CTRL, &ctrl))
        return cli_error("top", "--setup: %s", spoor_last_error());
    if ((ctrl >> 28) <= comparator)
        return cli_error("top",
                         "--setup: DWT_CTRL 0x%08x: the core has %u comparators, no "
                         "comparator %u",
                         ctrl, ctrl >> 28, comparator);
    for (size_t i = 1; i < n; i++)
        if (!write_register(c->mem, &w[i]))
            return cli_error("top", "--setup: %s", spoor_last_error());
    return 0;
}

static int open_udp(const char *port_text, int *fd)
{
    uint32_t port;
    if (!cli_parse_u32(port_text, &port) || port == 0 || port > 65535)
        return cli_error("top", "-j udp:%s: expected a port 1..65535", port_text);
    *fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (*fd < 0 || connect(*fd, (struct sockaddr *)&a, sizeof a) != 0)
        return cli_error("top", "-j udp:%s: %s", port_text, strerror(errno));
    return 0;
}

static int open_memory(struct top_cli *c, const char *gdb, const char *telnet, const char *dump,
                       const spoor_raw_memory *mems, size_t nmems)
{
    c->mem = spoor_mem_new();
    if (!c->mem)
        return cli_error("top", "out of memory");
    /* the ELF's read-only contents first: flash does not change while the target runs, and
     * names in it then cost no round trip */
    if (!spoor_mem_add_elf(c->mem, c->elf))
        return cli_error("top", "%s", spoor_last_error());
    if (telnet) {
        c->openocd = !strncmp(telnet, "tcl:", 4) ? spoor_openocd_connect_tcl(telnet + 4, 5000)
                                                 : spoor_openocd_connect(telnet, 5000);
        if (!c->openocd || !spoor_mem_add_openocd(c->mem, c->openocd))
            return cli_error("top", "%s", spoor_last_error());
    }
    if (gdb) {
        c->gdb = spoor_gdb_connect(gdb, 5000);
        if (!c->gdb || !spoor_mem_add_gdb(c->mem, c->gdb))
            return cli_error("top", "%s", spoor_last_error());
    }
    if (dump) {
        c->dump = spoor_dump_load(dump);
        if (!c->dump || !spoor_mem_add_dump(c->mem, c->dump))
            return cli_error("top", "%s", spoor_last_error());
    }
    for (size_t i = 0; i < nmems; i++)
        if (!spoor_mem_add_file(c->mem, mems[i].address, mems[i].path))
            return cli_error("top", "%s", spoor_last_error());
    return 0;
}

static void print_stats(const struct top_cli *c)
{
    spoor_mem_stats st;
    spoor_mem_stats_get(c->mem, &st);
    fprintf(stderr,
            "spoor top: memory: %" PRIu64 " reads; live target: %" PRIu64 " round trips, %" PRIu64
            " bytes, %" PRIu64 " page hits, %" PRIu64 " page misses; %zu threads\n",
            st.reads, st.round_trips, st.bytes_wire, st.cache_hits, st.cache_misses, c->nthreads);
    spoor_gdb_stats g;
    if (c->live) {
        spoor_gdb_stats_get(c->gdb, &g);
        fprintf(stderr, "spoor top: running target: %" PRIu64 " halts, %.3f ms halted in all\n",
                g.halts, (double)g.halted_us / 1000.0);
    }
}

static void cleanup(struct top_cli *c)
{
    spoor_top_free(c->stats);
    spoor_rtos_close(c->rtos);
    spoor_mem_free(c->mem);
    if (c->gdb)
        spoor_gdb_close(c->gdb);
    spoor_openocd_close(c->openocd);
    if (c->dump)
        spoor_dump_free(c->dump);
    if (c->elf)
        spoor_elf_close(c->elf);
    free(c->threads);
}

struct top_args {
    const char *elf, *server, *input, *kind, *json, *ftrace, *chrome, *gdb, *telnet, *setup;
    bool tpiu, stats;
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
        OPT_SETUP
    };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"server", required_argument, 0, 's'},
                                         {"input", required_argument, 0, OPT_INPUT},
                                         {"protocol", required_argument, 0, 'p'},
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
                                         {"help", no_argument, 0, 'h'},
                                         CLI_ELF_DIR_LONG_OPTION,
                                         {0, 0, 0, 0}};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:s:p:T:F:I:n:Ej:W:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': a->elf = optarg; break;
        case CLI_OPT_ELF_DIR: cli_elf_dir_option("top", optarg); break;
        case 's': a->server = optarg; break;
        case OPT_INPUT: a->input = optarg; break;
        case 'p':
            if (!strcasecmp(optarg, "TPIU"))
                a->tpiu = true;
            else if (strcasecmp(optarg, "ITM") != 0)
                return cli_error("top", "-p %s: expected ITM or TPIU", optarg);
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
                return cli_error("top", "%s", spoor_last_error());
            break;
        case OPT_STATS: a->stats = true; break;
        case 'W': a->telnet = optarg; break;
        case OPT_SETUP:
            if (strcmp(optarg, "v7m") && strcmp(optarg, "v8m") && strcmp(optarg, "proc"))
                return cli_error("top", "--setup %s: expected v7m, v8m or proc", optarg);
            a->setup = optarg;
            break;
        case 'h': fputs(top_usage, stdout); return -1;
        default: return cli_bad_option("top", argv);
        }
    }
    if (!a->server == !a->input)
        return cli_error("top", "give the stream: -s HOST:PORT or --input FILE");
    if (!a->hz)
        return cli_error("top", "give the CPU clock: -F HZ (timestamps count its cycles)");
    if (argc - optind > 1)
        return cli_error("top", "more than one DUMP given");
    if (a->setup && !a->telnet && !a->gdb)
        return cli_error("top", "--setup writes to the live target: give -W [HOST:]PORT or --gdb");
    if (a->telnet && a->gdb)
        return cli_error("top", "give one live target: -W or --gdb");
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static struct top_args a;
    static struct top_cli c;
    memset(&a, 0, sizeof a);
    memset(&c, 0, sizeof c);
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
        return cli_error("top", "out of memory");
    if (!(c.elf = cli_open_elf_for("top", a.elf, dump))) {
        cleanup(&c);
        return SPOOR_EXIT_USAGE;
    }
    if (!(c.rtos = spoor_rtos_open(c.elf, a.kind))) {
        spoor_rtos_kind found;
        if (strcmp(a.kind, "auto") != 0 || a.setup || spoor_rtos_detect(c.elf, &found)) {
            rc = cli_error("top", "%s", spoor_last_error());
            goto out;
        }
        /* no RTOS at all: the statistics need none, threads are then TCB addresses */
        fprintf(stderr, "spoor top: warning: %s; threads are shown by TCB address only\n",
                spoor_last_error());
    }
    if ((rc = open_memory(&c, a.gdb, a.telnet, dump, a.mems, a.nmems)) != 0)
        goto out;
    cli_warn_build_id("top", c.dump, c.elf);
    if (a.setup && (rc = set_up_trace(&c, a.setup, a.comparator)) != 0)
        goto out;
    c.live = c.gdb && a.server;
    c.view.rtos_name = c.rtos ? spoor_rtos_display_name(spoor_rtos_kind_of(c.rtos)) : "no RTOS";
    c.view.cpu_hz = a.hz;
    c.view.interval_ms = a.interval_ms;
    c.view.thread = thread_info;
    c.view.ctx = &c;
    c.console = true;
    if (a.json) {
        int fd = -1;
        if (!strncmp(a.json, "udp:", 4)) {
            if ((rc = open_udp(a.json + 4, &fd)) != 0)
                goto out;
            c.udp = true;
            c.console = false;
        } else if ((fd = open(a.json, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
            rc = cli_error("top", "-j %s: cannot open: %s", a.json, strerror(errno));
            goto out;
        }
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
        rc = cli_error("top", "%s", spoor_last_error());
        goto out;
    }
    uint32_t idle;
    c.idle_pending = c.live && c.rtos; /* a target halted at reset has no RAM set up yet */
    if (c.rtos && !c.live && spoor_rtos_read_idle(c.rtos, spoor_mem_reader, c.mem, &idle))
        spoor_top_set_idle(c.stats, idle);
    if (connection_lost(&c)) {
        rc = cli_error("top", "%s", spoor_openocd_broken(c.openocd));
        goto out;
    }
    spoor_top_set_idle(c.stats, 0); /* no thread at all: the scheduler waits */
    char spec[300];
    if (a.server)
        snprintf(spec, sizeof spec, "tcp:%s", a.server);
    else
        snprintf(spec, sizeof spec, "%s", a.input);
    rc = run(&c, spec, a.tpiu);
    if (connection_lost(&c) && !rc)
        rc = cli_error("top", "%s", spoor_openocd_broken(c.openocd));
    if (c.ftrace.f && !top_ftrace_close(&c.ftrace))
        rc = cli_error("top", "--ftrace %s: write failed", a.ftrace);
    if (c.chrome.trace.ob && !top_chrome_close(&c.chrome, &c.view, spoor_top_now(c.stats)))
        rc = cli_error("top", "--chrome %s: write failed", a.chrome);
    if (!ob_flush(&out) || (c.json && !ob_flush(c.json)))
        rc = cli_error("top", "cannot write the output: %s", strerror(errno));
    if (a.stats)
        print_stats(&c);
out:
    if (c.json)
        close(c.json->fd);
    if (c.ftrace.f)
        fclose(c.ftrace.f);
    chrome_trace_discard(&c.chrome.trace); /* not closed above: failed, no file */
    cleanup(&c);
    return rc;
}
