/*
 * The system calls newlib needs, for examples linked with the full C library: the console
 * goes over semihosting, the heap runs from the end of .bss to the end of RAM (linker symbols
 * __heap_start/__heap_end), and everything about files fails cleanly.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "semihost.h"

#undef errno
extern int errno;

extern char __heap_start[];
extern char __heap_end[];

/* Semihosting handle for ":tt" opened for writing: the host console. */
static int console_handle = -1;

static int open_console(void)
{
    if (console_handle < 0) {
        static const char console_name[] = ":tt";
        const uint32_t block[3] = {(uint32_t)(uintptr_t)console_name, 4u /* "w" */,
                                   (uint32_t)(sizeof console_name - 1u)};
        console_handle = (int)semihost_call(SEMIHOST_SYS_OPEN, block);
    }
    return console_handle;
}

int _write(int fd, const char *buffer, int length)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    int handle = open_console();
    if (handle < 0) {
        errno = EIO;
        return -1;
    }
    const uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buffer, (uint32_t)length};
    uint32_t not_written = semihost_call(SEMIHOST_SYS_WRITE, block);
    return length - (int)not_written;
}

int _read(int fd, char *buffer, int length)
{
    (void)fd;
    (void)buffer;
    (void)length;
    return 0; /* end of file */
}

void *_sbrk(ptrdiff_t increment)
{
    static char *heap_top = __heap_start;
    if (increment > __heap_end - heap_top || increment < __heap_start - heap_top) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *previous = heap_top;
    heap_top += increment;
    return previous;
}

int _close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

int _fstat(int fd, struct stat *status)
{
    if (fd < 0 || fd > 2) {
        errno = EBADF;
        return -1;
    }
    status->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

int _lseek(int fd, int offset, int whence)
{
    (void)fd;
    (void)offset;
    (void)whence;
    errno = ESPIPE;
    return -1;
}

int _getpid(void)
{
    return 1;
}

int _kill(int pid, int signal)
{
    (void)pid;
    (void)signal;
    errno = EINVAL;
    return -1;
}

void _exit(int status)
{
    semihost_exit(status);
}
