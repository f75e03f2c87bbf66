/* spoor mtb --flow: every instruction executed between MTB packets, disassembled, with its
 * function and source line (the line's text when the source file is found), as text or JSON
 * Lines (docs/mtb.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtb_flow_print.h"
#include "spoor/thumb.h"

static source_file *source(mtb_flow_printer *m, const char *path)
{
    for (unsigned i = 0; i < m->nsources; i++)
        if (!strcmp(m->sources[i].path, path))
            return &m->sources[i];
    if (m->nsources == MTB_FLOW_MAX_SOURCES)
        return NULL;
    source_file *f = &m->sources[m->nsources++];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return f;
    size_t cap = 0, len = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0 && len < (16u << 20)) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *t = realloc(f->text, cap);
            if (!t)
                break;
            f->text = t;
        }
        memcpy(f->text + len, buf, got);
        len += got;
    }
    fclose(fp);
    if (!f->text)
        return f;
    f->text[len] = 0;
    unsigned n = 1;
    for (size_t i = 0; i < len; i++)
        n += f->text[i] == '\n';
    f->lines = malloc(sizeof *f->lines * n);
    if (!f->lines)
        return f;
    char *p = f->text;
    for (unsigned i = 0; i < n; i++) {
        f->lines[i] = p;
        char *nl = strchr(p, '\n');
        if (!nl) {
            f->nlines = i + 1;
            break;
        }
        *nl = 0;
        p = nl + 1;
        f->nlines = i + 1;
    }
    return f;
}

static void flow_location_text(mtb_flow_printer *m, const spoor_location *l)
{
    outbuf *o = m->out;
    if (l->function != m->last_function ||
        (l->function && m->last_function && strcmp(l->function, m->last_function))) {
        ob_text(o, l->function ? l->function : "??");
        ob_str(o, ":\n");
    }
    if (l->file && l->line &&
        (l->line != m->last_line || !m->last_file || strcmp(l->file, m->last_file))) {
        source_file *f = source(m, l->file);
        ob_text(o, l->file);
        ob_char(o, ':');
        ob_u32(o, l->line);
        if (f && l->line <= f->nlines) {
            ob_char(o, '\t');
            ob_str(o, f->lines[l->line - 1]);
        }
        ob_char(o, '\n');
    }
    m->last_function = l->function;
    m->last_file = l->file;
    m->last_line = l->line;
}

void mtb_flow_insn(mtb_flow_printer *m, const spoor_mtb_step *s)
{
    outbuf *o = m->out;
    char text[128];
    spoor_thumb_disassemble(s->pc, s->code, s->size, text, sizeof text);
    spoor_location loc[8];
    spoor_elf_symbolize(m->elf, s->pc, loc, 8);
    spoor_location l = loc[0];
    if (m->jout) {
        json_out *j = m->jout;
        json_object_begin(j, NULL);
        json_key_hex32(j, JSON_KEY("pc"), s->pc);
        json_key_string(j, JSON_KEY("insn"), text);
        json_key_string(j, JSON_KEY("function"), l.function);
        json_key_string(j, JSON_KEY("file"), l.file);
        if (l.file || l.line) /* line 0: DWARF's "no line" in that file */
            json_key_uint(j, JSON_KEY("line"), l.line);
        else
            json_key_null(j, JSON_KEY("line"));
        json_object_end(j);
        json_finish(j);
        return;
    }
    flow_location_text(m, &l);
    ob_str(o, "   ");
    ob_hex8(o, s->pc);
    if (l.function && l.has_offset) {
        ob_str(o, " <+");
        ob_u32(o, l.offset);
        ob_char(o, '>');
    }
    ob_str(o, ":\t");
    ob_str(o, text);
    ob_char(o, '\n');
}

void mtb_flow_packet(mtb_flow_printer *m, const spoor_mtb_packet *p)
{
    outbuf *o = m->out;
    if (m->jout)
        return;
    if (p->s)
        ob_str(o, "--- Begin Trace Session\n");
    switch (p->kind) {
    case SPOOR_MTB_EXCEPTION_ENTRY:
        ob_printf(o, "--- exception entry (return address 0x%08x) to 0x%08x\n", p->src, p->dst);
        break;
    case SPOOR_MTB_EXCEPTION_RETURN:
        if (!p->a)
            ob_printf(o, "--- exception return (to EXC_RETURN 0x%08x)\n", p->dst);
        else
            ob_printf(o, "--- exception return continues at 0x%08x\n", p->dst);
        break;
    default: ob_printf(o, "--- branch to 0x%08x\n", p->dst); break;
    }
    m->last_function = NULL;
    m->last_file = NULL;
    m->last_line = 0;
}

void mtb_flow_gap(mtb_flow_printer *m, const spoor_mtb_step *s)
{
    if (m->jout) {
        json_object_begin(m->jout, NULL);
        json_key_hex32(m->jout, JSON_KEY("gap"), s->pc);
        json_key_string(m->jout, JSON_KEY("why"), s->why);
        json_object_end(m->jout);
        json_finish(m->jout);
    } else
        ob_printf(m->out, "--- ?? the instructions from 0x%08x are unknown: %s\n", s->pc, s->why);
}

void mtb_flow_printer_init(mtb_flow_printer *m, const spoor_elf *elf, outbuf *out, json_out *jout)
{
    memset(m, 0, sizeof *m);
    m->elf = elf;
    m->out = out;
    m->jout = jout;
}

void mtb_flow_printer_free(mtb_flow_printer *m)
{
    for (unsigned i = 0; i < m->nsources; i++) {
        free(m->sources[i].path);
        free(m->sources[i].text);
        free(m->sources[i].lines);
    }
    m->nsources = 0;
}
