/* spoor mtb: the Micro Trace Buffer of a crash dump, of memory images or of a live target, as
 * the packets it holds, the instructions executed between them (--flow), the calls recovered
 * from them (--calls) or a Chrome/Perfetto trace (--chrome). docs/mtb.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_trace.h"
#include "cli.h"
#include "mtb_flow_print.h"
#include "mtb_print.h"
#include "spoor/call_stack.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/mtb_decode.h"
#include "spoor/snapshot.h"
#include "spoor/thumb.h"
#include "target_input.h"
#include "util/json_write.h"
#include "util/outbuf.h"

static const char mtb_usage[] =
    "usage: spoor mtb -e FW.elf [OPTIONS] DUMP\n"
    "       spoor mtb -e FW.elf [OPTIONS] --mem 0xE0043000:regs.bin --mem BASE:buffer.bin\n"
    "       spoor mtb -e FW.elf [OPTIONS] --gdb HOST:PORT\n"
    "Decodes the Micro Trace Buffer (Cortex-M33 MTB-M33, Cortex-M0+ MTB-M0+): the register\n"
    "block (POSITION, MASTER, FLOW, BASE) says where the circular buffer lies and which packet\n"
    "is the oldest; each packet is one change of flow, source and destination, oldest first.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -n, --limit N      only the newest N packets\n"
    "      --flow         every instruction executed between packets, disassembled, with\n"
    "                     the source lines (like gdb's disassemble /s)\n"
    "      --calls        the call tree recovered from the flow (BL/BLX, returns, exceptions)\n"
    "      --chrome FILE  the recovered calls as Chrome/Perfetto trace-event JSON\n"
    "  -j, --json         one JSON object per line: packets, or instructions with --flow\n"
    "      --mtb-regs ADDR  the MTB register block (default 0xE0043000, the MTB-M33's; an\n"
    "                     MTB-M0+ block is where the vendor put it)\n"
    "      --freeze       with --gdb: clear MASTER.EN (and TSTARTEN) before reading, so the\n"
    "                     buffer stops moving, and write MASTER back afterwards\n" TARGET_INPUT_HELP
    "  -h, --help         this text\n\n"
    "A crash dump with an MTB record uses the registers and buffer the fault handler saved.\n"
    "Otherwise the register block and the buffer are read from target memory: --mem images\n"
    "(no --regs needed), or a live target over GDB (stop it first, or give --freeze: a running\n"
    "MTB moves on).\n"
    "Exit status: 0 trace printed, 2 usage or input error (no MTB, empty or all-zero buffer, "
    "...).\n";

struct mtb {
    spoor_elf *elf;
    spoor_mem *mem;
    outbuf out;
    int json, flow, calls;
    const char *chrome_path;
    chrome_trace chrome;
    json_out jout;          /* JSON writer onto out */
    mtb_flow_printer flowp; /* --flow */
    /* --calls / --chrome: the calls recovered from the flow, on one stack (context 0) */
    spoor_call_stack stack;
    unsigned depth; /* its frames open */
    bool failed;    /* out of memory */
    uint64_t insns; /* instructions executed so far: the time base of --chrome */
};

/* ---- names ------------------------------------------------------------------------------- */

static const char *function_of(struct mtb *m, uint32_t addr)
{
    const char *name = NULL;
    if (!spoor_elf_function(m->elf, addr, &name, NULL, NULL))
        return NULL;
    return name;
}

/* ---- --calls and --chrome ---------------------------------------------------------------- */

static void chrome_event(struct mtb *m, const char *phase, const char *name)
{
    if (m->chrome.ob)
        chrome_trace_event(&m->chrome, name ? name : "??", phase, m->insns, 1, 1);
}

static void call_line(struct mtb *m, const char *prefix, const char *name, uint32_t addr)
{
    if (!m->calls)
        return;
    for (unsigned i = 1; i < m->depth; i++)
        ob_str(&m->out, "  ");
    ob_str(&m->out, prefix);
    ob_str(&m->out, name ? name : "??");
    ob_str(&m->out, " (");
    ob_hex8(&m->out, addr);
    ob_str(&m->out, ")\n");
}

static const char *enter_prefix(spoor_call_stack_cause cause)
{
    switch (cause) {
    case SPOOR_CALL_STACK_EXCEPTION: return "[exception] ";
    case SPOOR_CALL_STACK_TAIL_CHAIN: return "[tail-chained exception] ";
    case SPOOR_CALL_STACK_TAIL_CALL: return "-> ";
    default: return "";
    }
}

/* The call stack's events: a --calls line and a B event for each frame entered (a tail call
 * ends its maker's B first), an E for each frame that ends. */
static void on_call_event(void *arg, const spoor_call_stack_event *ev)
{
    struct mtb *m = arg;
    if (ev->kind == SPOOR_CALL_STACK_ENTER) {
        const char *name = function_of(m, ev->frame->at);
        m->depth = (unsigned)ev->depth;
        call_line(m, enter_prefix(ev->cause), name, ev->frame->at);
        chrome_event(m, "B", name);
    } else if (ev->kind == SPOOR_CALL_STACK_EXIT) {
        chrome_event(m, "E", ev->frame ? function_of(m, ev->frame->at) : NULL);
        m->depth = (unsigned)ev->depth - 1;
    }
}

/* run() calls this while frames are open at the end of the trace: it ends them all. */
static void pop(struct mtb *m)
{
    spoor_call_stack_unwind(&m->stack, 0, m->insns);
}

/* The function around addr for the call stack: its start, SPOOR_CALL_UNKNOWN without a name.
 * (The start may come with the Thumb bit, depending on where in the function addr is.) */
static uint32_t function_id(struct mtb *m, uint32_t addr)
{
    const char *name = NULL;
    uint32_t start;
    if (!spoor_elf_function(m->elf, addr, &name, &start, NULL) || !name)
        return SPOOR_CALL_UNKNOWN;
    return start & ~1u;
}

/* The size of the call instruction (BL, BLX) at addr, 0 when it is none or cannot be read. */
static unsigned call_size(struct mtb *m, uint32_t addr)
{
    uint8_t code[4];
    if (!spoor_mem_read(m->mem, addr, code, 2))
        return 0;
    unsigned size = spoor_thumb_size((uint16_t)(code[0] | code[1] << 8));
    if (size == 4 && !spoor_mem_read(m->mem, addr, code, 4))
        return 0;
    return spoor_thumb_is_call(code, size) ? size : 0;
}

/* One packet onto the call stack: a call when its source is BL/BLX, an exception entry, the
 * second packet of an exception return, or a branch (a return, a tail call). */
static void calls_packet(struct mtb *m, const spoor_mtb_packet *p, bool first)
{
    spoor_call_stack *cs = &m->stack;
    uint32_t fn = function_id(m, p->dst);
    bool ok = true;
    if (first || p->s || m->depth == 0) {    /* nothing known before: start from here */
        if (spoor_mtb_is_exc_return(p->dst)) /* the next packet says where it went */
            spoor_call_stack_unwind(cs, 0, m->insns);
        else
            ok = spoor_call_stack_restart(cs, 0, fn, p->dst, m->insns);
    } else if (p->kind == SPOOR_MTB_EXCEPTION_ENTRY) {
        ok = spoor_call_stack_exception(cs, 0, fn, p->dst, p->src, m->insns);
    } else if (p->kind == SPOOR_MTB_EXCEPTION_RETURN) {
        if (p->a) /* the second packet says where execution continues */
            ok = spoor_call_stack_exception_return(cs, 0, fn, p->dst, m->insns);
    } else {
        unsigned size = call_size(m, p->src);
        ok = size ? spoor_call_stack_call(cs, 0, fn, p->dst, p->src + size, m->insns)
                  : spoor_call_stack_branch(cs, 0, fn, p->dst, m->insns);
    }
    if (!ok)
        m->failed = true;
}

/* ---- the walk ------------------------------------------------------------------------------ */

struct walk {
    struct mtb *m;
    const spoor_mtb_packet *first;
};

static bool on_step(void *ctx, const spoor_mtb_step *s)
{
    struct walk *w = ctx;
    struct mtb *m = w->m;
    switch (s->kind) {
    case SPOOR_MTB_STEP_INSN:
        m->insns++;
        if (m->flow)
            mtb_flow_insn(&m->flowp, s);
        break;
    case SPOOR_MTB_STEP_PACKET:
        if (m->flow)
            mtb_flow_packet(&m->flowp, s->packet);
        if (m->calls || m->chrome.ob)
            calls_packet(m, s->packet, s->packet == w->first);
        break;
    case SPOOR_MTB_STEP_GAP:
        if (m->flow)
            mtb_flow_gap(&m->flowp, s);
        break;
    }
    return !m->out.failed && !m->failed;
}

/* ---- input ------------------------------------------------------------------------------- */

static int run(struct mtb *m, const spoor_mtb_trace *t, uint32_t limit, const char *name)
{
    const spoor_mtb_layout *l = &t->layout;
    spoor_mtb_packet *packets = malloc(sizeof *packets * (l->size / 8u));
    int rc = SPOOR_EXIT_OK;
    if (!packets) {
        rc = cli_out_of_memory("mtb");
        goto out;
    }
    size_t n;
    if (!spoor_mtb_decode(l, t->bytes, l->size, packets, &n)) {
        rc = cli_error("mtb", "%s: %s", name, spoor_last_error());
        goto out;
    }
    const spoor_mtb_packet *p = packets;
    if (limit && limit < n) {
        p += n - limit;
        n = limit;
    }
    if (m->chrome_path) {
        if (!chrome_trace_open(&m->chrome, m->chrome_path)) {
            rc = cli_error("mtb", "%s: cannot open: %s", m->chrome_path, strerror(errno));
            goto out;
        }
        chrome_trace_track(&m->chrome, 1, 1, "core (time: instructions executed)");
    }
    if (l->wrapped && !m->json && (!m->chrome.ob || m->flow || m->calls)) /* as spoor calls */
        ob_printf(&m->out,
                  "--- buffer wrapped: older packets were overwritten (%" PRIu32 " bytes, %" PRIu32
                  " packets of 8 bytes) ---\n",
                  l->size, l->size / 8u);
    if (m->flow || m->calls || m->chrome.ob) {
        struct walk w = {m, p};
        spoor_mtb_flow(p, n, spoor_mem_reader, m->mem, 0, on_step, &w);
        while (m->depth)
            pop(m);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (m->json) {
                mtb_packet_json(&m->jout, &p[i]);
                json_finish(&m->jout);
            } else
                mtb_packet_text(&m->out, m->elf, &p[i]);
        }
    }
    if (m->chrome.ob && !chrome_trace_close(&m->chrome))
        rc = cli_error("mtb", "%s: cannot write: %s", m->chrome_path, strerror(errno));
out:
    free(packets);
    return rc;
}

/* The trace from the dump's MTB record (from_dump) or from target memory, with the MTB stopped
 * while it is read and decoded (freeze), to the outputs. */
static int run_trace(struct mtb *m, spoor_snapshot *snap, bool from_dump, bool freeze,
                     uint32_t regs_addr, uint32_t limit)
{
    spoor_mtb_frozen frozen;
    if (freeze && !spoor_mtb_freeze(snap->mem, regs_addr, snap->input, &frozen))
        return cli_fail("mtb");
    spoor_mtb_trace t;
    bool ok = from_dump
                  ? spoor_mtb_from_dump(snap->dump, snap->input, &t)
                  : spoor_mtb_read(snap->mem, regs_addr, freeze ? &frozen : NULL, snap->input, &t);
    char why[512] = "";
    int rc = SPOOR_EXIT_OK;
    if (ok)
        rc = run(m, &t, limit, snap->input);
    else
        snprintf(why, sizeof why, "%s", spoor_last_error());
    spoor_mtb_trace_free(&t);
    if (freeze && !spoor_mtb_thaw(snap->mem, &frozen, snap->input)) {
        if (!ok) /* one line: what failed, and the state the target is left in */
            return cli_error("mtb",
                             "%s; the MTB stays stopped (MTB_MASTER 0x%08x not written back)", why,
                             frozen.master);
        int wrc = cli_fail("mtb");
        if (rc == SPOOR_EXIT_OK)
            rc = wrc;
    }
    return ok ? rc : cli_error("mtb", "%s", why);
}

int cmd_mtb(int argc, char **argv)
{
    enum { OPT_FLOW = 300, OPT_CALLS, OPT_CHROME, OPT_MTB_REGS, OPT_FREEZE };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"json", no_argument, 0, 'j'},
                                         {"limit", required_argument, 0, 'n'},
                                         {"flow", no_argument, 0, OPT_FLOW},
                                         {"calls", no_argument, 0, OPT_CALLS},
                                         {"chrome", required_argument, 0, OPT_CHROME},
                                         {"mtb-regs", required_argument, 0, OPT_MTB_REGS},
                                         {"freeze", no_argument, 0, OPT_FREEZE},
                                         {"help", no_argument, 0, 'h'},
                                         TARGET_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    static struct mtb m;
    memset(&m, 0, sizeof m);
    static target_input in;
    memset(&in, 0, sizeof in);
    const char *elf_path = NULL;
    uint32_t limit = 0, regs_addr = SPOOR_MTB_M33_REGISTERS;
    int opt, rc, freeze = 0;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:jn:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': elf_path = optarg; break;
        case 'j': m.json = 1; break;
        case 'n':
            if (!cli_parse_u32(optarg, &limit) || limit == 0)
                return cli_error("mtb", "--limit: expected a packet count > 0, got '%s'", optarg);
            break;
        case OPT_FLOW: m.flow = 1; break;
        case OPT_CALLS: m.calls = 1; break;
        case OPT_CHROME: m.chrome_path = optarg; break;
        case OPT_MTB_REGS:
            if (!cli_parse_u32(optarg, &regs_addr) || (regs_addr & 3u))
                return cli_error("mtb", "--mtb-regs: expected a word-aligned address, got '%s'",
                                 optarg);
            break;
        TARGET_INPUT_CASES:
            if ((rc = target_input_option("mtb", &in, opt, optarg)))
                return rc;
            break;
        case OPT_FREEZE: freeze = 1; break;
        case 'h': fputs(mtb_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("mtb", argv);
        }
    }
    if (m.flow && m.calls)
        return cli_error("mtb", "give --flow or --calls, not both");
    if (m.json && m.calls)
        return cli_error("mtb", "--json covers packets and --flow; --calls is text only");
    if (freeze && !in.src.gdb)
        return cli_error("mtb", "--freeze stops a live MTB: it needs --gdb HOST:PORT");
    if (!(m.elf = target_input_elf("mtb", elf_path, argv + optind, argc - optind)))
        return SPOOR_EXIT_USAGE;
    ob_init(&m.out, 1);
    json_init(&m.jout, &m.out);
    mtb_flow_printer_init(&m.flowp, m.elf, &m.out, m.json ? &m.jout : NULL);
    spoor_call_stack_init(&m.stack, SPOOR_CALL_STACK_DEFAULT_LIMIT, SPOOR_CALL_STACK_FORGET,
                          on_call_event, &m);
    in.src.memory_only = true; /* the MTB needs no CPU registers */
    spoor_snapshot *snap = target_input_open("mtb", &in, argv + optind, argc - optind, m.elf);
    if (!snap) {
        rc = SPOOR_EXIT_USAGE;
        goto out;
    }
    m.mem = snap->mem;
    cli_warn_build_id("mtb", snap->dump, m.elf);
    /* a crash dump's MTB record; a --regs snapshot's dump holds none: memory then */
    rc = run_trace(&m, snap, snap->dump && !in.src.regs_path, freeze, regs_addr, limit);
    if (m.failed && rc == SPOOR_EXIT_OK)
        rc = cli_out_of_memory("mtb");
    if (!ob_flush(&m.out) && rc == SPOOR_EXIT_OK)
        rc = cli_error("mtb", "cannot write the trace: %s", strerror(errno));
out:
    spoor_snapshot_close(snap);
    mtb_flow_printer_free(&m.flowp);
    spoor_call_stack_free(&m.stack);
    spoor_elf_close(m.elf);
    return rc;
}
