/* Error reporting for libspoor, one convention for every module: a failing call returns
 * NULL/-1/false (or a spoor_status) and leaves a status code, so that callers can branch on
 * the kind of failure, and a one-line message (no trailing newline) that names the problem.
 * Both are per thread: spoor_last_status() and spoor_last_error(). */
#ifndef SPOOR_ERROR_H
#define SPOOR_ERROR_H

#if defined(__GNUC__)
#define SPOOR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SPOOR_PRINTF(a, b)
#endif

typedef enum spoor_status {
    SPOOR_OK = 0,
    SPOOR_ERR_IO,          /* a file, socket or device could not be opened, read or written */
    SPOOR_ERR_FORMAT,      /* the input is malformed: bad magic, bad CRC, inconsistent headers */
    SPOOR_ERR_TRUNCATED,   /* the input ends before its own headers say it does */
    SPOOR_ERR_UNSUPPORTED, /* well-formed, but not something spoor handles (version, machine) */
    SPOOR_ERR_ARGUMENT,    /* a bad argument from the caller (ADDR:FILE, a source spec) */
    SPOOR_ERR_UNAVAILABLE, /* target memory or registers that the input does not hold */
    SPOOR_ERR_PROTOCOL,    /* a peer (GDB server, trace server) broke its protocol */
    SPOOR_ERR_TOO_LARGE,   /* an input beyond a size limit */
    SPOOR_ERR_NOMEM,       /* out of memory */
} spoor_status;

/* The calling thread's last message ("" if none) and status (SPOOR_OK if none). */
const char *spoor_last_error(void);
spoor_status spoor_last_status(void);

/* "ok", "i/o error", "malformed input", ... */
const char *spoor_status_name(spoor_status status);

#endif
