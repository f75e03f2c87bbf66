/* spoor calls: the function-call recorder's ring (target/include/spoor/calls.h), read from a
 * crash dump, RAM images or a live target, as a call tree with names from the ELF. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json_out.h"
#include "outbuf.h"
#include "spoor/call_trace.h"
#include "spoor/elf.h"
#include "spoor/memory.h"
#include "spoor/snapshot.h"
#include "target_input.h"

static const char calls_usage[] =
    "usage: spoor calls -e FW.elf [OUTPUT] DUMP\n"
    "       spoor calls -e FW.elf [OUTPUT] --mem ADDR:FILE ... [--regs regs.json]\n"
    "       spoor calls -e FW.elf [OUTPUT] --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "Prints the calls and returns the firmware's call recorder (spoor_calls_init,\n"
    "-finstrument-functions) left in its RAM ring, oldest first, indented by call depth:\n"
    "  { SITE->FUNCTION  CALLER:OFFSET->NAME     a call; SITE is the return address\n"
    "  } SITE<-FUNCTION  CALLER:OFFSET<-NAME     its return\n"
    "The ring and its state object (symbol spoor_calls_state) must be in the input: register\n"
    "both as dump regions, or give a RAM image that holds them.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -j, --json         one JSON object per record instead of text\n"
    "      --chrome FILE  Chrome/Perfetto trace-event JSON into FILE (one track per context)\n"
    "      --folded       flame-graph input: one line per call stack with its weight\n"
    "  -s, --stats        per function: calls, and inclusive/exclusive time when "
    "recorded\n" TARGET_INPUT_HELP "  -h, --help         this text\n\n"
    "Exit status: 0 records printed, 2 usage or input error (no recorder in the ELF, ring\n"
    "not in the input, corrupt state, build-id of the dump differs from the ELF's, ...).\n";

enum { OPT_CHROME = 300, OPT_FOLDED };

struct calls {
    const char *elf_path, *chrome_path;
    bool json, folded, stats;
    spoor_elf *elf;
    spoor_calls_info state;
    spoor_call_trace trace;
    const char **ctx_label; /* per context */
    char (*id_label)[24];   /* "ctx N" labels of recorded context ids */
    int label_width;
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

static bool label_contexts(struct calls *c)
{
    const spoor_call_trace *t = &c->trace;
    size_t n = t->context_count ? t->context_count : 1;
    c->ctx_label = calloc(n, sizeof *c->ctx_label);
    c->id_label = calloc(n, sizeof *c->id_label);
    if (!c->ctx_label || !c->id_label)
        return false;
    for (size_t i = 0; i < t->context_count; i++) {
        const spoor_call_context *ctx = &t->contexts[i];
        const char *label = "thread";
        if (ctx->handler && t->has_context) {
            snprintf(c->id_label[i], sizeof c->id_label[i], "ctx %" PRIu32, ctx->id);
            label = c->id_label[i];
        } else if (ctx->handler) {
            uint32_t off;
            label = name_at(c->elf, ctx->id, &off);
            if (!label)
                label = "handler";
        }
        c->ctx_label[i] = label;
        int w = (int)strlen(label);
        if (w > c->label_width)
            c->label_width = w;
    }
    return true;
}

/* ---- text ---------------------------------------------------------------------------------- */

static void print_text(struct calls *c)
{
    outbuf *ob = &c->out;
    const spoor_call_trace *t = &c->trace;
    bool many = t->context_count > 1;
    if (t->wrapped)
        ob_printf(ob,
                  "--- ring wrapped: older records were overwritten (%" PRIu32
                  " records of %u bytes) ---\n",
                  c->state.capacity, c->state.record_size);
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        if (r->after_gap && i > 0)
            ob_str(ob, "--- records lost here (a slot was claimed but never written) ---\n");
        if (many)
            ob_printf(ob, "%-*s| ", c->label_width, c->ctx_label[r->context]);
        for (int d = 0; d < r->depth; d++)
            ob_char(ob, ' ');
        bool enter = r->kind == SPOOR_CALL_ENTER;
        ob_printf(ob, "%c %08" PRIX32 "%s%08" PRIX32 "  ", enter ? '{' : '}', r->site,
                  enter ? "->" : "<-", r->function);
        put_site(ob, c->elf, r->site);
        ob_str(ob, enter ? "->" : "<-");
        put_function(ob, c->elf, r->function);
        if (t->has_time)
            ob_printf(ob, "  @%" PRIu64, r->time_ticks);
        ob_char(ob, '\n');
    }
}

/* ---- JSON lines ---------------------------------------------------------------------------- */

static void print_json(struct calls *c)
{
    const spoor_call_trace *t = &c->trace;
    char fbuf[512], sbuf[512];
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        json_out j;
        json_init(&j, &c->out);
        json_object_begin(&j, NULL);
        json_string(&j, "kind", r->kind == SPOOR_CALL_ENTER ? "enter" : "exit");
        json_hex32(&j, "fn", r->function);
        json_hex32(&j, "site", r->site);
        json_string(&j, "function", json_name(c->elf, r->function, false, fbuf, sizeof fbuf));
        json_string(&j, "caller", json_name(c->elf, r->site, true, sbuf, sizeof sbuf));
        json_int(&j, "depth", r->depth);
        if (t->has_time)
            json_uint(&j, "time", r->time_ticks);
        if (t->has_context)
            json_uint(&j, "context", r->context_id);
        else if (t->contexts[r->context].handler)
            json_string(&j, "handler", c->ctx_label[r->context]);
        if (r->after_gap)
            json_bool(&j, "after_gap", true);
        json_object_end(&j);
        json_finish(&j);
    }
}

/* ---- call stacks: folded, stats, chrome ---------------------------------------------------- */

#define MAX_STACK 256

struct frame {
    uint32_t fn;
    uint64_t start, children;
};

struct fn_stats {
    uint32_t fn;
    uint64_t calls, inclusive, exclusive;
};

struct stack_walk {
    struct frame frames[MAX_STACK];
    size_t depth;
};

static int fn_stats_cmp(const void *a, const void *b)
{
    const struct fn_stats *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static struct fn_stats *stats_of(struct fn_stats **tab, size_t *n, size_t *cap, uint32_t fn)
{
    for (size_t i = 0; i < *n; i++) /* few distinct functions in a ring: linear is fine */
        if ((*tab)[i].fn == fn)
            return &(*tab)[i];
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct fn_stats *t = realloc(*tab, nc * sizeof *t);
        if (!t)
            return NULL;
        *tab = t;
        *cap = nc;
    }
    (*tab)[*n] = (struct fn_stats){.fn = fn};
    return &(*tab)[(*n)++];
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

/* Walks every context's stack; calls on_exit for each matched call (enter..exit pair) and
 * on_enter for each enter. */
static int walk_stacks(struct calls *c, bool folded)
{
    const spoor_call_trace *t = &c->trace;
    struct stack_walk *w = calloc(t->context_count ? t->context_count : 1, sizeof *w);
    struct fn_stats *tab = NULL;
    size_t n = 0, cap = 0;
    if (!w)
        return cli_error("calls", "out of memory");
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        struct stack_walk *s = &w[r->context];
        if (r->kind == SPOOR_CALL_ENTER) {
            struct fn_stats *f = stats_of(&tab, &n, &cap, r->function);
            if (!f)
                break;
            f->calls++;
            if (s->depth < MAX_STACK)
                s->frames[s->depth] = (struct frame){r->function, r->time_ticks, 0};
            s->depth++;
            if (folded && !t->has_time) { /* weight: one per call */
                if (c->trace.context_count > 1 && c->trace.contexts[r->context].handler) {
                    ob_str(&c->out, c->ctx_label[r->context]);
                    ob_char(&c->out, ';');
                }
                for (size_t d = 0; d < s->depth && d < MAX_STACK; d++) {
                    if (d)
                        ob_char(&c->out, ';');
                    put_name_plain(&c->out, c->elf, s->frames[d].fn);
                }
                ob_str(&c->out, " 1\n");
            }
            continue;
        }
        if (s->depth == 0) /* the ring starts inside this call: its entry is lost */
            continue;
        s->depth--;
        if (s->depth >= MAX_STACK)
            continue;
        struct frame *fr = &s->frames[s->depth];
        uint64_t incl = r->time_ticks - fr->start, excl = incl - fr->children;
        if (s->depth > 0)
            s->frames[s->depth - 1].children += incl;
        struct fn_stats *f = stats_of(&tab, &n, &cap, fr->fn);
        if (!f)
            break;
        f->inclusive += incl;
        f->exclusive += excl;
        if (folded && t->has_time) { /* weight: exclusive time */
            if (c->trace.context_count > 1 && c->trace.contexts[r->context].handler) {
                ob_str(&c->out, c->ctx_label[r->context]);
                ob_char(&c->out, ';');
            }
            for (size_t d = 0; d <= s->depth; d++) {
                if (d)
                    ob_char(&c->out, ';');
                put_name_plain(&c->out, c->elf, s->frames[d].fn);
            }
            ob_printf(&c->out, " %" PRIu64 "\n", excl);
        }
    }
    if (!folded) {
        qsort(tab, n, sizeof *tab, fn_stats_cmp);
        ob_printf(&c->out, "%10s %14s %14s  %s\n", "calls", "inclusive", "exclusive", "function");
        for (size_t i = 0; i < n; i++) {
            if (t->has_time)
                ob_printf(&c->out, "%10" PRIu64 " %14" PRIu64 " %14" PRIu64 "  ", tab[i].calls,
                          tab[i].inclusive, tab[i].exclusive);
            else
                ob_printf(&c->out, "%10" PRIu64 " %14s %14s  ", tab[i].calls, "-", "-");
            put_name_plain(&c->out, c->elf, tab[i].fn);
            ob_char(&c->out, '\n');
        }
        ob_printf(&c->out, "%zu records, %zu contexts%s\n", t->count, t->context_count,
                  t->has_time ? ", times in timestamp ticks" : "");
    }
    free(tab);
    free(w);
    return SPOOR_EXIT_OK;
}

static int write_chrome(struct calls *c)
{
    int fd = open(c->chrome_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return cli_error("calls", "%s: cannot create: %s", c->chrome_path, strerror(errno));
    outbuf *ob = malloc(sizeof *ob);
    if (!ob) {
        close(fd);
        return cli_error("calls", "out of memory");
    }
    ob_init(ob, fd);
    const spoor_call_trace *t = &c->trace;
    json_out j;
    json_init(&j, ob);
    json_object_begin(&j, NULL);
    json_string(&j, "displayTimeUnit", "ns");
    json_array_begin(&j, "traceEvents");
    for (size_t i = 0; i < t->context_count; i++) {
        json_object_begin(&j, NULL);
        json_string(&j, "name", "thread_name");
        json_string(&j, "ph", "M");
        json_uint(&j, "pid", 1);
        json_uint(&j, "tid", i);
        json_object_begin(&j, "args");
        json_string(&j, "name", c->ctx_label[i]);
        json_object_end(&j);
        json_object_end(&j);
    }
    char buf[512];
    for (size_t i = 0; i < t->count; i++) {
        const spoor_call_record *r = &t->records[i];
        const char *name = json_name(c->elf, r->function, false, buf, sizeof buf);
        char hex[16];
        if (!name) {
            snprintf(hex, sizeof hex, "0x%08" PRIx32, r->function);
            name = hex;
        }
        json_object_begin(&j, NULL);
        json_string(&j, "name", name);
        json_string(&j, "ph", r->kind == SPOOR_CALL_ENTER ? "B" : "E");
        /* ts: timestamp ticks when recorded, else the record's position */
        json_uint(&j, "ts", t->has_time ? r->time_ticks : i);
        json_uint(&j, "pid", 1);
        json_uint(&j, "tid", r->context);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    bool ok = ob_flush(ob);
    free(ob);
    if (close(fd) != 0 || !ok)
        return cli_error("calls", "%s: write failed", c->chrome_path);
    return SPOOR_EXIT_OK;
}

/* ---- input ---------------------------------------------------------------------------------- */

/* Reads the state object and the ring through mem and decodes them. */
static int load_trace(struct calls *c, spoor_mem *mem, const char *input)
{
    uint32_t addr, size;
    if (!spoor_elf_symbol(c->elf, SPOOR_CALLS_STATE_SYMBOL, &addr, &size))
        return cli_error("calls",
                         "%s: no call recorder (no symbol %s: link the target library and call "
                         "spoor_calls_init)",
                         c->elf_path, SPOOR_CALLS_STATE_SYMBOL);
    uint8_t st[SPOOR_CALLS_STATE_SIZE];
    if (!spoor_mem_read(mem, addr, st, sizeof st))
        return cli_error(
            "calls", "%s: the call recorder's state (%s, 0x%08" PRIx32 "+%u) is not in the input",
            input, SPOOR_CALLS_STATE_SYMBOL, addr, SPOOR_CALLS_STATE_SIZE);
    if (!spoor_calls_parse_state(st, sizeof st, &c->state))
        return cli_error("calls", "%s: %s", input, spoor_last_error());
    size_t len = spoor_calls_ring_bytes(&c->state);
    uint8_t *ring = malloc(len);
    if (!ring)
        return cli_error("calls", "out of memory");
    if (!spoor_mem_read(mem, c->state.ring, ring, len)) {
        free(ring);
        return cli_error("calls", "%s: the call ring (0x%08" PRIx32 "+%zu) is not in the input",
                         input, c->state.ring, len);
    }
    bool ok = spoor_calls_decode(&c->state, ring, len, &c->trace);
    free(ring);
    if (!ok)
        return cli_error("calls", "%s: %s", input, spoor_last_error());
    return SPOOR_EXIT_OK;
}

static int check_build_id(struct calls *c, const spoor_dump *dump, const char *input)
{
    const uint8_t *eid;
    size_t elen;
    if (!dump || !dump->build_id || !spoor_elf_build_id(c->elf, &eid, &elen))
        return SPOOR_EXIT_OK;
    if (elen == dump->build_id_len && !memcmp(eid, dump->build_id, elen))
        return SPOOR_EXIT_OK;
    char d[80], e[80];
    cli_hex_bytes(d, sizeof d, dump->build_id, dump->build_id_len);
    cli_hex_bytes(e, sizeof e, eid, elen);
    return cli_error("calls",
                     "%s: build-id %s differs from %s's %s: the ring's addresses belong to "
                     "another firmware",
                     input, d, c->elf_path, e);
}

int cmd_calls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"elf", required_argument, 0, 'e'},
        {"json", no_argument, 0, 'j'},
        {"stats", no_argument, 0, 's'},
        {"chrome", required_argument, 0, OPT_CHROME},
        {"folded", no_argument, 0, OPT_FOLDED},
        {"help", no_argument, 0, 'h'},
        TARGET_INPUT_LONG_OPTIONS,
        {0, 0, 0, 0},
    };
    static struct calls c;
    memset(&c, 0, sizeof c);
    static target_input in;
    memset(&in, 0, sizeof in);
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "e:jsh", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': c.elf_path = optarg; break;
        case 'j': c.json = true; break;
        case 's': c.stats = true; break;
        case OPT_CHROME: c.chrome_path = optarg; break;
        case OPT_FOLDED: c.folded = true; break;
        case 'h': fputs(calls_usage, stdout); return SPOOR_EXIT_OK;
        case TARGET_OPT_REGS:
        case TARGET_OPT_MEM:
        case TARGET_OPT_GDB: {
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
    c.elf = cli_open_elf("calls", c.elf_path);
    if (!c.elf)
        return SPOOR_EXIT_USAGE;
    int nargs = argc - optind, rc = SPOOR_EXIT_USAGE;
    spoor_snapshot *snap = NULL;
    spoor_mem *own = NULL, *mem;
    const char *input;
    if (nargs == 0 && in.src.nmems && !in.src.regs_path && !in.src.gdb) {
        /* RAM images alone: no registers are needed to read the ring */
        own = spoor_mem_new();
        if (!own) {
            cli_error("calls", "out of memory");
            goto done;
        }
        for (size_t i = 0; i < in.src.nmems; i++)
            if (!spoor_mem_add_file(own, in.mems[i].address, in.mems[i].path)) {
                cli_error("calls", "%s", spoor_last_error());
                goto done;
            }
        if (!spoor_mem_add_elf(own, c.elf)) {
            cli_error("calls", "%s", spoor_last_error());
            goto done;
        }
        mem = own;
        input = "--mem";
    } else {
        snap = target_input_open("calls", &in, argv + optind, nargs, c.elf);
        if (!snap)
            goto done;
        mem = snap->mem;
        input = snap->input;
        if ((rc = check_build_id(&c, snap->dump, input)) != SPOOR_EXIT_OK)
            goto done;
        rc = SPOOR_EXIT_USAGE;
    }
    if ((rc = load_trace(&c, mem, input)) != SPOOR_EXIT_OK)
        goto done;
    if (!label_contexts(&c)) {
        rc = cli_error("calls", "out of memory");
        goto done;
    }
    ob_init(&c.out, 1);
    if (c.chrome_path && (rc = write_chrome(&c)) != SPOOR_EXIT_OK)
        goto done;
    if (c.json)
        print_json(&c);
    else if (c.folded || c.stats)
        rc = walk_stacks(&c, c.folded);
    else if (!c.chrome_path)
        print_text(&c);
    if (!ob_flush(&c.out))
        rc = cli_error("calls", "write to standard output failed");
done:
    free(c.ctx_label);
    free(c.id_label);
    spoor_call_trace_free(&c.trace);
    spoor_snapshot_close(snap);
    spoor_mem_free(own);
    spoor_elf_close(c.elf);
    return rc;
}
