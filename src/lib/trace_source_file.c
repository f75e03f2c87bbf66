/* Trace source: a capture file or standard input. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spoor/error.h"
#include "spoor/trace_source.h"

int spoor_trace_open_file(const char *path)
{
    if (!strcmp(path, "-"))
        return STDIN_FILENO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        spoor_set_error(SPOOR_ERR_IO, "%s: is a directory", path);
        return -1;
    }
    return fd;
}
