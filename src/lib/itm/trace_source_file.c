/* Trace sources: a capture file, or standard input.
 *
 * A regular file is mapped one window of WINDOW bytes at a time, each window replacing the
 * previous one at the same address, so that a capture of any size costs the same memory (a
 * 4.5 GiB capture mapped whole had a 4.7 GB resident set) while the decoder still reads the
 * page cache in place: read() into a buffer costs ~18% more CPU on `spoor itm --stats` (one
 * more copy of every byte; measured on 100 MB streams, see docs/itm.md). The window address is
 * 2 MiB-aligned so that the kernel can map large page-cache folios whole, as it did for the
 * whole-file mapping. Each window is sized from the file's size at that moment, so a file that
 * grows is read to its new end, as read() would. File offsets are 64-bit.
 *
 * Anything else (standard input, a FIFO, a character device, or a file that cannot be mapped)
 * is read as the bytes come. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/input_file.h"
#include "base/set_error.h"
#include "itm/trace_source_internal.h"

_Static_assert(sizeof(off_t) >= sizeof(uint64_t), "64-bit file offsets are needed");

enum {
    WINDOW = 4 << 20,      /* bytes of a regular file mapped at once */
    WINDOW_ALIGN = 2 << 20 /* the window's address: a PMD, for large folios */
};

typedef struct file_source {
    spoor_trace_source base;
    int fd;
    bool live;        /* standard input: may go quiet, so honour the timeout */
    bool mapped;      /* a regular file read through the window */
    const char *name; /* for messages */
    uint64_t at;      /* mapped: the file offset of the next window */
    void *reserved;   /* mapped: the address range reserved for the window */
    uint8_t *window;  /* mapped: its WINDOW_ALIGN-aligned start in reserved */
    uint8_t *buffer;  /* not mapped: TRACE_SOURCE_CHUNK bytes, allocated on first use */
} file_source;

/* Maps the next window of a regular file; 0 at its end, -1 when mapping fails (then the
 * caller reads instead). */
static ssize_t next_window(file_source *f, const uint8_t **data)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return -1;
    uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    if (f->at >= size)
        return 0;
    if (!f->reserved) {
        void *r = mmap(NULL, WINDOW + WINDOW_ALIGN, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED)
            return -1;
        f->reserved = r;
        f->window = (uint8_t *)(((uintptr_t)r + WINDOW_ALIGN - 1) & ~(uintptr_t)(WINDOW_ALIGN - 1));
    }
    size_t len = size - f->at < WINDOW ? (size_t)(size - f->at) : WINDOW;
    void *m = mmap(f->window, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, f->fd, (off_t)f->at);
    if (m == MAP_FAILED)
        return -1;
    madvise(m, len, MADV_SEQUENTIAL);
    f->at += len;
    *data = m;
    return (ssize_t)len;
}

static ssize_t file_receive(spoor_trace_source *s, const uint8_t **data, int timeout_ms)
{
    file_source *f = (file_source *)s;
    if (f->mapped) {
        ssize_t n = next_window(f, data);
        if (n >= 0)
            return n;
        /* not mappable after all: read from where the windows stopped */
        f->mapped = false;
        if (lseek(f->fd, (off_t)f->at, SEEK_SET) < 0) {
            spoor_set_error(SPOOR_ERR_IO, "%s: cannot seek: %s", f->name, strerror(errno));
            return SPOOR_TRACE_ERROR;
        }
    }
    if (!f->buffer && !(f->buffer = malloc(TRACE_SOURCE_CHUNK))) {
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", f->name);
        return SPOOR_TRACE_ERROR;
    }
    ssize_t n =
        spoor_trace_fd_read(f->fd, f->buffer, TRACE_SOURCE_CHUNK, f->live ? timeout_ms : -1);
    if (n == SPOOR_TRACE_ERROR)
        spoor_set_error(SPOOR_ERR_IO, "%s: read error: %s", f->name, strerror(errno));
    *data = f->buffer;
    return n;
}

static void file_close(spoor_trace_source *s)
{
    file_source *f = (file_source *)s;
    if (f->reserved)
        munmap(f->reserved, WINDOW + WINDOW_ALIGN);
    if (f->fd > STDERR_FILENO)
        close(f->fd);
    free(f->buffer);
    free(f);
}

static const trace_source_ops file_ops = {file_receive, file_close};

static spoor_trace_source *new_file_source(int fd, bool live, bool mapped, const char *name)
{
    const char *copy;
    file_source *f = spoor_trace_source_new(sizeof *f, &file_ops, fd, name, &copy);
    if (!f)
        return NULL;
    f->fd = fd;
    f->live = live;
    f->mapped = mapped;
    f->name = copy;
    return &f->base;
}

spoor_trace_source *spoor_trace_source_file(const char *path)
{
    struct stat st;
    int fd = spoor_input_open(path, SPOOR_INPUT_STREAM, &st);
    if (fd < 0)
        return NULL;
    /* a regular file with no size (e.g. in /proc) is read: its size says nothing */
    return new_file_source(fd, false, S_ISREG(st.st_mode) && st.st_size > 0, path);
}

spoor_trace_source *spoor_trace_source_stdin(void)
{
    return new_file_source(STDIN_FILENO, true, false, "standard input");
}
