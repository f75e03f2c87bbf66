/* The build-id index of firmware ELFs under a folder (spoor/elf_dir.h): a scan that reads only
 * ELF and section headers and the notes, and ELFs opened once, on first use, under a lock. */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/byteorder.h"
#include "base/file_walk.h"
#include "base/set_error.h"
#include "spoor/elf_dir.h"
#include "util/grow.h"

#define MAX_ID 64
#define MAX_NOTE (64u * 1024u)
#define ELF_MACHINE_ARM 40u
#define SECTION_NOTE 7u

struct entry {
    uint8_t id[MAX_ID];
    size_t len;
    int score; /* 1 for a symbol table, 2 for DWARF (.debug_info): the best file of an id wins */
    char *path;
    spoor_elf *elf;
    bool tried; /* opened, or failed to: error says why */
    char error[512];
};

struct spoor_elf_dir {
    char *root;
    struct entry *entries; /* sorted by (len, id) */
    size_t n, cap;
    size_t files;    /* regular files looked at */
    char **warnings; /* folders skipped, one build-id in files that differ */
    size_t nwarnings, warnings_cap;
    pthread_mutex_t lock;
};

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* A section header's fields. */
struct section {
    uint32_t name, type, flags, addr, offset, size;
};

static bool section_at(int fd, const uint8_t *eh, uint16_t i, struct section *s)
{
    uint8_t sh[40];
    uint32_t shoff = spoor_le32(eh + 32);
    uint16_t shentsize = spoor_le16(eh + 46);
    if (!read_at(fd, sh, sizeof sh, (uint64_t)shoff + (uint64_t)i * shentsize))
        return false;
    *s = (struct section){spoor_le32(sh),      spoor_le32(sh + 4),  spoor_le32(sh + 8),
                          spoor_le32(sh + 12), spoor_le32(sh + 16), spoor_le32(sh + 20)};
    return true;
}

/* The section names (.shstrtab) of an ELF whose header is eh: malloc'd, NUL-terminated. */
static char *section_names(int fd, const uint8_t *eh, uint32_t *size)
{
    struct section s;
    char *names;
    if (!section_at(fd, eh, spoor_le16(eh + 50), &s) || s.size > MAX_NOTE * 16u ||
        !(names = malloc(s.size + 1u)))
        return NULL;
    if (!read_at(fd, names, s.size, s.offset)) {
        free(names);
        return NULL;
    }
    names[s.size] = 0;
    *size = s.size;
    return names;
}

/* How much a file with an id gives: 1 for a symbol table with symbols, 2 for DWARF. */
static int file_score(int fd, const uint8_t *eh)
{
    uint32_t nsize = 0;
    char *names = section_names(fd, eh, &nsize);
    int score = 0;
    struct section s;
    for (uint16_t i = 1; i < spoor_le16(eh + 48) && section_at(fd, eh, i, &s); i++) {
        if (s.type == 2 && s.size > 16u) /* SHT_SYMTAB: more than the null symbol */
            score |= 1;
        if (s.type == 1 && s.size && names && s.name < nsize &&
            !strcmp(names + s.name, ".debug_info"))
            score |= 2;
    }
    free(names);
    return score;
}

static bool file_facts(const char *path, uint8_t *id, size_t cap, size_t *len, int *score)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool found = false;
    uint8_t eh[52], *note = NULL;
    /* e_ident: ELFCLASS32, ELFDATA2LSB; e_machine EM_ARM */
    if (!read_at(fd, eh, sizeof eh, 0) || memcmp(eh, "\177ELF", 4) || eh[4] != 1 || eh[5] != 1 ||
        spoor_le16(eh + 18) != ELF_MACHINE_ARM)
        goto out;
    uint32_t shoff = spoor_le32(eh + 32);
    uint16_t shentsize = spoor_le16(eh + 46), shnum = spoor_le16(eh + 48);
    if (shentsize < 40 || !shoff)
        goto out;
    for (uint16_t i = 1; i < shnum && !found; i++) {
        uint8_t sh[40];
        if (!read_at(fd, sh, sizeof sh, (uint64_t)shoff + (uint64_t)i * shentsize))
            break;
        uint32_t size = spoor_le32(sh + 20);
        if (spoor_le32(sh + 4) != SECTION_NOTE || !size || size > MAX_NOTE)
            continue;
        free(note);
        if (!(note = malloc(size)) || !read_at(fd, note, size, spoor_le32(sh + 16)))
            break;
        const uint8_t *p;
        size_t n;
        if (spoor_elf_note_build_id(note, size, &p, &n)) {
            memcpy(id, p, n < cap ? n : cap);
            *len = n;
            found = true;
        }
    }
    if (found && score)
        *score = file_score(fd, eh);
out:
    free(note);
    close(fd);
    return found;
}

bool spoor_elf_file_build_id(const char *path, uint8_t *id, size_t cap, size_t *len)
{
    return file_facts(path, id, cap, len, NULL);
}

/* Whether two ELFs with one build-id hold different code or data: a section both load
 * (SHF_ALLOC) and both hold the bytes of (SHT_PROGBITS; a .debug file has them as NOBITS),
 * found by name and address, with other bytes. False when they cannot be read. */
static bool code_differs(const char *a, const char *b)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
    uint8_t ea[52], eb[52];
    char *na = NULL, *nb = NULL;
    uint32_t sa = 0, sb = 0;
    bool differs = false;
    if (fa < 0 || fb < 0 || !read_at(fa, ea, 52, 0) || !read_at(fb, eb, 52, 0) ||
        !(na = section_names(fa, ea, &sa)) || !(nb = section_names(fb, eb, &sb)))
        goto out;
    struct section x, y;
    for (uint16_t i = 1; i < spoor_le16(ea + 48) && !differs && section_at(fa, ea, i, &x); i++) {
        if (x.type != 1 || !(x.flags & 2u) || x.name >= sa)
            continue;
        for (uint16_t k = 1; k < spoor_le16(eb + 48) && section_at(fb, eb, k, &y); k++) {
            if (y.type != 1 || !(y.flags & 2u) || y.name >= sb || y.addr != x.addr ||
                strcmp(na + x.name, nb + y.name))
                continue;
            differs = x.size != y.size;
            uint8_t bx[4096], by[4096];
            for (uint32_t at = 0; !differs && at < x.size; at += sizeof bx) {
                uint32_t n = x.size - at < sizeof bx ? x.size - at : (uint32_t)sizeof bx;
                differs = !read_at(fa, bx, n, (uint64_t)x.offset + at) ||
                          !read_at(fb, by, n, (uint64_t)y.offset + at) || memcmp(bx, by, n);
            }
            break;
        }
    }
out:
    free(na);
    free(nb);
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return differs;
}

static int warn(spoor_elf_dir *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(spoor_elf_dir *d, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *copy = strdup(line);
    if (!copy || spoor_grow((void **)&d->warnings, &d->warnings_cap, d->nwarnings + 1,
                            sizeof *d->warnings)) {
        free(copy);
        return -1;
    }
    d->warnings[d->nwarnings++] = copy;
    return 0;
}

static int cmp_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    if (alen != blen)
        return alen < blen ? -1 : 1;
    return memcmp(a, b, alen);
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = cmp_id(x->id, x->len, y->id, y->len);
    if (c)
        return c;
    if (x->score != y->score) /* the same id twice: symbols and DWARF first, then by path */
        return x->score > y->score ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int skipped(const char *path, const char *why, void *ctx)
{
    return warn(ctx, "%s: skipped: %s", path, why);
}

static int add_file(const char *path, void *ctx)
{
    spoor_elf_dir *d = ctx;
    struct entry e;
    memset(&e, 0, sizeof e);
    d->files++;
    if (!file_facts(path, e.id, sizeof e.id, &e.len, &e.score) || e.len > MAX_ID)
        return 0;
    if (spoor_grow((void **)&d->entries, &d->cap, d->n + 1, sizeof *d->entries))
        return -1;
    if (!(e.path = strdup(path)))
        return -1;
    d->entries[d->n++] = e;
    return 0;
}

spoor_elf_dir *spoor_elf_dir_scan(const char *path)
{
    spoor_elf_dir *d = calloc(1, sizeof *d);
    if (!d || !(d->root = strdup(path))) {
        free(d);
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    int rc = spoor_walk_files(path, add_file, skipped, d);
    if (rc == 0 && d->n == 0) {
        spoor_set_error(SPOOR_ERR_FORMAT, "%s: no ARM ELF with a build-id (%zu files looked at)",
                        path, d->files);
        rc = -1;
    }
    if (rc != 0) {
        spoor_elf_dir_free(d);
        return NULL;
    }
    qsort(d->entries, d->n, sizeof *d->entries, cmp_entry);
    size_t kept = 0;
    for (size_t i = 0; i < d->n; i++) {
        struct entry *e = &d->entries[i], *best = kept ? &d->entries[kept - 1] : NULL;
        if (best && !cmp_id(e->id, e->len, best->id, best->len)) {
            char hex[2 * MAX_ID + 1];
            if (code_differs(best->path, e->path) &&
                warn(d, "build-id %s is in two ELFs whose code differs: %s and %s (%s used)",
                     spoor_build_id_hex(e->id, e->len, hex), best->path, e->path, best->path))
                rc = -1;
            free(e->path);
        } else {
            d->entries[kept++] = *e;
        }
    }
    d->n = kept;
    if (rc != 0) {
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", path);
        spoor_elf_dir_free(d);
        return NULL;
    }
    return d;
}

void spoor_elf_dir_free(spoor_elf_dir *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->entries[i].path);
        spoor_elf_close(d->entries[i].elf);
    }
    for (size_t i = 0; i < d->nwarnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    pthread_mutex_destroy(&d->lock);
    free(d->entries);
    free(d->root);
    free(d);
}

size_t spoor_elf_dir_count(const spoor_elf_dir *d)
{
    return d->n;
}

size_t spoor_elf_dir_warnings(const spoor_elf_dir *d, const char *const **list)
{
    if (list)
        *list = (const char *const *)d->warnings;
    return d->nwarnings;
}

const spoor_elf *spoor_elf_dir_opened(const spoor_elf_dir *d, size_t i)
{
    return i < d->n ? d->entries[i].elf : NULL;
}

static struct entry *find(const spoor_elf_dir *d, const uint8_t *id, size_t len)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_id(d->entries[mid].id, d->entries[mid].len, id, len);
        if (c == 0)
            return &d->entries[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *spoor_elf_dir_find(const spoor_elf_dir *d, const uint8_t *id, size_t len)
{
    const struct entry *e = id ? find(d, id, len) : NULL;
    return e ? e->path : NULL;
}

spoor_elf *spoor_elf_dir_open(spoor_elf_dir *d, const uint8_t *id, size_t len)
{
    struct entry *e = id ? find(d, id, len) : NULL;
    if (!e) {
        char hex[2 * MAX_ID + 1];
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "no ELF with build-id %s in %s (%zu indexed)",
                        spoor_build_id_hex(id, id ? len : 0, hex), d->root, d->n);
        return NULL;
    }
    pthread_mutex_lock(&d->lock);
    if (!e->tried) {
        e->elf = spoor_elf_open(e->path);
        if (e->elf && !spoor_elf_has_symbols(e->elf)) {
            spoor_set_error(SPOOR_ERR_FORMAT, "%s: no symbols (no symbol table and no DWARF)",
                            e->path);
            spoor_elf_close(e->elf);
            e->elf = NULL;
        }
        if (!e->elf)
            snprintf(e->error, sizeof e->error, "%s", spoor_last_error());
        e->tried = true;
    }
    spoor_elf *elf = e->elf;
    if (!elf)
        spoor_set_error(SPOOR_ERR_FORMAT, "%s", e->error);
    pthread_mutex_unlock(&d->lock);
    return elf;
}
