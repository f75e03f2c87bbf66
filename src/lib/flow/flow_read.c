/* A failed read of target memory, said the same way by every reader of the flow layer
 * (flow_read_internal.h). */
#include <stdio.h>
#include <string.h>

#include "base/set_error.h"
#include "flow/flow_read_internal.h"

void spoor_flow_read_begin(void)
{
    spoor_set_error(SPOOR_OK, "%s", "");
}

const char *spoor_flow_error_after(const char *input)
{
    const char *why = spoor_last_error();
    size_t n = strlen(input);
    if (n && !strncmp(why, input, n) && !strncmp(why + n, ": ", 2))
        why += n + 2;
    return why;
}

bool spoor_flow_connection_failed(const char *input, const char *what, const char *before)
{
    spoor_status st = spoor_last_status();
    if (st != SPOOR_ERR_IO && st != SPOOR_ERR_PROTOCOL && st != SPOOR_ERR_TOO_LARGE)
        return false;
    char why[400];
    snprintf(why, sizeof why, "%s", spoor_flow_error_after(input));
    spoor_set_error(st, "%s: the connection failed while reading %s (%s): %s", input, what, before,
                    why);
    return true;
}
