/* Loading a firmware ELF: checks, sections, function symbols, build-id, memory image. The
 * symbolizer (symbols_internal.h) builds on this and is never called from here. */
#include <dwarf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/byteorder.h"
#include "base/input_file.h"
#include "base/merge_runs.h"
#include "base/partition_point.h"
#include "base/set_error.h"
#include "elf/elf_internal.h"
#include "spoor/elf_dir.h"

static int corrupt(spoor_elf *e, const char *what)
{
    spoor_set_error(SPOOR_ERR_FORMAT, "%s: truncated or corrupt ELF: %s", e->path, what);
    return -1;
}

/* Refuses the file for a section header that does not fit with the rest (readelf complains,
 * binutils does not load the file): one line naming section i. */
static int bad_section(spoor_elf *e, size_t i, const char *name, const char *fmt, ...)
    SPOOR_PRINTF(4, 5);
static int bad_section(spoor_elf *e, size_t i, const char *name, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    spoor_set_error(SPOOR_ERR_FORMAT, "%s: truncated or corrupt ELF: section [%zu] %s: %s", e->path,
                    i, name, what);
    return -1;
}

/* The section headers, checked as binutils checks them before it loads a file: names inside the
 * section name table, contents inside the file, sh_link (and sh_info where it names a section)
 * naming a section. The contents are taken from the file as they are, whatever the type says (a
 * linker script can give initialised data the type SHT_REL, which libelf then will not hand
 * out). */
static int load_sections(spoor_elf *e, const uint8_t *file, size_t file_size)
{
    size_t shnum, shstrndx;
    if (elf_getshdrnum(e->elf, &shnum) || elf_getshdrstrndx(e->elf, &shstrndx))
        return corrupt(e, elf_errmsg(-1));
    if (shnum > 1) {
        GElf_Shdr sh;
        char what[96];
        if (shstrndx == SHN_UNDEF || shstrndx >= shnum) {
            snprintf(what, sizeof what, "section name table index %zu is not a section (%zu)",
                     shstrndx, shnum);
            return corrupt(e, what);
        }
        if (!gelf_getshdr(elf_getscn(e->elf, shstrndx), &sh))
            return corrupt(e, elf_errmsg(-1));
        if (sh.sh_type != SHT_STRTAB) {
            snprintf(what, sizeof what, "section name table [%zu] is not a string table (type %u)",
                     shstrndx, (unsigned)sh.sh_type);
            return corrupt(e, what);
        }
    }
    e->sections = calloc(shnum ? shnum : 1, sizeof *e->sections);
    if (!e->sections)
        return corrupt(e, "out of memory");
    for (size_t i = 1; i < shnum; i++) {
        GElf_Shdr sh;
        if (!gelf_getshdr(elf_getscn(e->elf, i), &sh))
            return corrupt(e, elf_errmsg(-1));
        struct elf_section *s = &e->sections[e->nsections++];
        s->name = elf_strptr(e->elf, shstrndx, sh.sh_name);
        if (!s->name)
            return bad_section(e, i, "?", "name at 0x%x is not in the section name table",
                               (unsigned)sh.sh_name);
        if (sh.sh_type != SHT_NOBITS &&
            (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset))
            return bad_section(e, i, s->name,
                               "contents at 0x%llx (0x%llx bytes) past the end of the file "
                               "(0x%zx bytes)",
                               (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size,
                               file_size);
        if (sh.sh_link >= shnum)
            return bad_section(e, i, s->name, "sh_link %u is not a section (there are %zu)",
                               (unsigned)sh.sh_link, shnum);
        if ((sh.sh_type == SHT_REL || sh.sh_type == SHT_RELA || (sh.sh_flags & SHF_INFO_LINK)) &&
            sh.sh_info >= shnum)
            return bad_section(e, i, s->name, "sh_info %u is not a section (there are %zu)",
                               (unsigned)sh.sh_info, shnum);
        s->addr = (uint32_t)sh.sh_addr;
        s->size = (uint32_t)sh.sh_size;
        s->type = sh.sh_type;
        s->flags = sh.sh_flags;
        s->link = sh.sh_link;
        s->info = sh.sh_info;
        s->entsize = (uint32_t)sh.sh_entsize;
        if (sh.sh_type != SHT_NOBITS && sh.sh_size)
            s->data = file + sh.sh_offset;
        if (sh.sh_type == SHT_NOTE && s->data && !e->build_id)
            spoor_elf_note_build_id(s->data, s->size, &e->build_id, &e->build_id_len);
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

static bool symbol_before(const void *a, const void *b)
{
    return cmp_symbol(a, b) < 0;
}

#define ELF32_SYM_SIZE 16

struct raw_symbol { /* an Elf32_Sym */
    uint32_t name, value, size;
    uint8_t info, other;
    uint16_t shndx;
};

static struct raw_symbol raw_symbol(const spoor_elf *e, size_t i)
{
    const uint8_t *p = e->symtab + i * ELF32_SYM_SIZE;
    return (struct raw_symbol){spoor_le32(p), spoor_le32(p + 4), spoor_le32(p + 8), p[12],
                               p[13],         spoor_le16(p + 14)};
}

/* The names spoor_elf_debug_section finds without going through every section (an ELF built
 * with -ffunction-sections can have hundreds): each one's first section is looked up at open. */
static const char *const known_section_names[ELF_KNOWN_SECTIONS] = {
    [SEC_DEBUG_INFO] = ".debug_info",         [SEC_DEBUG_ABBREV] = ".debug_abbrev",
    [SEC_DEBUG_LINE] = ".debug_line",         [SEC_DEBUG_STR] = ".debug_str",
    [SEC_DEBUG_LINE_STR] = ".debug_line_str", [SEC_DEBUG_ARANGES] = ".debug_aranges",
    [SEC_DEBUG_RANGES] = ".debug_ranges",     [SEC_DEBUG_RNGLISTS] = ".debug_rnglists",
    [SEC_DEBUG_FRAME] = ".debug_frame",       [SEC_ARM_ATTRIBUTES] = ".ARM.attributes"};

static void find_known_sections(spoor_elf *e)
{
    for (size_t i = e->nsections; i-- > 0;) { /* the first of a name wins */
        const char *name = e->sections[i].name;
        if (name[0] != '.' || (name[1] != 'd' && name[1] != 'A')) /* .debug_*, .ARM.* only */
            continue;
        for (size_t k = 0; k < ELF_KNOWN_SECTIONS; k++)
            if (!strcmp(name, known_section_names[k]))
                e->known_sections[k] = &e->sections[i];
    }
}

/* A symbol's name in the string table, NULL when it lies outside. */
static const char *symbol_name(const spoor_elf *e, uint32_t off)
{
    const struct elf_section *s = e->strtab;
    if (!s->data || off >= s->size || !memchr(s->data + off, 0, s->size - off))
        return NULL;
    return (const char *)s->data + off;
}

/* The first symbol table: its header checked as binutils does (entry size, a string table as
 * its link, sh_info within it); a size that is no multiple of an entry loses the partial entry
 * with a warning. */
static int find_symtab(spoor_elf *e)
{
    for (size_t i = 0; i < e->nsections; i++) {
        const struct elf_section *s = &e->sections[i];
        if (s->type != SHT_SYMTAB)
            continue;
        size_t index = i + 1; /* e->sections starts at section 1 */
        if (s->entsize != ELF32_SYM_SIZE)
            return bad_section(e, index, s->name, "symbol size %u, not %d", s->entsize,
                               ELF32_SYM_SIZE);
        if (!s->link || e->sections[s->link - 1].type != SHT_STRTAB)
            return bad_section(e, index, s->name, "sh_link %u is not a string table", s->link);
        if (s->info > s->size / ELF32_SYM_SIZE)
            return bad_section(e, index, s->name, "sh_info %u past its %u symbols", s->info,
                               s->size / ELF32_SYM_SIZE);
        if (s->size % ELF32_SYM_SIZE) {
            spoor_elf_warn(e,
                           "section [%zu] %s: size 0x%x is no multiple of a symbol: the last "
                           "%u bytes ignored",
                           index, s->name, s->size, s->size % ELF32_SYM_SIZE);
            e->damaged = true;
        }
        e->symtab = s->data;
        e->nsymtab = s->data ? s->size / ELF32_SYM_SIZE : 0;
        e->strtab = &e->sections[s->link - 1];
        return 0;
    }
    return 0;
}

/* Whether a local symbol's name is one of the ARM ELF's special symbols ($a, $t, $d and the like,
 * alone or followed by a dot), which binutils never takes for a function. */
static bool arm_special_name(const char *name)
{
    return name[0] == '$' && name[1] >= 'a' && name[1] <= 'z' && (!name[2] || name[2] == '.');
}

/* The end of the section a symbol of size 0 names code in (where binutils' and gdb's answer for
 * it stops), or 0 when it names none: a STT_FUNC symbol in an allocated section, or a label
 * (STT_NOTYPE, not a hidden local one) in an executable section. */
static uint32_t zero_size_section_end(const spoor_elf *e, const struct raw_symbol *sym,
                                      unsigned type, uint32_t start)
{
    if (sym->size || sym->shndx == SHN_UNDEF || sym->shndx >= SHN_LORESERVE ||
        sym->shndx > e->nsections)
        return 0;
    if (type == STT_NOTYPE && ELF32_ST_BIND(sym->info) == STB_LOCAL &&
        ELF32_ST_VISIBILITY(sym->other) == STV_HIDDEN)
        return 0;
    const struct elf_section *s = &e->sections[sym->shndx - 1]; /* e->sections starts at 1 */
    uint64_t flags = type == STT_FUNC ? SHF_ALLOC : SHF_ALLOC | SHF_EXECINSTR;
    if ((s->flags & flags) != flags || start < s->addr || start - s->addr >= s->size)
        return 0;
    return s->addr + s->size;
}

/* e->zero, made on the first lookup that needs it (most ELFs' answers never do): the STT_FUNC
 * symbols of size 0 and the labels in code, with their file as load_symbols gives it, the
 * ARM ELF's special symbols left out, sorted by start. Without memory: none. */
static void make_zero(spoor_elf *e)
{
    e->zero_made = true;
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *file = NULL;
        bool file_after_symbol = false, symbol_seen = false;
        n = 0;
        for (size_t i = 1; i < e->nsymtab; i++) {
            struct raw_symbol sym = raw_symbol(e, i);
            unsigned type = ELF32_ST_TYPE(sym.info);
            if (type == STT_FILE) {
                file = symbol_name(e, sym.name);
                file_after_symbol |= symbol_seen;
                continue;
            }
            symbol_seen = true;
            if (type != STT_FUNC && type != STT_NOTYPE)
                continue;
            uint32_t start = type == STT_FUNC ? sym.value & ~1u : sym.value; /* Thumb bit */
            uint32_t end = zero_size_section_end(e, &sym, type, start);
            const char *name = end ? symbol_name(e, sym.name) : NULL;
            bool local = ELF32_ST_BIND(sym.info) == STB_LOCAL;
            if (!name || !*name || (local && arm_special_name(name)))
                continue;
            if (pass)
                e->zero[n] = (struct elf_symbol){
                    start,       0,
                    name,        file && *file && (local || !file_after_symbol) ? file : NULL,
                    (uint32_t)i, end};
            n++;
        }
        if (!pass && (!n || !(e->zero = malloc(n * sizeof *e->zero))))
            return;
    }
    e->nzero = n;
    /* a symbol table holds runs in address order (an object file's symbols, mostly) */
    if (spoor_merge_runs(e->zero, n, sizeof *e->zero, symbol_before, NULL))
        qsort(e->zero, n, sizeof *e->zero, cmp_symbol); /* no memory for it */
}

static int load_symbols(spoor_elf *e)
{
    if (find_symtab(e))
        return -1;
    e->symbols = calloc(e->nsymtab ? e->nsymtab : 1, sizeof *e->symbols);
    if (!e->symbols)
        return corrupt(e, "out of memory");
    size_t unnamed = 0;
    /* The file of each symbol as binutils' _bfd_elf_find_function gives it (addr2line and
     * llvm-symbolizer print it for an address no line row covers): the last STT_FILE symbol
     * before it, for a local symbol always, for a global one only while no STT_FILE symbol has
     * come after another symbol (ld puts every global after all files' locals, so a global gets
     * none). Entry 0, the null symbol, is not one binutils reads. */
    const char *file = NULL;
    bool file_after_symbol = false, symbol_seen = false;
    for (size_t i = 1; i < e->nsymtab; i++) {
        struct raw_symbol sym = raw_symbol(e, i);
        if (ELF32_ST_TYPE(sym.info) == STT_FILE) {
            file = symbol_name(e, sym.name);
            file_after_symbol |= symbol_seen;
            continue;
        }
        symbol_seen = true;
        if (ELF32_ST_TYPE(sym.info) != STT_FUNC || sym.shndx == SHN_UNDEF)
            continue;
        const char *name = symbol_name(e, sym.name);
        if (!name) {
            unnamed++;
            continue;
        }
        if (!*name)
            continue;
        struct elf_symbol *s = &e->symbols[e->nsymbols++];
        s->start = sym.value & ~1u; /* Thumb bit */
        s->size = sym.size;
        s->name = name;
        s->file = file && *file && (ELF32_ST_BIND(sym.info) == STB_LOCAL || !file_after_symbol)
                      ? file
                      : NULL;
        s->index = (uint32_t)i;
    }
    if (unnamed) {
        spoor_elf_warn(e, "section %s: %zu function symbols with names past %s: ignored", ".symtab",
                       unnamed, e->strtab->name);
        e->damaged = true;
    }
    /* a symbol table holds runs in address order (an object file's symbols, mostly) */
    if (e->nsymbols &&
        spoor_merge_runs(e->symbols, e->nsymbols, sizeof *e->symbols, symbol_before, NULL))
        qsort(e->symbols, e->nsymbols, sizeof *e->symbols, cmp_symbol); /* no memory for it */
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

/* Whether no unit can be a split one, found without libdw (whose first look at a unit DIE reads
 * the unit's abbreviations into its tables, most of the cost of opening a large ELF): every unit
 * header is a compile or partial unit's (DWARF 2 to 5, 32-bit), and its DIE's abbreviation, the
 * first of its code in the unit's table, is of a compile or partial unit and names none of
 * DW_AT_dwo_name, DW_AT_GNU_dwo_name and DW_AT_GNU_dwo_id (without which libdw sees no skeleton
 * and split_unit finds no .dwo name). False when that is not certain: split_unit decides. */
static bool surely_not_split(const spoor_elf *e)
{
    const struct elf_section *info = spoor_elf_known_section(e, SEC_DEBUG_INFO),
                             *abbrev = spoor_elf_known_section(e, SEC_DEBUG_ABBREV);
    if (!info || !abbrev)
        return false;
    const uint8_t *const aend = abbrev->data + abbrev->size;
    for (uint64_t off = 0; off < info->size;) {
        struct unit_header h;
        uint64_t code, acode, value;
        if (info->size - off < 12 || !spoor_unit_header(info, off, &h) || !h.whole ||
            h.version < 2 || h.version > 5 || (h.type != DW_UT_compile && h.type != DW_UT_partial))
            return false;
        const uint8_t *die = h.die, *uend = h.end;
        if (die >= uend || h.table >= abbrev->size || !spoor_uleb128(&die, uend, &code) || !code)
            return false;
        const uint8_t *a = abbrev->data + h.table;
        for (bool found = false; !found;) {
            uint64_t tag, name, form;
            if (!spoor_uleb128(&a, aend, &acode) || !acode || !spoor_uleb128(&a, aend, &tag) ||
                a++ >= aend) /* its children flag */
                return false;
            found = acode == code;
            if (found && tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit)
                return false;
            while (!found) { /* another code's pairs, skipped (one-byte ones without a call) */
                if (aend - a >= 2 && !((a[0] | a[1]) & 0x80)) {
                    bool last = !(a[0] | a[1]), value_follows = a[1] == DW_FORM_implicit_const;
                    a += 2;
                    if (last)
                        break;
                    if (value_follows && !spoor_uleb128(&a, aend, &value))
                        return false;
                } else if (!spoor_uleb128(&a, aend, &name) || !spoor_uleb128(&a, aend, &form) ||
                           (form == DW_FORM_implicit_const && !spoor_uleb128(&a, aend, &value))) {
                    return false;
                } else if (!name && !form) {
                    break;
                }
            }
            if (!found)
                continue;
            do {
                if (aend - a >= 2 && (a[0] | a[1]) < 0x80 && a[1] != DW_FORM_implicit_const) {
                    name = a[0]; /* both of one byte, no value: the common case */
                    form = a[1];
                    a += 2;
                } else if (!spoor_uleb128(&a, aend, &name) || !spoor_uleb128(&a, aend, &form) ||
                           (form == DW_FORM_implicit_const && !spoor_uleb128(&a, aend, &value))) {
                    return false;
                }
                if (name == DW_AT_dwo_name || name == DW_AT_GNU_dwo_name ||
                    name == DW_AT_GNU_dwo_id)
                    return false;
            } while (name || form);
        }
        off = (uint64_t)(h.end - info->data);
    }
    return true;
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
    struct stat st;
    if ((e->fd = spoor_input_open(path, SPOOR_INPUT_REGULAR, &st)) < 0)
        goto fail;
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
    size_t raw_size;
    const uint8_t *raw = (const uint8_t *)elf_rawfile(e->elf, &raw_size);
    if (!raw || raw_size < size) {
        corrupt(e, elf_errmsg(-1));
        goto fail;
    }
    if (load_sections(e, raw, (size_t)size) || load_symbols(e))
        goto fail;
    find_known_sections(e);
    e->dwarf = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
    if (!e->dwarf && spoor_elf_known_section(e, SEC_DEBUG_INFO)) {
        spoor_elf_warn(e, "DWARF unreadable (%s): names from the symbol table only, no lines",
                       dwarf_errmsg(-1));
        e->damaged = true;
    }
    const char *dwo = e->dwarf && !surely_not_split(e) ? split_unit(e->dwarf) : NULL;
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
    free(e->zero);
    free(e->by_name);
    spoor_elf_warnings_free(e);
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
    const struct elf_section *sec = NULL;
    size_t k = 0; /* the elf layer asks by index (spoor_elf_known_section), the others by name */
    while (k < ELF_KNOWN_SECTIONS && strcmp(known_section_names[k], name))
        k++;
    if (k < ELF_KNOWN_SECTIONS)
        return spoor_elf_known_section(e, (enum elf_known_section)k);
    for (size_t i = 0; i < e->nsections && !sec; i++)
        if (!strcmp(e->sections[i].name, name))
            sec = &e->sections[i];
    return sec && sec->data && !(sec->flags & SHF_COMPRESSED) ? sec : NULL;
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

static int cmp_by_name(const void *a, const void *b)
{
    const struct elf_named_symbol *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The defined, named symbols by name (the first in the table first among equal names). */
static void make_by_name(spoor_elf *e)
{
    e->by_name_made = true;
    e->by_name = e->nsymtab ? malloc(e->nsymtab * sizeof *e->by_name) : NULL;
    if (!e->by_name)
        return;
    for (size_t i = 0; i < e->nsymtab; i++) {
        struct raw_symbol sym = raw_symbol(e, i);
        const char *name = sym.shndx != SHN_UNDEF ? symbol_name(e, sym.name) : NULL;
        if (name)
            e->by_name[e->nby_name++] = (struct elf_named_symbol){name, (uint32_t)i};
    }
    qsort(e->by_name, e->nby_name, sizeof *e->by_name, cmp_by_name);
}

struct name_key {
    const struct elf_named_symbol *by_name;
    const char *name;
};

static bool name_before(const void *ctx, size_t i)
{
    const struct name_key *k = ctx;
    return strcmp(k->by_name[i].name, k->name) < 0;
}

bool spoor_elf_symbol(const spoor_elf *e, const char *name, uint32_t *addr, uint32_t *size)
{
    if (!e->by_name_made)
        make_by_name((spoor_elf *)e); /* the handle's own cache: not shared between threads */
    struct name_key key = {e->by_name, name};
    size_t i = spoor_partition_point(0, e->nby_name, name_before, &key);
    if (i == e->nby_name || strcmp(e->by_name[i].name, name) != 0)
        return false;
    struct raw_symbol sym = raw_symbol(e, e->by_name[i].index);
    uint32_t v = sym.value;
    if (ELF32_ST_TYPE(sym.info) == STT_FUNC)
        v &= ~1u;
    if (addr)
        *addr = v;
    if (size)
        *size = sym.size;
    return true;
}

struct symbol_key {
    const spoor_elf *e;
    uint32_t addr;
};

static bool symbol_starts_at_or_below(const void *ctx, size_t i)
{
    const struct symbol_key *k = ctx;
    return k->e->symbols[i].start <= k->addr;
}

const struct elf_symbol *spoor_elf_symbol_at(const spoor_elf *e, uint32_t addr)
{
    /* last symbol with start <= addr, then walk back over zero-size or shorter ones */
    const struct symbol_key key = {e, addr};
    size_t lo = spoor_partition_point(0, e->nsymbols, symbol_starts_at_or_below, &key);
    /* Symbols that cover addr start at or before it; a covering one further back than the
     * last few would have to enclose all of those, which only nested aliases do. */
    for (size_t i = lo, seen = 0; i-- > 0 && seen < 16; seen++) {
        const struct elf_symbol *s = &e->symbols[i];
        if (addr - s->start < s->size)
            return s;
    }
    return NULL;
}

static bool zero_starts_at_or_below(const void *ctx, size_t i)
{
    const struct symbol_key *k = ctx;
    return k->e->zero[i].start <= k->addr;
}

const struct elf_symbol *spoor_elf_symbol_naming(const spoor_elf *ce, uint32_t addr, uint32_t *size)
{
    const struct elf_symbol *s = spoor_elf_symbol_at(ce, addr);
    if (s) {
        if (size)
            *size = s->size;
        return s;
    }
    spoor_elf *e = (spoor_elf *)ce; /* the handle's own cache, as by_name */
    if (!e->zero_made)
        make_zero(e);
    /* The closest symbol of size 0 at or below addr, the first in the table among those at one
     * address (they sort later entries first), in its section; not when a function symbol
     * starts after it (addr is past that one's end: binutils would name it, gdb nothing). */
    const struct symbol_key key = {e, addr};
    size_t k = spoor_partition_point(0, e->nzero, zero_starts_at_or_below, &key);
    if (!k || addr >= e->zero[k - 1].section_end)
        return NULL;
    s = &e->zero[k - 1];
    size_t lo = spoor_partition_point(0, e->nsymbols, symbol_starts_at_or_below, &key);
    if (lo && e->symbols[lo - 1].start > s->start)
        return NULL;
    if (size) { /* up to the next symbol of either kind, within the section */
        uint32_t end = s->section_end;
        if (k < e->nzero && e->zero[k].start < end)
            end = e->zero[k].start;
        if (lo < e->nsymbols && e->symbols[lo].start < end)
            end = e->symbols[lo].start;
        *size = end - s->start;
    }
    return s;
}

size_t spoor_elf_symbol_number(const spoor_elf *e, const struct elf_symbol *s)
{
    if (e->zero && s >= e->zero && s < e->zero + e->nzero)
        return e->nsymbols + (size_t)(s - e->zero);
    return (size_t)(s - e->symbols);
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

bool spoor_elf_first_cfi_use(const spoor_elf *elf)
{
    bool first = !elf->cfi_checked;
    ((spoor_elf *)elf)->cfi_checked = true; /* a cache of the caller's ELF, not its contents */
    return first;
}
