/* Loading a firmware ELF: checks, sections, function symbols, build-id, memory image. The
 * symbolizer (symbols_internal.h) builds on this and is never called from here. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_internal.h"
#include "spoor/error.h"

static int corrupt(spoor_elf *e, const char *what)
{
    spoor_set_error(SPOOR_ERR_FORMAT, "%s: truncated or corrupt ELF: %s", e->path, what);
    return -1;
}

static int load_sections(spoor_elf *e, size_t file_size)
{
    size_t shnum, shstrndx;
    if (elf_getshdrnum(e->elf, &shnum) || elf_getshdrstrndx(e->elf, &shstrndx))
        return corrupt(e, elf_errmsg(-1));
    e->sections = calloc(shnum ? shnum : 1, sizeof *e->sections);
    if (!e->sections)
        return corrupt(e, "out of memory");
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return corrupt(e, elf_errmsg(-1));
        if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > file_size)
            return corrupt(e, "a section lies past the end of the file");
        struct elf_section *s = &e->sections[e->nsections++];
        s->name = elf_strptr(e->elf, shstrndx, sh.sh_name);
        if (!s->name)
            s->name = "";
        s->addr = (uint32_t)sh.sh_addr;
        s->size = (uint32_t)sh.sh_size;
        s->type = sh.sh_type;
        s->flags = sh.sh_flags;
        if (sh.sh_type != SHT_NOBITS && sh.sh_size) {
            Elf_Data *d = elf_rawdata(scn, NULL);
            if (!d || d->d_size != sh.sh_size)
                return corrupt(e, "unreadable section data");
            s->data = d->d_buf;
        }
        if (sh.sh_type == SHT_NOTE && s->data && !e->build_id) {
            /* Elf32_Nhdr records: namesz, descsz, type, name (4-aligned), desc (4-aligned) */
            size_t off = 0;
            while (off + 12 <= s->size) {
                uint32_t nsz, dsz, type;
                memcpy(&nsz, s->data + off, 4);
                memcpy(&dsz, s->data + off + 4, 4);
                memcpy(&type, s->data + off + 8, 4);
                size_t name_off = off + 12, desc_off = name_off + ((nsz + 3u) & ~3u);
                if (desc_off > s->size || dsz > s->size - desc_off)
                    break;
                if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(s->data + name_off, "GNU", 4)) {
                    e->build_id = s->data + desc_off;
                    e->build_id_len = dsz;
                    break;
                }
                off = desc_off + ((dsz + 3u) & ~3u);
            }
        }
    }
    return 0;
}

static int cmp_symbol(const void *a, const void *b)
{
    const struct elf_symbol *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    /* At one start: larger first, and among equal sizes the later symbol-table entry first, so
     * that the backward walk in spoor_elf_symbol_at() meets the smallest covering symbol and,
     * among aliases, the first one in the table (as binutils does). */
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->index > y->index ? -1 : x->index < y->index;
}

static int load_symbols(spoor_elf *e)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d)
            return corrupt(e, "unreadable symbol table");
        size_t n = sh.sh_size / sh.sh_entsize;
        e->symbols = calloc(n ? n : 1, sizeof *e->symbols);
        if (!e->symbols)
            return corrupt(e, "out of memory");
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym))
                return corrupt(e, "unreadable symbol");
            if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            struct elf_symbol *s = &e->symbols[e->nsymbols++];
            s->start = (uint32_t)sym.st_value & ~1u; /* Thumb bit */
            s->size = (uint32_t)sym.st_size;
            s->name = name;
            s->index = (uint32_t)i;
        }
        break;
    }
    if (e->nsymbols)
        qsort(e->symbols, e->nsymbols, sizeof *e->symbols, cmp_symbol);
    return 0;
}

/* The .dwo name of the first unit whose debug information was split off (-gsplit-dwarf: a
 * DWARF 5 skeleton unit, or a DWARF 4 unit with DW_AT_GNU_dwo_name), or NULL when none was. */
static const char *split_unit(Dwarf *dwarf)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t type;
    Dwarf_Die die;
    while (dwarf_get_units(dwarf, cu, &cu, &version, &type, &die, NULL) == 0) {
        Dwarf_Attribute attr;
        const char *dwo = dwarf_formstring(dwarf_attr(&die, DW_AT_dwo_name, &attr));
        if (!dwo)
            dwo = dwarf_formstring(dwarf_attr(&die, DW_AT_GNU_dwo_name, &attr));
        if (dwo || type == DW_UT_skeleton)
            return dwo ? dwo : "?";
    }
    return NULL;
}

spoor_elf *spoor_elf_open(const char *path)
{
    elf_version(EV_CURRENT);
    spoor_elf *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) {
        free(e);
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    e->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (e->fd < 0 || fstat(e->fd, &st)) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        spoor_set_error(SPOOR_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
    if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
        spoor_set_error(SPOOR_ERR_FORMAT, "%s: not an ELF file", path);
        goto fail;
    }
    GElf_Ehdr eh;
    if (!gelf_getehdr(e->elf, &eh)) {
        corrupt(e, elf_errmsg(-1));
        goto fail;
    }
    if (eh.e_ident[EI_CLASS] != ELFCLASS32 || eh.e_machine != EM_ARM) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: not a 32-bit ARM ELF (class %d, machine %d)",
                        path, eh.e_ident[EI_CLASS], eh.e_machine);
        goto fail;
    }
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: big-endian ARM ELF is not supported", path);
        goto fail;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > size ||
        eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > size) {
        spoor_set_error(
            SPOOR_ERR_FORMAT,
            "%s: truncated or corrupt ELF: headers past the end of the file (%llu bytes)", path,
            (unsigned long long)size);
        goto fail;
    }
    if (load_sections(e, (size_t)st.st_size) || load_symbols(e))
        goto fail;
    e->dwarf = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
    const char *dwo = e->dwarf ? split_unit(e->dwarf) : NULL;
    if (dwo) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                        "%s: split DWARF (-gsplit-dwarf) is not supported: functions and inlined "
                        "code are in .dwo files (%s, ...) that spoor does not read; build without "
                        "-gsplit-dwarf",
                        path, dwo);
        goto fail;
    }
    return e;
fail:
    spoor_elf_close(e);
    return NULL;
}

void spoor_elf_close(spoor_elf *e)
{
    if (!e)
        return;
    if (e->dwarf)
        dwarf_end(e->dwarf);
    if (e->elf)
        elf_end(e->elf);
    if (e->fd >= 0)
        close(e->fd);
    free(e->sections);
    free(e->symbols);
    if (e->symbolizer)
        e->release_symbolizer(e->symbolizer);
    if (e->call_sites)
        e->release_call_sites(e->call_sites);
    spoor_demangle_cache_free(&e->demangled);
    free(e->path);
    free(e);
}

void spoor_elf_set_demangle(spoor_elf *e, bool demangle)
{
    e->raw_names = !demangle;
}

const char *spoor_elf_path(const spoor_elf *e)
{
    return e->path;
}

size_t spoor_elf_read(const spoor_elf *e, uint32_t addr, void *buf, size_t len)
{
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        uint32_t a = addr + (uint32_t)done;
        const struct elf_section *hit = NULL;
        for (size_t i = 0; i < e->nsections; i++) {
            const struct elf_section *s = &e->sections[i];
            if ((s->flags & SHF_ALLOC) && s->data && a >= s->addr && a - s->addr < s->size) {
                hit = s;
                break;
            }
        }
        if (!hit)
            break;
        size_t n = hit->size - (a - hit->addr);
        if (n > len - done)
            n = len - done;
        memcpy(out + done, hit->data + (a - hit->addr), n);
        done += n;
    }
    return done;
}

bool spoor_elf_section(const spoor_elf *e, const char *name, uint32_t *addr, const uint8_t **data,
                       size_t *size)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *s = &e->sections[i];
        if (!strcmp(s->name, name)) {
            if (addr)
                *addr = s->addr;
            if (data)
                *data = s->data;
            if (size)
                *size = s->size;
            return true;
        }
    }
    return false;
}

const struct elf_section *spoor_elf_debug_section(const spoor_elf *e, const char *name)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *sec = &e->sections[i];
        if (!strcmp(sec->name, name))
            return sec->data && !(sec->flags & SHF_COMPRESSED) ? sec : NULL;
    }
    return NULL;
}

bool spoor_elf_is_code(const spoor_elf *e, uint32_t addr)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *s = &e->sections[i];
        if ((s->flags & SHF_EXECINSTR) && (s->flags & SHF_ALLOC) && addr >= s->addr &&
            addr - s->addr < s->size)
            return true;
    }
    return false;
}

bool spoor_elf_build_id(const spoor_elf *e, const uint8_t **id, size_t *len)
{
    if (!e->build_id)
        return false;
    *id = e->build_id;
    *len = e->build_id_len;
    return true;
}

bool spoor_elf_symbol(const spoor_elf *e, const char *name, uint32_t *addr, uint32_t *size)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *s = elf_strptr(e->elf, sh.sh_link, sym.st_name);
            if (s && !strcmp(s, name)) {
                uint32_t v = (uint32_t)sym.st_value;
                if (GELF_ST_TYPE(sym.st_info) == STT_FUNC)
                    v &= ~1u;
                if (addr)
                    *addr = v;
                if (size)
                    *size = (uint32_t)sym.st_size;
                return true;
            }
        }
    }
    return false;
}

const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *e, uint32_t addr)
{
    /* last symbol with start <= addr, then walk back over zero-size or shorter ones */
    size_t lo = 0, hi = e->nsymbols;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->symbols[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Symbols that cover addr start at or before it; a covering one further back than the
     * last few would have to enclose all of those, which only nested aliases do. */
    for (size_t i = lo, seen = 0; i-- > 0 && seen < 16; seen++) {
        const struct elf_symbol *s = &e->symbols[i];
        if (addr - s->start < s->size)
            return s;
    }
    return NULL;
}

Elf *spoor_elf_libelf(const spoor_elf *e)
{
    return e->elf;
}
Dwarf *spoor_elf_libdw(const spoor_elf *e)
{
    return e->dwarf;
}

size_t spoor_elf_ranges(const spoor_elf *e, spoor_elf_range *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *s = &e->sections[i];
        if (!(s->flags & SHF_ALLOC) || !s->data || !s->size)
            continue;
        if (n < max)
            out[n] = (spoor_elf_range){s->name,
                                       s->addr,
                                       s->size,
                                       s->data,
                                       (s->flags & SHF_WRITE) != 0,
                                       (s->flags & SHF_EXECINSTR) != 0};
        n++;
    }
    return n;
}

size_t spoor_elf_load_segments(const spoor_elf *e, spoor_elf_range *out, size_t max)
{
    size_t phnum = 0, file_size = 0, n = 0;
    const uint8_t *file = (const uint8_t *)elf_rawfile(e->elf, &file_size);
    if (!file || elf_getphdrnum(e->elf, &phnum) != 0)
        return 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz ||
            ph.p_offset > file_size || ph.p_filesz > file_size - ph.p_offset ||
            ph.p_vaddr + ph.p_filesz > 0x100000000ull)
            continue; /* nothing in the file, or inconsistent: the sections still serve */
        if (n < max)
            out[n] = (spoor_elf_range){"LOAD",
                                       (uint32_t)ph.p_vaddr,
                                       (uint32_t)ph.p_filesz,
                                       file + ph.p_offset,
                                       (ph.p_flags & PF_W) != 0,
                                       (ph.p_flags & PF_X) != 0};
        n++;
    }
    return n;
}

bool spoor_elf_hard_float(const spoor_elf *e)
{
    GElf_Ehdr eh;
    return gelf_getehdr(e->elf, &eh) && (eh.e_flags & EF_ARM_ABI_FLOAT_HARD);
}
