/* spoor report's annex (report_annex.h): disassembly and source text around what the report
 * names. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_annex.h"
#include "spoor/thumb.h"
#include "util/number.h"

#define CONTEXT 4     /* source lines shown each side of a line of interest */
#define CODE_BEFORE 4 /* instructions shown before an address */
#define CODE_AFTER 4  /* ... and from it on */
#define MAX_SOURCE (16u << 20)

/* The scan of the report: addresses ("pc", "src", "dst") and "file"/"line" pairs. */
void report_annex_collect(void *ctx, const json_scan_value *v)
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

void report_annex_code(json_out *j, const spoor_elf *elf, struct annex *a)
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

char *report_read_file(const char *path, size_t max, size_t *len)
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

/* The source file DWARF names as file: a relative name joined with each DW_AT_comp_dir of the
 * ELF (the unit's is among them), then as it is (absolute, or relative to the current
 * directory), then in each --source-dir, as it is and with its leading directories removed
 * one by one. The path found goes into found. */
static char *find_source(const struct annex *a, const char *file, char *found, size_t found_len,
                         size_t *len)
{
    char *text;
    for (size_t d = 0; file[0] != '/' && d < a->ncomp_dirs; d++)
        if ((size_t)snprintf(found, found_len, "%s/%s", a->comp_dirs[d], file) < found_len &&
            (text = report_read_file(found, MAX_SOURCE, len)))
            return text;
    if ((text = report_read_file(file, MAX_SOURCE, len))) {
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
            if ((text = report_read_file(found, MAX_SOURCE, len)))
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

void report_annex_sources(json_out *j, struct annex *a)
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
