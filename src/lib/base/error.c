#include "base/set_error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];
static _Thread_local spoor_status last_status;

static void set(spoor_status status, const char *fmt, va_list ap)
{
    last_status = status;
    vsnprintf(last_error, sizeof last_error, fmt, ap);
}

void spoor_set_error(spoor_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(status, fmt, ap);
    va_end(ap);
}

const char *spoor_last_error(void)
{
    return last_error;
}

spoor_status spoor_last_status(void)
{
    return last_status;
}

const char *spoor_status_name(spoor_status status)
{
    switch (status) {
    case SPOOR_OK: return "ok";
    case SPOOR_ERR_IO: return "i/o error";
    case SPOOR_ERR_FORMAT: return "malformed input";
    case SPOOR_ERR_TRUNCATED: return "truncated input";
    case SPOOR_ERR_UNSUPPORTED: return "unsupported input";
    case SPOOR_ERR_ARGUMENT: return "bad argument";
    case SPOOR_ERR_UNAVAILABLE: return "not available";
    case SPOOR_ERR_PROTOCOL: return "protocol error";
    case SPOOR_ERR_TOO_LARGE: return "too large";
    case SPOOR_ERR_NOMEM: return "out of memory";
    }
    return "?";
}
