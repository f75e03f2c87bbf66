#include "spoor/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

void spoor_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

const char *spoor_last_error(void)
{
    return last_error;
}
