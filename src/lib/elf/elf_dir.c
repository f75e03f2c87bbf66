/* The build-id index of firmware ELFs under a folder (spoor/elf_dir.h): a scan that reads only
 * ELF and section headers and the notes, and ELFs opened once, on first use, under a lock. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/byteorder.h"
#include "base/file_walk.h"
#include "base/grow.h"
#include "spoor/elf_dir.h"
#include "spoor/error.h"

#define MAX_ID 64
#define MAX_NOTE (64u * 1024u)
#define ELF_MACHINE_ARM 40u
#define SECTION_NOTE 7u

struct entry {
    uint8_t id[MAX_ID];
    size_t len;
    char *path;
    spoor_elf *elf;
    bool tried; /* opened, or failed to: error says why */
    char error[512];
};

struct spoor_elf_dir {
    char *root;
    struct entry *entries; /* sorted by (len, id) */
    size_t n, cap;
    size_t files; /* regular files looked at */
    pthread_mutex_t lock;
};

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

bool spoor_elf_file_build_id(const char *path, uint8_t *id, size_t cap, size_t *len)
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
out:
    free(note);
    close(fd);
    return found;
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
    return c ? c : strcmp(x->path, y->path); /* the same id twice: the first path wins */
}

static int add_file(const char *path, void *ctx)
{
    spoor_elf_dir *d = ctx;
    struct entry e;
    memset(&e, 0, sizeof e);
    d->files++;
    if (!spoor_elf_file_build_id(path, e.id, sizeof e.id, &e.len) || e.len > MAX_ID)
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
    int rc = spoor_walk_files(path, add_file, d);
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
        struct entry *e = &d->entries[i];
        if (kept && !cmp_id(e->id, e->len, d->entries[kept - 1].id, d->entries[kept - 1].len))
            free(e->path);
        else
            d->entries[kept++] = *e;
    }
    d->n = kept;
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
    pthread_mutex_destroy(&d->lock);
    free(d->entries);
    free(d->root);
    free(d);
}

size_t spoor_elf_dir_count(const spoor_elf_dir *d)
{
    return d->n;
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
