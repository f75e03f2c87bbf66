/* GDB's core files of a bare-metal Cortex-M target (gdb-multiarch `gcore` over a GDB server)
 * read into a spoor_dump with libelf (spoor/dump_formats.h). What GDB writes (gdb/gcore.c,
 * gdb/gcore-elf.c, gdb/arm-none-tdep.c): an ELF32 ET_CORE file for EM_ARM, one PT_LOAD segment
 * per memory range it read, and a PT_NOTE segment with one "CORE" NT_PRSTATUS note per thread
 * (the Linux ARM struct elf_prstatus: 72 bytes of signal and process fields, then pr_reg, 18
 * words r0-r15, cpsr (xPSR on M-profile), orig_r0, then pr_fpvalid), "LINUX" NT_ARM_VFP
 * (0x400: d0-d31 as 64-bit values, then fpscr) when the target has an FPU, and "GDB"
 * NT_GDB_TDESC (0xff000000: the XML target description). The first NT_PRSTATUS is the thread
 * GDB had selected; the registers are the CPU's as GDB saw them (inside a handler when it was
 * stopped there). */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/set_error.h"
#include "spoor/dump_formats.h"

#include "base/byteorder.h"
#include "snapshot/dump_foreign.h"
#include "snapshot/dump_internal.h"

#define CORE "ELF core"
#define PRSTATUS_REG 72u
#define PRSTATUS_SIZE 148u
#define NT_ARM_VFP_TYPE 0x400u
#define VFP_SIZE 260u  /* 32 doublewords and fpscr */
#define STATE_SIZE 96u /* SPOOR_NT_CORE_STATE, version 1: 24 words */

static bool fail_core(spoor_status status, const char *msg)
{
    spoor_set_error(status, CORE ": %s", msg);
    return false;
}

static void take_prstatus(spoor_dump *d, const uint8_t *p)
{
    spoor_regs *r = &d->regs;
    uint32_t fp_have = r->have & (SPOOR_HAVE_FP | SPOOR_HAVE_FP_HIGH);
    for (int i = 0; i < 16; i++)
        r->r[i] = spoor_le32(p + PRSTATUS_REG + 4 * i);
    r->xpsr = spoor_le32(p + PRSTATUS_REG + 64);
    r->exc_return = 0xFFFFFFFFu; /* not in gdb's core: unknown unless spoor's note says */
    d->exc_return_unknown = true;
    r->have = SPOOR_HAVE_CORE | fp_have;
    d->has_registers = true;
}

static void take_vfp(spoor_dump *d, const uint8_t *p)
{
    spoor_regs *r = &d->regs;
    for (int i = 0; i < 32; i++) /* s(2n) is the low half of d(n), s(2n+1) the high half */
        r->s[i] = spoor_le32(p + 4 * i);
    r->fpscr = spoor_le32(p + 256);
    r->have |= SPOOR_HAVE_FP | SPOOR_HAVE_FP_HIGH;
    r->flags |= SPOOR_REGS_FP_VALID;
}

/* spoor core's SPOOR_NT_CORE_STATE (spoor/core_write.h, docs/core.md): the registers an
 * NT_PRSTATUS has no place for, the fault status, the dump's reason. */
static bool take_state(spoor_dump *d, const uint8_t *p, size_t len)
{
    /* the reason's file and message follow the words, each NUL-terminated */
    const char *file = (const char *)p + STATE_SIZE;
    const char *file_end = memchr(file, 0, len - STATE_SIZE);
    const char *msg = file_end ? file_end + 1 : NULL;
    const char *msg_end = msg ? memchr(msg, 0, len - (size_t)((const uint8_t *)msg - p)) : NULL;
    if (!msg_end)
        return fail_core(SPOOR_ERR_FORMAT, "a spoor state note without its reason's texts");
    /* then, in cores of foreign dumps, the dump's words for its fault (absent in older cores) */
    size_t rest = len - (size_t)((const uint8_t *)msg_end + 1 - p);
    const char *words = rest && memchr(msg_end + 1, 0, rest) ? msg_end + 1 : "";
    if ((*file && !(d->file = strdup(file))) || (*msg && !(d->message = strdup(msg))) ||
        (*words && !(d->fault_words = strdup(words))))
        return fail_core(SPOOR_ERR_NOMEM, "out of memory");
    uint32_t w[STATE_SIZE / 4];
    for (unsigned i = 0; i < STATE_SIZE / 4; i++)
        w[i] = spoor_le32(p + 4 * i);
    spoor_regs *r = &d->regs;
    r->have |= w[1] & (SPOOR_HAVE_BANKED_SP | SPOOR_HAVE_EXC_RETURN | SPOOR_HAVE_LIMITS);
    d->exc_return_unknown = (w[1] & SPOOR_CORE_STATE_NO_EXC_RETURN) != 0;
    r->flags = w[2];
    r->msp = w[3];
    r->psp = w[4];
    r->control = w[5];
    r->exc_return = w[6];
    r->msplim = w[7];
    r->psplim = w[8];
    if (w[11]) {
        d->has_fault = true;
        d->fault =
            (spoor_fault_status){w[11], w[12], w[13], w[14], w[15], w[16], w[17], w[18], w[19]};
        d->fault_from = w[10]; /* where the input's fault status came from */
    }
    if (w[20]) {
        d->has_reason = true;
        d->reason = w[21];
        d->reason_code = w[22];
        d->line = w[23];
    }
    return true;
}

static bool read_notes(spoor_dump *d, Elf *elf, const GElf_Phdr *ph, unsigned *threads)
{
    Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
    if (!data)
        return fail_core(SPOOR_ERR_TRUNCATED,
                         "truncated: the note segment lies past the end of the file");
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    bool vfp = false;
    while (off < data->d_size && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char *name = (const char *)data->d_buf + name_off;
        const uint8_t *desc = (const uint8_t *)data->d_buf + desc_off;
        bool core = nh.n_namesz == 5 && !memcmp(name, "CORE", 5);
        bool linux = nh.n_namesz == 6 && !memcmp(name, "LINUX", 6);
        bool spoor = nh.n_namesz == 6 && !memcmp(name, "SPOOR", 6);
        bool gnu = nh.n_namesz == 4 && !memcmp(name, "GNU", 4);
        if (core && nh.n_type == NT_PRSTATUS) {
            if (nh.n_descsz < PRSTATUS_SIZE)
                return fail_core(SPOOR_ERR_FORMAT, "an NT_PRSTATUS note shorter than 148 bytes");
            if (!(*threads)++)
                take_prstatus(d, desc);
        } else if (linux && nh.n_type == NT_ARM_VFP_TYPE && !vfp && *threads <= 1) {
            if (nh.n_descsz < VFP_SIZE)
                return fail_core(SPOOR_ERR_FORMAT, "an NT_ARM_VFP note shorter than 260 bytes");
            take_vfp(d, desc);
            vfp = true;
        } else if (spoor && nh.n_type == SPOOR_NT_CORE_STATE && *threads) {
            if (nh.n_descsz < STATE_SIZE + 2 || spoor_le32(desc) != 1)
                return fail_core(SPOOR_ERR_FORMAT,
                                 "a spoor state note cut short or of another version");
            if (!take_state(d, desc, nh.n_descsz))
                return false;
        } else if (gnu && nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz && !d->build_id) {
            /* the chunk's bytes are the file's at the segment's offset */
            d->build_id = d->data + ph->p_offset + desc_off;
            d->build_id_len = nh.n_descsz;
        } else if (!(spoor && nh.n_type == SPOOR_NT_CORE_THREADS)) {
            d->skipped_records++;
        }
    }
    return true;
}

static bool read_core(spoor_dump *d, Elf *elf)
{
    Elf32_Ehdr *eh = elf32_getehdr(elf);
    if (!eh)
        return fail_core(SPOOR_ERR_UNSUPPORTED, "not a 32-bit ELF file");
    if (eh->e_type != ET_CORE)
        return fail_core(SPOOR_ERR_FORMAT, "an ELF file that is not a core file");
    if (eh->e_machine != EM_ARM)
        return fail_core(SPOOR_ERR_UNSUPPORTED, "not of an ARM target");
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return fail_core(SPOOR_ERR_FORMAT, "bad program headers");
    if (n && !elf32_getphdr(elf))
        return fail_core(SPOOR_ERR_TRUNCATED, "truncated: the program headers are cut");
    unsigned threads = 0;
    for (size_t i = 0; i < n; i++) {
        /* a copy: the table in a core's bytes need not be aligned for Elf32_Phdr */
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            return fail_core(SPOOR_ERR_FORMAT, "bad program headers");
        if (ph.p_type == PT_NOTE && !read_notes(d, elf, &ph, &threads))
            return false;
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
            continue;
        if (ph.p_offset + ph.p_filesz > d->size) {
            spoor_set_error(SPOOR_ERR_TRUNCATED,
                            CORE ": truncated: the segment at 0x%08" PRIx32 " (%" PRIu32
                                 " bytes) ends past the file's %zu bytes",
                            (uint32_t)ph.p_vaddr, (uint32_t)ph.p_filesz, d->size);
            return false;
        }
        if (ph.p_vaddr + ph.p_filesz > 0x100000000ull)
            return fail_core(SPOOR_ERR_FORMAT, "a segment runs past the 4 GiB address space");
        if (!spoor_foreign_add_region(d, (uint32_t)ph.p_vaddr, (uint32_t)ph.p_filesz,
                                      d->data + ph.p_offset))
            return false;
    }
    if (!threads)
        return fail_core(SPOOR_ERR_FORMAT, "no NT_PRSTATUS note: no registers");
    return spoor_foreign_merge_regions(d);
}

/* Reads the core in d->data (d freed on failure). */
static spoor_dump *parse_core(spoor_dump *d)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)d->data, d->size);
    bool ok = elf ? read_core(d, elf) : fail_core(SPOOR_ERR_FORMAT, elf_errmsg(-1));
    if (elf)
        elf_end(elf);
    if (!ok) {
        spoor_dump_free(d);
        return NULL;
    }
    return d;
}

spoor_dump *spoor_elfcore_dump_parse(const uint8_t *bytes, size_t len)
{
    spoor_dump *d = spoor_foreign_dump_new(bytes, len, "gdb core");
    return d ? parse_core(d) : NULL;
}

spoor_dump *spoor_elfcore_dump_map(int fd, size_t size, const char *path)
{
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        return NULL;
    }
    spoor_dump *d = calloc(1, sizeof *d);
    if (!d) {
        munmap(map, size);
        spoor_set_error(SPOOR_ERR_NOMEM, "dump: out of memory");
        return NULL;
    }
    d->data = map;
    d->size = d->mapped_len = size;
    d->foreign_format = "gdb core";
    return parse_core(d);
}
