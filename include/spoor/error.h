/* Error reporting for libspoor: failing calls return NULL/-1/false and leave a one-line
 * message (no trailing newline) that names the problem, readable with spoor_last_error(). */
#ifndef SPOOR_ERROR_H
#define SPOOR_ERROR_H

#if defined(__GNUC__)
#define SPOOR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SPOOR_PRINTF(a, b)
#endif

/* Sets the calling thread's last error message. */
void spoor_set_error(const char *fmt, ...) SPOOR_PRINTF(1, 2);

/* The calling thread's last error message ("" if none). */
const char *spoor_last_error(void);

#endif
