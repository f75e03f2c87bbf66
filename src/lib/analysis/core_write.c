/* spoor core: an ELF core file of a snapshot that GDB opens (spoor/core_write.h).
 *
 * The layout is the one GDB's gcore writes for a bare-metal ARM target and reads back
 * (gdb/gcore-elf.c, gdb/arm-none-tdep.c; ELF gABI "Note Section"; the Linux ARM struct
 * elf_prstatus): an ELF32 ET_CORE header for EM_ARM, one PT_NOTE segment, then a PT_LOAD segment
 * per memory range. The notes, each a 4-byte aligned name and descriptor:
 *   "CORE" NT_PRSTATUS (148 bytes) per thread: si_signo at 0, pr_cursig at 12 (16 bits), pr_pid
 *     at 24 (GDB's LWP), pr_reg at 72: r0-r15, then xPSR in the CPSR word, then orig_r0;
 *     pr_fpvalid at 144. GDB makes the first the selected thread.
 *   "LINUX" NT_ARM_VFP (260 bytes) after the NT_PRSTATUS of a thread whose FP registers are
 *     known: d0-d31 as 64-bit values (s(2n) the low half of d(n)), then FPSCR.
 *   "GDB" NT_GDB_TDESC: the XML target description (M-profile core registers, the FP ones).
 *   "GNU" NT_GNU_BUILD_ID: the dump's build-id, when it has one.
 *   "SPOOR" SPOOR_NT_CORE_STATE and SPOOR_NT_CORE_THREADS (docs/core.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/set_error.h"
#include "spoor/analysis.h"
#include "spoor/core_write.h"

#include "base/byteorder.h"
#include "util/grow.h"

#define NT_PRSTATUS_TYPE 1u
#define NT_GNU_BUILD_ID_TYPE 3u
#define NT_ARM_VFP_TYPE 0x400u
#define NT_GDB_TDESC_TYPE 0xff000000u
#define PRSTATUS_SIZE 148u
#define PRSTATUS_REG 72u
#define VFP_SIZE 260u
#define EHDR_SIZE 52u
#define PHDR_SIZE 32u
#define STATE_WORDS 24u
#define THREAD_ENTRY 60u   /* lwp, tcb, flags, name[48] */
#define STACK_WINDOW 4096u /* bytes above each SP of a live target */
#define READ_PIECE 256u    /* a live range that cannot be read whole is read in pieces */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

static bool put(bytes *b, const void *src, size_t n)
{
    if (spoor_grow((void **)&b->p, &b->cap, b->len + n + 3, 1) < 0) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    if (src)
        memcpy(b->p + b->len, src, n);
    else
        memset(b->p + b->len, 0, n);
    b->len += n;
    return true;
}

static bool put32(bytes *b, uint32_t v)
{
    uint8_t w[4];
    spoor_put_le32(w, v);
    return put(b, w, 4);
}

static bool align4(bytes *b)
{
    return put(b, NULL, (4 - b->len % 4) % 4);
}

/* One note: namesz, descsz, type, the name (NUL-terminated, padded to 4), the descriptor. */
static bool note(bytes *b, const char *name, uint32_t type, const void *desc, size_t n)
{
    size_t namesz = strlen(name) + 1;
    return put32(b, (uint32_t)namesz) && put32(b, (uint32_t)n) && put32(b, type) &&
           put(b, name, namesz) && align4(b) && put(b, desc, n) && align4(b);
}

static bool prstatus(bytes *b, const spoor_regs *r, uint32_t lwp, int signal)
{
    uint8_t d[PRSTATUS_SIZE] = {0};
    spoor_put_le32(d, (uint32_t)signal); /* si_signo */
    d[12] = (uint8_t)signal;             /* pr_cursig */
    spoor_put_le32(d + 24, lwp);         /* pr_pid */
    for (int i = 0; i < 16; i++)
        spoor_put_le32(d + PRSTATUS_REG + 4 * i, r->r[i]);
    spoor_put_le32(d + PRSTATUS_REG + 64, r->xpsr);
    spoor_put_le32(d + 144, (r->have & SPOOR_HAVE_FP) ? 1 : 0);
    return note(b, "CORE", NT_PRSTATUS_TYPE, d, sizeof d);
}

static bool vfp(bytes *b, const spoor_regs *r)
{
    uint8_t d[VFP_SIZE] = {0};
    int n = (r->have & SPOOR_HAVE_FP_HIGH) ? 32 : 16;
    for (int i = 0; i < n; i++)
        spoor_put_le32(d + 4 * i, r->s[i]);
    spoor_put_le32(d + 256, r->fpscr);
    return note(b, "LINUX", NT_ARM_VFP_TYPE, d, sizeof d);
}

/* The target description: the M-profile core registers, and the VFP set when fp. */
static bool tdesc(bytes *b, bool fp)
{
    char xml[4096];
    size_t n = (size_t)snprintf(xml, sizeof xml,
                                "<?xml version=\"1.0\"?>\n"
                                "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
                                "<target version=\"1.0\">\n"
                                "<architecture>arm</architecture>\n"
                                "<feature name=\"org.gnu.gdb.arm.m-profile\">\n");
    static const char *const core[] = {"r0", "r1", "r2",  "r3",  "r4",  "r5", "r6", "r7",
                                       "r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc"};
    for (int i = 0; i < 16; i++)
        n += (size_t)snprintf(xml + n, sizeof xml - n,
                              "<reg name=\"%s\" bitsize=\"32\" regnum=\"%d\"%s/>\n", core[i], i,
                              i == 13   ? " type=\"data_ptr\""
                              : i == 15 ? " type=\"code_ptr\""
                                        : "");
    n += (size_t)snprintf(xml + n, sizeof xml - n,
                          "<reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/>\n</feature>\n");
    if (fp) {
        n += (size_t)snprintf(xml + n, sizeof xml - n, "<feature name=\"org.gnu.gdb.arm.vfp\">\n");
        for (int i = 0; i < 16; i++)
            n += (size_t)snprintf(xml + n, sizeof xml - n,
                                  "<reg name=\"d%d\" bitsize=\"64\" type=\"ieee_double\"/>\n", i);
        n += (size_t)snprintf(xml + n, sizeof xml - n,
                              "<reg name=\"fpscr\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
                              "</feature>\n");
    }
    n += (size_t)snprintf(xml + n, sizeof xml - n, "</target>\n");
    return note(b, "GDB", NT_GDB_TDESC_TYPE, xml, n + 1);
}

/* SPOOR_NT_CORE_STATE: what the snapshot holds beside r0-r15, xPSR and the FP registers. */
static bool state_note(bytes *b, const spoor_snapshot *snap)
{
    const spoor_regs *r = &snap->regs;
    const spoor_fault_status *f = &snap->fault;
    const spoor_dump *d = snap->dump;
    uint32_t have = r->have | (d && d->exc_return_unknown ? SPOOR_CORE_STATE_NO_EXC_RETURN : 0u);
    uint32_t w[STATE_WORDS] = {1, /* version */
                               have,
                               r->flags,
                               r->msp,
                               r->psp,
                               r->control,
                               r->exc_return,
                               r->msplim,
                               r->psplim,
                               (uint32_t)snap->exception,
                               (uint32_t)snap->fault_from,
                               f->valid,
                               f->cfsr,
                               f->hfsr,
                               f->dfsr,
                               f->mmfar,
                               f->bfar,
                               f->afsr,
                               f->sfsr,
                               f->sfar,
                               d && d->has_reason,
                               d ? d->reason : 0,
                               d ? d->reason_code : 0,
                               d ? d->line : 0};
    /* then the reason's file and message and a foreign dump's words for its fault, each
     * NUL-terminated ("" when none) */
    const char *file = d && d->file ? d->file : "", *msg = d && d->message ? d->message : "";
    const char *words = d && d->fault_words ? d->fault_words : "";
    size_t flen = strlen(file) + 1, mlen = strlen(msg) + 1, wlen = strlen(words) + 1;
    uint8_t *out = malloc(STATE_WORDS * 4 + flen + mlen + wlen);
    if (!out) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    for (unsigned i = 0; i < STATE_WORDS; i++)
        spoor_put_le32(out + 4 * i, w[i]);
    memcpy(out + STATE_WORDS * 4, file, flen);
    memcpy(out + STATE_WORDS * 4 + flen, msg, mlen);
    memcpy(out + STATE_WORDS * 4 + flen + mlen, words, wlen);
    bool ok = note(b, "SPOOR", SPOOR_NT_CORE_STATE, out, STATE_WORDS * 4 + flen + mlen + wlen);
    free(out);
    return ok;
}

/* ---- memory ---------------------------------------------------------------------------- */

typedef struct range_list {
    spoor_core_range *r;
    size_t n, cap;
} range_list;

static bool add_range(range_list *l, uint64_t addr, uint64_t size)
{
    if (!size || addr >= 0x100000000ull)
        return true;
    if (addr + size > 0x100000000ull)
        size = 0x100000000ull - addr;
    if (spoor_grow((void **)&l->r, &l->cap, l->n + 1, sizeof *l->r) < 0) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    l->r[l->n++] = (spoor_core_range){(uint32_t)addr, (uint32_t)size};
    return true;
}

static int by_addr(const void *a, const void *b)
{
    const spoor_core_range *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sorts the ranges and joins those that overlap or touch. */
static void merge(range_list *l)
{
    if (!l->n)
        return;
    qsort(l->r, l->n, sizeof *l->r, by_addr);
    size_t k = 0;
    for (size_t i = 1; i < l->n; i++) {
        uint64_t end = (uint64_t)l->r[k].addr + l->r[k].size;
        if (l->r[i].addr <= end) {
            uint64_t e2 = (uint64_t)l->r[i].addr + l->r[i].size;
            if (e2 > end)
                l->r[k].size = (uint32_t)(e2 - l->r[k].addr);
        } else {
            l->r[++k] = l->r[i];
        }
    }
    l->n = k + 1;
}

/* The memory the core holds: what the input captured (a dump's regions, the --mem images, a
 * Zephyr dump's _kernel block), for a live target its RAM sections and a window above each stack
 * pointer, then the caller's ranges. */
static bool memory_ranges(const spoor_elf *elf, const spoor_snapshot *snap,
                          const spoor_core_options *o, const spoor_threads *ts, range_list *l)
{
    size_t n = spoor_mem_captured_ranges(snap->mem, NULL, 0);
    spoor_mem_range *held = calloc(n ? n : 1, sizeof *held);
    if (!held) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    spoor_mem_captured_ranges(snap->mem, held, n);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = add_range(l, held[i].addr, held[i].len);
    free(held);
    if (!ok)
        return false;
    if (snap->gdb) {
        spoor_elf_range ram[256];
        size_t n = spoor_elf_ram_ranges(elf, ram, 256);
        for (size_t i = 0; i < n && i < 256; i++)
            if (!add_range(l, ram[i].addr, ram[i].size))
                return false;
        const spoor_regs *r = &snap->regs;
        uint32_t sp[3] = {r->r[13], r->msp, r->psp};
        for (int i = 0; i < 3; i++)
            if (sp[i] && !add_range(l, sp[i] & ~3u, STACK_WINDOW))
                return false;
        for (size_t i = 0; ts && i < ts->count; i++)
            if (ts->thread[i].has_regs &&
                !add_range(l, ts->thread[i].regs.r[13] & ~3u, STACK_WINDOW))
                return false;
    }
    for (size_t i = 0; i < o->nranges; i++)
        if (!add_range(l, o->ranges[i].addr, o->ranges[i].size))
            return false;
    merge(l);
    return true;
}

/* A segment read from memory. */
typedef struct segment {
    uint32_t addr, size;
    uint8_t *data;
} segment;

typedef struct segment_list {
    segment *s;
    size_t n, cap;
} segment_list;

static bool add_segment(segment_list *sl, uint32_t addr, const uint8_t *data, size_t size)
{
    if (!size)
        return true;
    if (sl->n && sl->s[sl->n - 1].addr + sl->s[sl->n - 1].size == addr) { /* grows the last */
        segment *last = &sl->s[sl->n - 1];
        uint8_t *p = realloc(last->data, last->size + size);
        if (!p)
            goto nomem;
        memcpy(p + last->size, data, size);
        last->data = p;
        last->size += (uint32_t)size;
        return true;
    }
    if (spoor_grow((void **)&sl->s, &sl->cap, sl->n + 1, sizeof *sl->s) < 0)
        goto nomem;
    uint8_t *p = malloc(size);
    if (!p)
        goto nomem;
    memcpy(p, data, size);
    sl->s[sl->n++] = (segment){addr, (uint32_t)size, p};
    return true;
nomem:
    spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    return false;
}

/* Reads a range through the snapshot's view: whole, else piece by piece, keeping what reads. */
static bool read_range(spoor_snapshot *snap, spoor_core_range r, segment_list *sl, size_t *missing)
{
    uint8_t *buf = malloc(r.size);
    if (!buf) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    bool ok = true;
    if (spoor_mem_read(snap->mem, r.addr, buf, r.size)) {
        ok = add_segment(sl, r.addr, buf, r.size);
    } else {
        bool lost = false;
        for (uint64_t a = r.addr; ok && a < (uint64_t)r.addr + r.size;) {
            uint64_t next = (a + READ_PIECE) & ~(uint64_t)(READ_PIECE - 1);
            if (next > (uint64_t)r.addr + r.size)
                next = (uint64_t)r.addr + r.size;
            size_t len = (size_t)(next - a);
            if (spoor_mem_read(snap->mem, (uint32_t)a, buf, len))
                ok = add_segment(sl, (uint32_t)a, buf, len);
            else
                lost = true;
            a = next;
        }
        *missing += lost;
    }
    free(buf);
    return ok;
}

static void free_segments(segment_list *sl)
{
    for (size_t i = 0; i < sl->n; i++)
        free(sl->s[i].data);
    free(sl->s);
}

/* ---- threads --------------------------------------------------------------------------- */

/* The notes of the threads: NT_PRSTATUS (and NT_ARM_VFP) of each, then SPOOR_NT_CORE_THREADS. */
static bool thread_notes(bytes *b, const spoor_snapshot *snap, const spoor_threads *ts,
                         spoor_core_summary *sum)
{
    int signal = spoor_snapshot_signal(snap);
    bytes table = {0};
    bool ok = true;
    uint32_t lwp = 0;
    for (size_t i = 0; ok && ts && i < ts->count; i++) {
        const spoor_thread *t = &ts->thread[i];
        if (!t->has_regs && !t->unlisted) {
            sum->threads_left++;
            continue;
        }
        const spoor_regs *r = t->current || t->unlisted ? &snap->regs : &t->regs;
        lwp++;
        ok = prstatus(b, r, lwp, t->current || t->unlisted ? signal : 0) &&
             (!(r->have & SPOOR_HAVE_FP) || vfp(b, r));
        uint8_t e[THREAD_ENTRY] = {0};
        spoor_put_le32(e, lwp);
        spoor_put_le32(e + 4, t->tcb);
        spoor_put_le32(e + 8, (t->current ? 1u : 0) | (t->unlisted ? 2u : 0));
        if (t->read_ok)
            snprintf((char *)e + 12, THREAD_ENTRY - 12, "%.47s", t->info.name);
        ok = ok && put(&table, e, sizeof e);
    }
    sum->threads = lwp;
    if (ok && !lwp) { /* no threads asked for, or none could be read: the snapshot's registers */
        sum->threads = 1;
        ok = prstatus(b, &snap->regs, 1, signal) &&
             (!(snap->regs.have & SPOOR_HAVE_FP) || vfp(b, &snap->regs));
    } else if (ok) {
        ok = note(b, "SPOOR", SPOOR_NT_CORE_THREADS, table.p, table.len);
    }
    free(table.p);
    return ok;
}

/* ---- the file -------------------------------------------------------------------------- */

static void ehdr(uint8_t *h, uint16_t phnum)
{
    memset(h, 0, EHDR_SIZE);
    memcpy(h,
           "\x7f"
           "ELF",
           4);
    h[4] = 1;                   /* ELFCLASS32 */
    h[5] = 1;                   /* ELFDATA2LSB */
    h[6] = 1;                   /* EV_CURRENT */
    spoor_put_le16(h + 16, 4);  /* ET_CORE */
    spoor_put_le16(h + 18, 40); /* EM_ARM */
    spoor_put_le32(h + 20, 1);  /* EV_CURRENT */
    spoor_put_le32(h + 28, EHDR_SIZE);
    spoor_put_le32(h + 36, 0x05000000u); /* EF_ARM_EABI_VER5 */
    spoor_put_le16(h + 40, EHDR_SIZE);
    spoor_put_le16(h + 42, PHDR_SIZE);
    spoor_put_le16(h + 44, phnum);
}

static void phdr(uint8_t *p, uint32_t type, uint32_t off, uint32_t addr, uint32_t size,
                 uint32_t flags, uint32_t align)
{
    spoor_put_le32(p, type);
    spoor_put_le32(p + 4, off);
    spoor_put_le32(p + 8, addr);
    spoor_put_le32(p + 12, addr); /* p_paddr */
    spoor_put_le32(p + 16, size);
    spoor_put_le32(p + 20, size); /* p_memsz */
    spoor_put_le32(p + 24, flags);
    spoor_put_le32(p + 28, align);
}

static bool write_all(FILE *f, const void *p, size_t n)
{
    return !n || fwrite(p, 1, n, f) == n;
}

static bool write_file(const char *path, const bytes *notes, const segment_list *sl)
{
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    if (!tmp) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    snprintf(tmp, tlen, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    uint16_t phnum = (uint16_t)(1 + sl->n);
    uint8_t h[EHDR_SIZE], p[PHDR_SIZE];
    ehdr(h, phnum);
    bool ok = write_all(f, h, sizeof h);
    uint32_t off = EHDR_SIZE + PHDR_SIZE * phnum;
    phdr(p, 4 /* PT_NOTE */, off, 0, (uint32_t)notes->len, 0, 4);
    ok = ok && write_all(f, p, sizeof p);
    off += (uint32_t)notes->len;
    for (size_t i = 0; ok && i < sl->n; i++) {
        phdr(p, 1 /* PT_LOAD */, off, sl->s[i].addr, sl->s[i].size, 6 /* PF_R|PF_W */, 4);
        ok = write_all(f, p, sizeof p);
        off += (sl->s[i].size + 3) & ~3u;
    }
    ok = ok && write_all(f, notes->p, notes->len);
    static const uint8_t pad[4];
    for (size_t i = 0; ok && i < sl->n; i++)
        ok = write_all(f, sl->s[i].data, sl->s[i].size) &&
             write_all(f, pad, (4 - sl->s[i].size % 4) % 4);
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot write: %s", path, strerror(err));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}

bool spoor_core_write(const spoor_elf *elf, spoor_snapshot *snap, const spoor_core_options *options,
                      const char *path, spoor_core_summary *summary)
{
    static const spoor_core_options none;
    const spoor_core_options *o = options ? options : &none;
    spoor_core_summary sum;
    memset(&sum, 0, sizeof sum);
    spoor_threads *ts = NULL;
    if (o->threads) {
        ts = spoor_threads_read(elf, snap, 0, NULL, 0, SPOOR_STOP_RESET);
        if (!ts)
            return false;
        if (!ts->rtos)
            snprintf(sum.note, sizeof sum.note, "%s", ts->error);
    }
    sum.fp = spoor_elf_hard_float(elf) || (snap->regs.have & SPOOR_HAVE_FP);
    bytes notes = {0};
    range_list ranges = {0};
    segment_list segs = {0};
    bool ok = thread_notes(&notes, snap, ts, &sum) && tdesc(&notes, sum.fp) &&
              state_note(&notes, snap) &&
              (!snap->dump || !snap->dump->build_id ||
               note(&notes, "GNU", NT_GNU_BUILD_ID_TYPE, snap->dump->build_id,
                    snap->dump->build_id_len)) &&
              memory_ranges(elf, snap, o, ts, &ranges);
    for (size_t i = 0; ok && i < ranges.n; i++)
        ok = read_range(snap, ranges.r[i], &segs, &sum.ranges_missing);
    if (ok && segs.n > 0xfffe) {
        spoor_set_error(SPOOR_ERR_TOO_LARGE, "%zu memory ranges: more than an ELF file holds",
                        segs.n);
        ok = false;
    }
    sum.segments = segs.n;
    for (size_t i = 0; i < segs.n; i++)
        sum.bytes += segs.s[i].size;
    ok = ok && write_file(path, &notes, &segs);
    free(notes.p);
    free(ranges.r);
    free_segments(&segs);
    spoor_threads_free(ts);
    if (ok && summary)
        *summary = sum;
    return ok;
}
