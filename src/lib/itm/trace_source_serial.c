/* Trace source: a serial tty (a USB-UART fed by the SWO pin, or a probe's virtual port),
 * put in raw mode at the requested baud rate with termios. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/set_error.h"
#include "itm/trace_source_internal.h"

typedef struct serial_source {
    spoor_trace_source base;
    int fd;
    const char *device;
    uint8_t buffer[TRACE_SOURCE_CHUNK];
} serial_source;

static bool baud_constant(unsigned baud, speed_t *out)
{
    static const struct {
        unsigned baud;
        speed_t speed;
    } rates[] = {
        {9600, B9600},       {19200, B19200},     {38400, B38400},     {57600, B57600},
        {115200, B115200},   {230400, B230400},   {460800, B460800},   {500000, B500000},
        {576000, B576000},   {921600, B921600},   {1000000, B1000000}, {1152000, B1152000},
        {1500000, B1500000}, {2000000, B2000000}, {2500000, B2500000}, {3000000, B3000000},
        {3500000, B3500000}, {4000000, B4000000},
    };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (rates[i].baud == baud) {
            *out = rates[i].speed;
            return true;
        }
    return false;
}

/* The tty opened raw at baud, or -1 with the error set. */
static int open_tty(const char *device, unsigned baud)
{
    speed_t speed;
    if (!baud_constant(baud, &speed)) {
        spoor_set_error(SPOOR_ERR_UNSUPPORTED, "serial:%s:%u: unsupported baud rate %u", device,
                        baud, baud);
        return -1;
    }
    int fd = open(device, O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "serial:%s: cannot open: %s", device, strerror(errno));
        return -1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) != 0) {
        spoor_set_error(SPOOR_ERR_IO, "serial:%s: not a tty: %s", device, strerror(errno));
        close(fd);
        return -1;
    }
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0 ||
        tcsetattr(fd, TCSANOW, &tio) != 0) {
        spoor_set_error(SPOOR_ERR_IO, "serial:%s: cannot set %u baud: %s", device, baud,
                        strerror(errno));
        close(fd);
        return -1;
    }
    tcflush(fd, TCIFLUSH);
    return fd;
}

static ssize_t serial_receive(spoor_trace_source *s, const uint8_t **data, int timeout_ms)
{
    serial_source *t = (serial_source *)s;
    *data = t->buffer;
    ssize_t n = spoor_trace_fd_read(t->fd, t->buffer, sizeof t->buffer, timeout_ms);
    if (n == SPOOR_TRACE_ERROR && errno == EIO)
        return SPOOR_TRACE_EOF; /* the tty hung up (e.g. the probe was unplugged) */
    if (n == SPOOR_TRACE_ERROR)
        spoor_set_error(SPOOR_ERR_IO, "serial:%s: read error: %s", t->device, strerror(errno));
    return n;
}

static void serial_close(spoor_trace_source *s)
{
    serial_source *t = (serial_source *)s;
    close(t->fd);
    free(t);
}

static const trace_source_ops serial_ops = {serial_receive, serial_close};

spoor_trace_source *spoor_trace_source_serial(const char *device, unsigned baud)
{
    int fd = open_tty(device, baud);
    if (fd < 0)
        return NULL;
    const char *copy;
    serial_source *t = spoor_trace_source_new(sizeof *t, &serial_ops, fd, device, &copy);
    if (!t)
        return NULL;
    t->fd = fd;
    t->device = copy;
    return &t->base;
}
