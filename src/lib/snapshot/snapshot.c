/* Opening a stopped target from a dump, raw debugger output, a live GDB server or (memory
 * only) OpenOCD: registers, fault status and the layered memory view (spoor/snapshot.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/set_error.h"
#include "spoor/fault.h"
#include "spoor/gdb_rsp.h"
#include "spoor/snapshot.h"

#include "snapshot/dump_internal.h"

#define DEFAULT_GDB_TIMEOUT_MS 5000u

static bool fail_arg(const char *msg)
{
    spoor_set_error(SPOOR_ERR_ARGUMENT, "%s", msg);
    return false;
}

static bool check_source(const spoor_snapshot_source *src)
{
    bool raw = src->regs_path || src->nmems;
    if (src->gdb && src->openocd)
        return fail_arg("give one live target: a GDB server or OpenOCD, not both");
    if (src->openocd && !src->memory_only)
        return fail_arg("OpenOCD gives target memory, not the registers: give a DUMP, "
                        "--regs/--mem or --gdb HOST:PORT");
    /* memory only: the layers stack whatever is given (no registers to disagree) */
    if (src->memory_only && !src->regs_path &&
        (src->dump_path || src->nmems || src->gdb || src->openocd))
        return true;
    if (src->gdb && (src->dump_path || src->regs_path))
        return fail_arg("give either a DUMP, --regs/--mem or --gdb HOST:PORT, not several");
    if (src->dump_path && raw)
        return fail_arg("give either a DUMP or --regs/--mem, not both");
    if (!src->gdb && !src->dump_path && !raw)
        return fail_arg("no DUMP given (or --regs/--mem, or --gdb HOST:PORT)");
    return true;
}

/* Adds the --mem images; two images that claim the same bytes are refused (which one is
 * right?). */
static bool add_images(spoor_snapshot *s, const spoor_snapshot_source *src)
{
    for (size_t i = 0; i < src->nmems; i++) {
        const spoor_raw_memory *a = &src->mems[i];
        struct stat st;
        if (stat(a->path, &st) == 0) {
            uint64_t a_end = (uint64_t)a->address + (uint64_t)st.st_size;
            for (size_t j = 0; j < i; j++) {
                const spoor_raw_memory *b = &src->mems[j];
                struct stat bt;
                if (stat(b->path, &bt) != 0)
                    continue;
                uint64_t b_end = (uint64_t)b->address + (uint64_t)bt.st_size;
                if (a->address < b_end && b->address < a_end && st.st_size && bt.st_size) {
                    spoor_set_error(SPOOR_ERR_ARGUMENT,
                                    "--mem %s (0x%08" PRIx32 "+%lld) and --mem %s (0x%08" PRIx32
                                    "+%lld) overlap",
                                    b->path, b->address, (long long)bt.st_size, a->path, a->address,
                                    (long long)st.st_size);
                    return false;
                }
            }
        }
        if (!spoor_mem_add_file(s->mem, a->address, a->path))
            return false;
    }
    return true;
}

/* A fault handler's own state: IPSR names the fault exception (3..7). */
static int fault_exception_of(const spoor_regs *r)
{
    unsigned ipsr = r->xpsr & 0x1FFu;
    return ipsr >= 3 && ipsr <= 7 ? (int)ipsr : -1;
}

/* Zephyr's threads-metadata block holds the _kernel struct: where no memory block has it, it
 * is memory at the ELF's _kernel, so the RTOS layer finds every thread. */
static bool map_zephyr_kernel(spoor_dump *d, const spoor_elf *elf)
{
    uint32_t addr, size;
    if (!d->zephyr_kernel || !elf || !spoor_elf_symbol(elf, "_kernel", &addr, &size))
        return true;
    uint64_t end = (uint64_t)addr + d->zephyr_kernel_len;
    for (size_t i = 0; i < d->region_count; i++)
        if (d->regions[i].address < end &&
            addr < (uint64_t)d->regions[i].address + d->regions[i].length)
            return true; /* the memory blocks have (some of) it: theirs stand */
    if (end > 0x100000000ull)
        return true;
    spoor_dump_region *r = realloc(d->regions, (d->region_count + 1) * sizeof *r);
    if (!r) {
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return false;
    }
    d->regions = r;
    r[d->region_count++] = (spoor_dump_region){addr, (uint32_t)d->zephyr_kernel_len,
                                               SPOOR_REGION_RTOS, false, d->zephyr_kernel};
    return spoor_dump_check_regions(d);
}

static bool adopt_dump(spoor_snapshot *s, bool raw, bool memory_only, const spoor_elf *elf)
{
    if (!map_zephyr_kernel(s->dump, elf))
        return false;
    if (!s->dump->has_registers && !memory_only) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "%s: no registers in the %s", s->input,
                        raw ? "input (give --regs)" : "dump");
        return false;
    }
    s->regs = s->dump->regs;
    if (s->dump->has_fault) {
        s->fault = s->dump->fault;
        s->fault_from = raw ? SPOOR_FAULT_FROM_REGS : SPOOR_FAULT_FROM_DUMP;
        /* a core spoor core wrote: the source its input had (a live target, --regs, --mem) */
        if (!raw && s->dump->fault_from > SPOOR_FAULT_FROM_DUMP &&
            s->dump->fault_from <= SPOOR_FAULT_FROM_LIVE_SCS)
            s->fault_from = (spoor_fault_source)s->dump->fault_from;
    }
    if (s->dump->has_reason && s->dump->reason == SPOOR_REASON_FAULT && s->dump->reason_code >= 3 &&
        s->dump->reason_code <= 7)
        s->exception = (int)s->dump->reason_code;
    if (!spoor_mem_add_dump(s->mem, s->dump))
        return false;
    return true;
}

static bool open_dump(spoor_snapshot *s, const spoor_snapshot_source *src, const spoor_elf *elf)
{
    bool raw = src->regs_path || !src->dump_path;
    s->input = raw ? (src->regs_path ? src->regs_path : "--mem") : src->dump_path;
    /* --mem images of a raw snapshot are a memory layer (add_images); the dump holds only the
     * registers then. */
    if (raw && !src->regs_path) {
        if (src->memory_only)
            return true;
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "--mem: no registers (give --regs)");
        return false;
    }
    s->dump = raw ? spoor_dump_from_regs_json(src->regs_path)
                  : spoor_dump_load_as(src->dump_path, src->format);
    return s->dump && adopt_dump(s, raw, src->memory_only, elf);
}

/* The exception and, when the input has no fault registers, the fault status from memory: a
 * debugger snapshot that covers the System Control Space (or a live target) still has them.
 * Only memory that is the target's is trusted, not the ELF's. */
static void finish(spoor_snapshot *s)
{
    if (s->exception < 0)
        s->exception = fault_exception_of(&s->regs);
    if (!s->fault.valid && !s->memory_only &&
        spoor_fault_status_read(spoor_mem_reader, s->mem, &s->fault))
        s->fault_from = s->gdb ? SPOOR_FAULT_FROM_LIVE_SCS : SPOOR_FAULT_FROM_MEMORY;
}

static bool open_gdb(spoor_snapshot *s, const spoor_snapshot_source *src)
{
    s->input = src->gdb;
    s->gdb = spoor_gdb_connect(src->gdb,
                               src->gdb_timeout_ms ? src->gdb_timeout_ms : DEFAULT_GDB_TIMEOUT_MS);
    if (!s->gdb)
        return false;
    if (src->memory_only)
        return true;
    return spoor_gdb_read_registers(s->gdb, &s->regs, s->missing, sizeof s->missing);
}

static bool open_openocd(spoor_snapshot *s, const spoor_snapshot_source *src)
{
    unsigned timeout = src->gdb_timeout_ms ? src->gdb_timeout_ms : DEFAULT_GDB_TIMEOUT_MS;
    s->input = src->openocd;
    s->openocd = !strncmp(src->openocd, "tcl:", 4)
                     ? spoor_openocd_connect_tcl(src->openocd + 4, timeout)
                     : spoor_openocd_connect(src->openocd, timeout);
    return s->openocd != NULL;
}

static spoor_snapshot *snapshot_new(void)
{
    spoor_snapshot *s = calloc(1, sizeof *s);
    if (!s || !(s->mem = spoor_mem_new())) {
        free(s);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s->exception = -1;
    return s;
}

spoor_snapshot *spoor_snapshot_open(const spoor_snapshot_source *src, const spoor_elf *elf)
{
    if (!check_source(src))
        return NULL;
    spoor_snapshot *s = snapshot_new();
    if (!s)
        return NULL;
    s->memory_only = src->memory_only;
    bool live = src->gdb || src->openocd;
    bool ok = true;
    if (src->dump_path || src->regs_path || !live)
        ok = open_dump(s, src, elf);
    if (ok && src->gdb)
        ok = open_gdb(s, src);
    if (ok && src->openocd)
        ok = open_openocd(s, src);
    /* Layers, first match wins: a dump's regions, the --mem images, the ELF's read-only
     * contents, and last the live target (it can answer any address, so what the user gave and
     * what flash holds per the ELF are not asked over the wire). */
    if (ok)
        ok = add_images(s, src) && (!elf || spoor_mem_add_elf(s->mem, elf)) &&
             (!s->gdb || spoor_mem_add_gdb(s->mem, s->gdb)) &&
             (!s->openocd || spoor_mem_add_openocd(s->mem, s->openocd));
    if (!ok) {
        spoor_snapshot_close(s);
        return NULL;
    }
    finish(s);
    return s;
}

spoor_snapshot *spoor_snapshot_from_dump(spoor_dump *dump, const char *name, const spoor_elf *elf)
{
    spoor_snapshot *s = snapshot_new();
    if (!s) {
        spoor_dump_free(dump);
        return NULL;
    }
    s->dump = dump;
    s->input = name;
    if (!adopt_dump(s, false, false, elf) || (elf && !spoor_mem_add_elf(s->mem, elf))) {
        spoor_snapshot_close(s);
        return NULL;
    }
    finish(s);
    return s;
}

void spoor_snapshot_close(spoor_snapshot *s)
{
    if (!s)
        return;
    spoor_mem_free(s->mem);
    spoor_gdb_close(s->gdb);
    spoor_openocd_close(s->openocd);
    spoor_dump_free(s->dump);
    free(s);
}

int spoor_snapshot_signal(const spoor_snapshot *s)
{
    if (s->dump && s->dump->has_reason)
        return s->dump->reason == SPOOR_REASON_FAULT ? 11 : 5;
    if (s->gdb)
        return spoor_gdb_stop_signal(s->gdb);
    return 11;
}

void spoor_rsp_target_from_snapshot(spoor_rsp_target *t, const spoor_snapshot *s, bool hard_float)
{
    memset(t, 0, sizeof *t);
    t->regs = s->regs;
    t->fp = hard_float || (s->regs.have & SPOOR_HAVE_FP) ||
            (s->regs.flags & (SPOOR_REGS_FP_FRAME | SPOOR_REGS_FP_VALID));
    t->signal = spoor_snapshot_signal(s);
    t->read = spoor_mem_reader;
    t->ctx = s->mem;
}

const char *spoor_fault_source_name(spoor_fault_source from)
{
    switch (from) {
    case SPOOR_FAULT_FROM_DUMP: return "dump";
    case SPOOR_FAULT_FROM_REGS: return "registers file";
    case SPOOR_FAULT_FROM_MEMORY: return "memory (System Control Space)";
    case SPOOR_FAULT_FROM_LIVE_SCS: return "live target (System Control Space)";
    case SPOOR_FAULT_FROM_NONE: break;
    }
    return NULL;
}
