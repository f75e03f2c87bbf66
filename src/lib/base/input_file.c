/* Opening input files, one way for every reader (input_file.h). */
#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/set_error.h"

/* "a FIFO", "a directory", "a character device", ... for a file's st_mode. */
static const char *type_name(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a file";
}

/* A FIFO opened again, blocking: the open waits for a writer (a FIFO opened O_NONBLOCK with no
 * writer yet reads as at its end). The first descriptor stays open until the second is: a
 * writer that came in while the FIFO had only it as reader would otherwise find no reader in
 * between and get EPIPE (its write cut short). -1 when it cannot be, or is no longer the same
 * FIFO. */
static int reopen_fifo(int fd, const char *path, const struct stat *st)
{
    int again;
    do
        again = open(path, O_RDONLY | O_CLOEXEC);
    while (again < 0 && errno == EINTR);
    close(fd);
    struct stat now;
    if (again < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(again, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        spoor_set_error(SPOOR_ERR_IO, "%s: replaced while opened", path);
        close(again);
        return -1;
    }
    return again;
}

int spoor_input_open(const char *path, spoor_input_kind kind, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISREG(st->st_mode))
        return fd;
    if (kind == SPOOR_INPUT_REGULAR) {
        spoor_set_error(SPOOR_ERR_IO, "%s: not a regular file (%s)", path, type_name(st->st_mode));
        close(fd);
        return -1;
    }
    if (S_ISDIR(st->st_mode)) {
        spoor_set_error(SPOOR_ERR_IO, "%s: is a directory", path);
        close(fd);
        return -1;
    }
    if (S_ISFIFO(st->st_mode))
        return reopen_fifo(fd, path, st);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
