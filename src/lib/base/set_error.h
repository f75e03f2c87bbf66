/* The library's side of the error convention (spoor/error.h): a failing libspoor function sets
 * the calling thread's status and message here before it returns. Internal: a program reads
 * them with spoor_last_error() and spoor_last_status(). */
#ifndef SPOOR_BASE_SET_ERROR_H
#define SPOOR_BASE_SET_ERROR_H

#include "spoor/error.h"

/* Sets the calling thread's last status and message. */
void spoor_set_error(spoor_status status, const char *fmt, ...) SPOOR_PRINTF(2, 3);

#endif
