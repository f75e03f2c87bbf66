/* The annex of spoor report's page (crash_annex_internal.h): the report scanned for its
 * addresses and source lines, the disassembly and the source text around them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/input_file.h"
#include "base/set_error.h"
#include "crash_annex_internal.h"
#include "spoor/thumb.h"
#include "util/json_read.h"
#include "util/json_write.h"
#include "util/number.h"

#define CONTEXT 4     /* source lines shown each side of a line of interest */
#define CODE_BEFORE 4 /* instructions shown before an address */
#define CODE_AFTER 4  /* ... and from it on */
#define MAX_SOURCE (16u << 20)
#define MAX_COMP_DIRS 64
#define MAX_ADDRS 1024     /* code windows in the annex */
#define MAX_LINES 4096     /* source lines of interest */
#define MAX_FILE_NAME 4096 /* what the scan keeps of a file name */
#define MAX_DEPTH 64       /* of the report's JSON */

struct line_ref {
    char *file;
    unsigned line;
};

struct annex {
    uint32_t addrs[MAX_ADDRS];
    size_t naddrs;
    struct line_ref lines[MAX_LINES];
    size_t nlines;
    /* the scan: the number of each open container's object (0 for an array), the last "file"
     * and the object it was in */
    unsigned objects, in[MAX_DEPTH];
    char last_file[MAX_FILE_NAME];
    unsigned last_file_object;
    const spoor_report_options *options;
    const char *comp_dirs[MAX_COMP_DIRS]; /* the ELF's DW_AT_comp_dir values */
    size_t ncomp_dirs;
    bool out_of_memory;
};

/* ---------------------------------------------------------------- the scan of the report */

/* One value of the report: addresses ("pc", "src", "dst") and "file"/"line" pairs (a "line" in
 * the object of the last "file"). */
static void collect(struct annex *a, const char *key, unsigned object, bool is_string,
                    const char *text)
{
    uint32_t addr;
    if (is_string && (!strcmp(key, "pc") || !strcmp(key, "src") || !strcmp(key, "dst"))) {
        if (a->naddrs < MAX_ADDRS && spoor_parse_u32z(text, SPOOR_NUM_HEX, &addr))
            a->addrs[a->naddrs++] = addr & ~1u;
    } else if (is_string && !strcmp(key, "file")) {
        snprintf(a->last_file, sizeof a->last_file, "%s", text);
        a->last_file_object = object;
    } else if (!is_string && !strcmp(key, "line") && object == a->last_file_object &&
               a->last_file[0] && a->nlines < MAX_LINES) {
        unsigned long line = strtoul(text, NULL, 10);
        char *file = strdup(a->last_file);
        if (!file) {
            a->out_of_memory = true;
            return;
        }
        a->lines[a->nlines++] = (struct line_ref){file, (unsigned)line};
    }
}

static const char *on_item(void *ctx, const spoor_json_item *it)
{
    struct annex *a = ctx;
    unsigned object = it->depth ? a->in[it->depth - 1] : 0;
    if (it->type == SPOOR_JSON_OBJECT || it->type == SPOOR_JSON_ARRAY)
        a->in[it->depth] = it->type == SPOOR_JSON_OBJECT ? ++a->objects : 0;
    else if (it->type == SPOOR_JSON_STRING || it->type == SPOOR_JSON_NUMBER)
        collect(a, it->key ? it->key : "", object, it->type == SPOOR_JSON_STRING, it->text);
    return NULL;
}

/* Reads the report: true when it is one JSON object, else false with the error set. */
static bool scan(struct annex *a, const char *text, size_t len)
{
    spoor_json_error err;
    size_t at = 0;
    while (at < len &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
        at++;
    if (at == len || text[at] != '{') {
        spoor_set_error(SPOOR_ERR_FORMAT,
                        "not a spoor crash --json report: byte %zu: not a JSON object", at);
        return false;
    }
    if (spoor_json_read(text, len, MAX_DEPTH, on_item, a, &err))
        return true;
    spoor_set_error(SPOOR_ERR_FORMAT, "not a spoor crash --json report: byte %zu: %s", err.offset,
                    err.message);
    return false;
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

/* The "code" member: CODE_BEFORE instructions before each address and CODE_AFTER from it. */
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

/* A source file of at most max bytes (NUL-terminated, *len without the NUL), a regular file
 * only (never a FIFO waited on); NULL when it is not there or cannot be read. */
static char *read_source(const char *path, size_t max, size_t *len)
{
    struct stat st;
    int fd = spoor_input_open(path, SPOOR_INPUT_REGULAR, &st);
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 65536 * 2;
            char *more = cap > max + 65536 + 1 ? NULL : realloc(buf, cap);
            if (!more) {
                free(buf);
                close(fd);
                return NULL;
            }
            buf = more;
        }
        ssize_t got = read(fd, buf + n, 65536);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || (n += (size_t)got) > max) {
            close(fd);
            if (got < 0 || n > max) {
                free(buf);
                return NULL;
            }
            break;
        }
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The source file DWARF names as file: a relative name joined with each DW_AT_comp_dir of the
 * ELF (the unit's is among them), then as it is (absolute, or relative to the current
 * directory), then in each of the options' source_dirs, as it is and with its leading
 * directories removed one by one. The path found goes into found. */
static char *find_source(const struct annex *a, const char *file, char *found, size_t found_len,
                         size_t *len)
{
    char *text;
    for (size_t d = 0; file[0] != '/' && d < a->ncomp_dirs; d++)
        if ((size_t)snprintf(found, found_len, "%s/%s", a->comp_dirs[d], file) < found_len &&
            (text = read_source(found, MAX_SOURCE, len)))
            return text;
    if ((text = read_source(file, MAX_SOURCE, len))) {
        snprintf(found, found_len, "%s", file);
        return text;
    }
    for (size_t d = 0; d < a->options->nsource_dirs; d++)
        for (const char *tail = file; tail; tail = strchr(tail, '/')) {
            while (*tail == '/')
                tail++;
            if (!*tail)
                break;
            snprintf(found, found_len, "%s/%s", a->options->source_dirs[d], tail);
            if ((text = read_source(found, MAX_SOURCE, len)))
                return text;
        }
    return NULL;
}

/* One file's lines of interest (lines[0..n), sorted) as ranges of its text with CONTEXT lines
 * each side: {"file", "path", "first", "lines": [...]}; a file not found has path null. */
static void annex_source(json_out *j, struct annex *a, const struct line_ref *lines, size_t n)
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
        a->out_of_memory = true;
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

/* The "sources" member: CONTEXT lines each side of every line of interest. */
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

/* ---------------------------------------------------------------- the annex */

char *spoor_crash_annex_json(const spoor_elf *elf, const char *report, size_t len,
                             const spoor_report_options *o, size_t *annex_len)
{
    struct annex *a = calloc(1, sizeof *a);
    outbuf *ob = malloc(sizeof *ob);
    char *text = NULL;
    if (!a || !ob) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        goto out;
    }
    a->options = o;
    if (!scan(a, report, len))
        goto out;
    ob_init_memory(ob);
    json_out j;
    json_init(&j, ob);
    json_object_begin(&j, NULL);
    json_string(&j, "spoor", SPOOR_VERSION);
    json_string(&j, "elf", spoor_elf_path(elf));
    json_string(&j, "input", o->input);
    annex_code(&j, elf, a);
    a->ncomp_dirs = spoor_elf_comp_dirs(elf, a->comp_dirs, MAX_COMP_DIRS);
    annex_sources(&j, a);
    json_object_end(&j);
    json_finish(&j);
    text = ob_take(ob, annex_len);
    if (!text || a->out_of_memory) {
        free(text);
        text = NULL;
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    }
out:
    for (size_t i = 0; a && i < a->nlines; i++)
        free(a->lines[i].file);
    free(a);
    free(ob);
    return text;
}
