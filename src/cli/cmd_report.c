/* spoor report: one self-contained HTML page of a crash (docs/report.md). The page is the
 * template src/cli/report_template.html (compiled in) with two JSON documents in it: the report
 * spoor crash --json prints (crash_json.c, so the page and the CLI cannot disagree) and an
 * annex of what only the page shows: the source text around the report's lines and the
 * disassembly around its addresses. The page's own script renders both; nothing is fetched. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crash_report.h"
#include "json_out.h"
#include "json_scan.h"
#include "spoor/thumb.h"

extern const unsigned char report_template[];
extern const unsigned long report_template_len;

#define MAX_SOURCE_DIRS 16
#define MAX_ADDRS 1024 /* code windows in the annex */
#define MAX_LINES 4096 /* source lines of interest */
#define CONTEXT 4      /* source lines shown each side of a line of interest */
#define CODE_BEFORE 4  /* instructions shown before an address */
#define CODE_AFTER 4   /* ... and from it on */
#define MAX_SOURCE (16u << 20)
#define MAX_JSON (256u << 20)

static const char report_usage[] =
    "usage: spoor report -e FW.elf [--threads] [--source-dir DIR] -o PAGE.html DUMP\n"
    "       spoor report -e FW.elf [--threads] -o PAGE.html --regs regs.json [--mem ADDR:FILE "
    "...]\n"
    "       spoor report -e FW.elf [--threads] -o PAGE.html --gdb HOST:PORT [--mem ADDR:FILE ...]\n"
    "       spoor report -e FW.elf -o PAGE.html --from-json REPORT.json\n"
    "Writes one self-contained HTML page of a crash, to read offline or attach to a ticket:\n"
    "the fault in words, the registers, the backtrace with source lines (and the source text\n"
    "around them when the files are found), the disassembly around each address, the RTOS\n"
    "threads (--threads), and the last branches, calls and stack use when the report has\n"
    "them. The page holds the report spoor crash --json prints and renders it with its own\n"
    "inline script: no network, no other files.\n\n"
    "  -e, --elf FILE     the firmware ELF the device ran\n"
    "  -o, --output FILE  the page to write (- for standard output)\n"
    "      --threads      every thread of the RTOS, as spoor crash --threads\n"
    "      --source-dir DIR  where to look for the source files DWARF names (repeatable);\n"
    "                     a relative name is also tried as DWARF gives it (joined with\n"
    "                     DW_AT_comp_dir) and with its leading directories removed\n"
    "      --from-json FILE  the page of a report saved with spoor crash --json, instead of\n"
    "                     reading the target\n" TARGET_INPUT_HELP
    "  -h, --help         this text\n\n"
    "Exit status: 0 page written, 2 usage or input error (bad dump, wrong ELF, ...).\n";

struct line_ref {
    char *file;
    unsigned line;
};

struct annex {
    uint32_t addrs[MAX_ADDRS];
    size_t naddrs;
    struct line_ref lines[MAX_LINES];
    size_t nlines;
    char last_file[JSON_SCAN_MAX_STRING]; /* the "file" of the object being read */
    unsigned last_file_object;
    const char *source_dirs[MAX_SOURCE_DIRS];
    size_t nsource_dirs;
    bool out_of_memory;
};

/* The scan of the report: addresses ("pc", "src", "dst") and "file"/"line" pairs. */
static void collect(void *ctx, const json_scan_value *v)
{
    struct annex *a = ctx;
    uint32_t addr;
    if (v->is_string &&
        (!strcmp(v->key, "pc") || !strcmp(v->key, "src") || !strcmp(v->key, "dst"))) {
        if (a->naddrs < MAX_ADDRS && spoor_parse_u32z(v->text, SPOOR_NUM_HEX, &addr))
            a->addrs[a->naddrs++] = addr & ~1u;
    } else if (v->is_string && !strcmp(v->key, "file")) {
        snprintf(a->last_file, sizeof a->last_file, "%s", v->text);
        a->last_file_object = v->object;
    } else if (!v->is_string && !strcmp(v->key, "line") && v->object == a->last_file_object &&
               a->last_file[0] && a->nlines < MAX_LINES) {
        unsigned long line = strtoul(v->text, NULL, 10);
        char *file = strdup(a->last_file);
        if (!file) {
            a->out_of_memory = true;
            return;
        }
        a->lines[a->nlines++] = (struct line_ref){file, (unsigned)line};
    }
}

static int compare_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int compare_line(const void *x, const void *y)
{
    const struct line_ref *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* ---------------------------------------------------------------- disassembly */

struct insn {
    uint32_t pc;
    unsigned size;
    char text[96];
};

static bool read_insn(const spoor_elf *elf, uint32_t pc, struct insn *out)
{
    uint8_t code[4] = {0};
    if (spoor_elf_read(elf, pc, code, 2) != 2)
        return false;
    out->pc = pc;
    out->size = spoor_thumb_size((uint16_t)(code[0] | code[1] << 8));
    if (out->size == 4 && spoor_elf_read(elf, pc + 2, code + 2, 2) != 2)
        return false;
    spoor_thumb_disassemble(pc, code, out->size, out->text, sizeof out->text);
    return true;
}

/* The instructions around addr: up to CODE_BEFORE before it (decoded from the start of its
 * function, as a disassembler does) and CODE_AFTER from it on, inside its function. */
static size_t code_window(const spoor_elf *elf, uint32_t addr, struct insn *out)
{
    uint32_t start = addr, size = 0;
    const char *name;
    if (!spoor_elf_is_code(elf, addr))
        return 0;
    if (!spoor_elf_function(elf, addr, &name, &start, &size) || addr - start > 0x10000)
        start = addr, size = 0;
    size_t n = 0;
    struct insn ring[CODE_BEFORE];
    uint32_t pc = start;
    while (pc < addr) {
        struct insn i;
        if (!read_insn(elf, pc, &i) || pc + i.size > addr) {
            n = 0; /* out of step (data in the code): start at addr */
            break;
        }
        ring[n++ % CODE_BEFORE] = i;
        pc += i.size;
    }
    size_t before = n < CODE_BEFORE ? n : CODE_BEFORE, k = 0;
    for (size_t i = n - before; i < n; i++)
        out[k++] = ring[i % CODE_BEFORE];
    pc = addr;
    for (int i = 0; i < CODE_AFTER && (!size || pc < start + size); i++) {
        if (!read_insn(elf, pc, &out[k]))
            break;
        pc += out[k++].size;
    }
    return k;
}

static void annex_code(json_out *j, const spoor_elf *elf, struct annex *a)
{
    qsort(a->addrs, a->naddrs, sizeof a->addrs[0], compare_u32);
    json_array_begin(j, "code");
    for (size_t i = 0; i < a->naddrs; i++) {
        if (i && a->addrs[i] == a->addrs[i - 1])
            continue;
        struct insn insns[CODE_BEFORE + CODE_AFTER];
        size_t n = code_window(elf, a->addrs[i], insns);
        if (!n)
            continue;
        spoor_location loc[16];
        size_t nloc = spoor_elf_symbolize(elf, a->addrs[i], loc, 16);
        json_object_begin(j, NULL);
        json_hex32(j, "addr", a->addrs[i]);
        json_string(j, "function", loc[nloc - 1].function);
        if (loc[nloc - 1].has_offset)
            json_uint(j, "offset", loc[nloc - 1].offset);
        else
            json_null(j, "offset");
        json_string(j, "file", loc[0].file);
        if (loc[0].file)
            json_uint(j, "line", loc[0].line);
        else
            json_null(j, "line");
        json_array_begin(j, "insns");
        for (size_t k = 0; k < n; k++) {
            json_object_begin(j, NULL);
            json_hex32(j, "pc", insns[k].pc);
            json_uint(j, "size", insns[k].size);
            json_string(j, "insn", insns[k].text);
            json_object_end(j);
        }
        json_array_end(j);
        json_object_end(j);
    }
    json_array_end(j);
}

/* ---------------------------------------------------------------- sources */

static char *read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 65536 * 2;
            char *more = cap > max + 65536 + 1 ? NULL : realloc(buf, cap);
            if (!more) {
                free(buf);
                fclose(f);
                errno = EFBIG;
                return NULL;
            }
            buf = more;
        }
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536)
            break;
    }
    bool bad = ferror(f) || n > max;
    fclose(f);
    if (bad) {
        free(buf);
        errno = bad && n > max ? EFBIG : EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The source file DWARF names as file: as it is (absolute, or relative to the current
 * directory), then in each --source-dir, as it is and with its leading directories removed
 * one by one. The path found goes into found. */
static char *find_source(const struct annex *a, const char *file, char *found, size_t found_len,
                         size_t *len)
{
    char *text = read_file(file, MAX_SOURCE, len);
    if (text) {
        snprintf(found, found_len, "%s", file);
        return text;
    }
    for (size_t d = 0; d < a->nsource_dirs; d++)
        for (const char *tail = file; tail; tail = strchr(tail, '/')) {
            while (*tail == '/')
                tail++;
            if (!*tail)
                break;
            snprintf(found, found_len, "%s/%s", a->source_dirs[d], tail);
            if ((text = read_file(found, MAX_SOURCE, len)))
                return text;
        }
    return NULL;
}

/* One file's lines of interest (lines[0..n), sorted) as ranges of its text with CONTEXT lines
 * each side: {"file", "path", "first", "lines": [...]}; a file not found has path null. */
static void annex_source(json_out *j, const struct annex *a, const struct line_ref *lines, size_t n)
{
    char path[4096];
    size_t len = 0;
    char *text = find_source(a, lines[0].file, path, sizeof path, &len);
    if (!text) {
        json_object_begin(j, NULL);
        json_string(j, "file", lines[0].file);
        json_null(j, "path");
        json_object_end(j);
        return;
    }
    /* the start of each line of the file */
    size_t nstarts = 1;
    for (size_t i = 0; i < len; i++)
        nstarts += text[i] == '\n';
    const char **starts = malloc(nstarts * sizeof *starts);
    if (!starts) {
        free(text);
        return;
    }
    nstarts = 0;
    starts[nstarts++] = text;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') {
            text[i] = 0;
            starts[nstarts++] = text + i + 1;
        }
    if (nstarts > 1 && !*starts[nstarts - 1])
        nstarts--; /* the file's final newline */
    for (size_t i = 0; i < n;) {
        unsigned first = lines[i].line > CONTEXT ? lines[i].line - CONTEXT : 1;
        unsigned last = lines[i].line + CONTEXT;
        while (++i < n && lines[i].line <= last + CONTEXT + 1)
            last = lines[i].line + CONTEXT;
        if (first > nstarts)
            continue;
        if (last > nstarts)
            last = (unsigned)nstarts;
        json_object_begin(j, NULL);
        json_string(j, "file", lines[0].file);
        json_string(j, "path", path);
        json_uint(j, "first", first);
        json_array_begin(j, "lines");
        for (unsigned l = first; l <= last; l++) {
            char *cr = strchr(starts[l - 1], '\r');
            if (cr && !cr[1])
                *cr = 0;
            json_string(j, NULL, starts[l - 1]);
        }
        json_array_end(j);
        json_object_end(j);
    }
    free(starts);
    free(text);
}

static void annex_sources(json_out *j, struct annex *a)
{
    qsort(a->lines, a->nlines, sizeof a->lines[0], compare_line);
    json_array_begin(j, "sources");
    for (size_t i = 0; i < a->nlines;) {
        size_t n = 1;
        while (i + n < a->nlines && !strcmp(a->lines[i + n].file, a->lines[i].file))
            n++;
        annex_source(j, a, a->lines + i, n);
        i += n;
    }
    json_array_end(j);
}

/* ---------------------------------------------------------------- the page */

/* An outbuf onto a temporary file, read back into memory by capture_end. */
static FILE *capture_begin(outbuf *o)
{
    FILE *tmp = tmpfile();
    if (tmp)
        ob_init(o, fileno(tmp));
    return tmp;
}

static char *capture_end(outbuf *o, FILE *tmp, size_t *len)
{
    char *text = NULL;
    long size;
    if (ob_flush(o) && fseek(tmp, 0, SEEK_END) == 0 && (size = ftell(tmp)) >= 0 &&
        fseek(tmp, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1)) &&
        fread(text, 1, (size_t)size, tmp) == (size_t)size) {
        text[size] = 0;
        *len = (size_t)size;
    } else {
        free(text);
        text = NULL;
    }
    fclose(tmp);
    return text;
}

/* A JSON document inside <script type="application/json">: '<', '>' and '&' (only ever inside
 * its strings) as \u escapes, so no "</script>" or "<!--" in a string can end the element. */
static void put_json_in_script(outbuf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '<': ob_write(o, "\\u003c", 6); break;
        case '>': ob_write(o, "\\u003e", 6); break;
        case '&': ob_write(o, "\\u0026", 6); break;
        default: ob_char(o, s[i]);
        }
    }
}

static const char *find_marker(const char *from, const char *marker)
{
    return strstr(from, marker);
}

static bool write_page(outbuf *o, const char *report, size_t report_len, const char *annex,
                       size_t annex_len)
{
    static const char crash_marker[] = "@SPOOR_CRASH_JSON@", annex_marker[] = "@SPOOR_ANNEX_JSON@";
    const char *t = (const char *)report_template;
    const char *at_crash = find_marker(t, crash_marker);
    const char *at_annex = at_crash ? find_marker(at_crash, annex_marker) : NULL;
    if (!at_annex || strlen(t) != report_template_len)
        return false;
    ob_write(o, t, (size_t)(at_crash - t));
    put_json_in_script(o, report, report_len);
    const char *rest = at_crash + sizeof crash_marker - 1;
    ob_write(o, rest, (size_t)(at_annex - rest));
    put_json_in_script(o, annex, annex_len);
    rest = at_annex + sizeof annex_marker - 1;
    ob_write(o, rest, strlen(rest));
    return true;
}

struct report_args {
    const char *elf_path, *output, *from_json;
    char input[512];
};

static void input_text(struct report_args *r, const target_input *in, char **args, int nargs)
{
    if (r->from_json)
        snprintf(r->input, sizeof r->input, "%s (spoor crash --json)", r->from_json);
    else if (nargs > 0)
        snprintf(r->input, sizeof r->input, "%s", args[0]);
    else if (in->src.gdb)
        snprintf(r->input, sizeof r->input, "--gdb %s", in->src.gdb);
    else
        snprintf(r->input, sizeof r->input, "--regs %s%s",
                 in->src.regs_path ? in->src.regs_path : "-", in->src.nmems ? " --mem ..." : "");
}

/* The report's JSON: spoor crash's from the target, or the saved one of --from-json (checked). */
static char *report_json(struct crash *c, const struct report_args *r, target_input *in,
                         char **args, int nargs, size_t *len, int *rc)
{
    char *text;
    *rc = SPOOR_EXIT_USAGE;
    if (r->from_json) {
        if (nargs || in->src.regs_path || in->src.gdb || in->src.nmems) {
            cli_error("report", "--from-json takes no DUMP, --regs, --mem or --gdb");
            return NULL;
        }
        if (c->threads) {
            cli_error("report",
                      "--from-json takes no --threads (the saved report has them or not)");
            return NULL;
        }
        if (!(c->elf = cli_open_elf("report", r->elf_path)))
            return NULL;
        if (!(text = read_file(r->from_json, MAX_JSON, len)))
            cli_error("report", "%s: %s", r->from_json, strerror(errno));
        *rc = text ? SPOOR_EXIT_OK : SPOOR_EXIT_USAGE;
        return text;
    }
    if ((*rc = crash_open(c, "report", r->elf_path, in, args, nargs)))
        return NULL;
    FILE *tmp = capture_begin(&c->out);
    if (!tmp) {
        *rc = cli_error("report", "cannot make a temporary file: %s", strerror(errno));
        return NULL;
    }
    crash_print_json(c);
    /* A connection lost on the way: what was read after it is not the target's memory. */
    bool lost = c->snap->gdb && !spoor_gdb_alive(c->snap->gdb);
    text = capture_end(&c->out, tmp, len);
    if (lost || !text) {
        free(text);
        *rc = lost ? cli_error("report", "%s", spoor_last_error())
                   : cli_error("report", "cannot keep the report: %s", strerror(errno));
        return NULL;
    }
    return text;
}

static char *annex_json(const struct crash *c, struct annex *a, const struct report_args *r,
                        size_t *len)
{
    static outbuf ob;
    FILE *tmp = capture_begin(&ob);
    if (!tmp)
        return NULL;
    json_out j;
    json_init(&j, &ob);
    json_object_begin(&j, NULL);
    json_string(&j, "spoor", SPOOR_VERSION);
    json_string(&j, "elf", r->elf_path);
    json_string(&j, "input", r->input);
    annex_code(&j, c->elf, a);
    annex_sources(&j, a);
    json_object_end(&j);
    json_finish(&j);
    return capture_end(&ob, tmp, len);
}

static int write_output(const char *path, const char *report, size_t report_len, const char *annex,
                        size_t annex_len)
{
    int fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
    if (fd < 0)
        return cli_error("report", "%s: %s", path, strerror(errno));
    static outbuf o;
    ob_init(&o, fd);
    if (!write_page(&o, report, report_len, annex, annex_len)) {
        if (fd != 1)
            close(fd);
        return cli_error("report", "the page template has no @SPOOR_CRASH_JSON@ and "
                                   "@SPOOR_ANNEX_JSON@ markers (a bad build)");
    }
    bool ok = ob_flush(&o);
    int err = errno;
    if (fd != 1 && close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        return cli_error("report", "%s: cannot write the page: %s", path, strerror(err));
    return SPOOR_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    enum { OPT_THREADS = 300, OPT_SOURCE_DIR, OPT_FROM_JSON };
    static const struct option opts[] = {{"elf", required_argument, 0, 'e'},
                                         {"output", required_argument, 0, 'o'},
                                         {"threads", no_argument, 0, OPT_THREADS},
                                         {"source-dir", required_argument, 0, OPT_SOURCE_DIR},
                                         {"from-json", required_argument, 0, OPT_FROM_JSON},
                                         {"help", no_argument, 0, 'h'},
                                         TARGET_INPUT_LONG_OPTIONS,
                                         {0, 0, 0, 0}};
    static struct crash c;
    static target_input in;
    static struct annex a;
    struct report_args r = {0};
    memset(&c, 0, sizeof c);
    c.nbranches = c.ncalls = 16; /* as spoor crash: the page shows what its JSON holds */
    memset(&in, 0, sizeof in);
    memset(&a, 0, sizeof a);
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "e:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'e': r.elf_path = optarg; break;
        case 'o': r.output = optarg; break;
        case OPT_THREADS: c.threads = 1; break;
        case OPT_FROM_JSON: r.from_json = optarg; break;
        case OPT_SOURCE_DIR:
            if (a.nsource_dirs == MAX_SOURCE_DIRS)
                return cli_error("report", "too many --source-dir (at most %d)", MAX_SOURCE_DIRS);
            a.source_dirs[a.nsource_dirs++] = optarg;
            break;
        case TARGET_OPT_REGS:
        case TARGET_OPT_MEM:
        case TARGET_OPT_GDB:
            if ((rc = target_input_option("report", &in, opt, optarg)))
                return rc;
            break;
        case 'h': fputs(report_usage, stdout); return SPOOR_EXIT_OK;
        default: return cli_bad_option("report", argv);
        }
    }
    if (!r.output)
        return cli_error("report", "no page to write (-o PAGE.html, or -o - for standard output)");
    input_text(&r, &in, argv + optind, argc - optind);
    size_t report_len = 0, annex_len = 0;
    char *annex = NULL,
         *report = report_json(&c, &r, &in, argv + optind, argc - optind, &report_len, &rc);
    if (!report)
        goto out;
    char error[200];
    if (!json_scan(report, report_len, collect, &a, error, sizeof error)) {
        rc = cli_error("report", "%s: not a spoor crash --json report: %s",
                       r.from_json ? r.from_json : "spoor crash --json", error);
        goto out;
    }
    if (a.out_of_memory || !(annex = annex_json(&c, &a, &r, &annex_len))) {
        rc = cli_error("report", "out of memory or no temporary file");
        goto out;
    }
    rc = write_output(r.output, report, report_len, annex, annex_len);
out:
    for (size_t i = 0; i < a.nlines; i++)
        free(a.lines[i].file);
    free(report);
    free(annex);
    crash_close(&c);
    return rc;
}
