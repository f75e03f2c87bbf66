/* spoor crash's stack usage lines and objects (crash_stacks.h). */
#include <stdint.h>

#include "crash_stacks.h"
#include "spoor/stack_usage.h"

void crash_stacks_line_text(outbuf *o, const char *indent, const char *what,
                            const spoor_stack_usage *u, const char *no_sp)
{
    ob_printf(o, "%s%s: ", indent, what);
    if (!u->found) {
        ob_printf(o, "unknown (%s)\n", u->why);
        return;
    }
    if (u->has_high)
        ob_printf(o, "0x%08x-0x%08x, %u bytes", u->low, u->high, u->size);
    else
        ob_printf(o, "from 0x%08x, size unknown", u->low);
    ob_printf(o, " (%s): ", u->from);
    if (u->has_sp && u->has_high)
        ob_printf(o, "%u used (SP 0x%08x)", u->used, u->sp);
    else if (u->has_sp)
        ob_printf(o, "SP 0x%08x", u->sp);
    else
        ob_printf(o, "use unknown (%s)", no_sp ? no_sp : "no SP");
    if (u->filled && u->has_high)
        ob_printf(o, ", peak %u, %u never written", u->peak, u->free_min);
    else if (u->filled)
        ob_printf(o, ", %u never written", u->free_min);
    else if (u->unreadable)
        ob_printf(o, ", peak unknown (memory at 0x%08x not in the input)", u->unreadable_at);
    else
        ob_str(o, ", peak unknown (no fill pattern)");
    if (u->overflowed)
        ob_str(o, "  OVERFLOWED");
    else if (u->overflow_unknown)
        ob_str(o, "  overflow unknown");
    else if (u->nearly_full)
        ob_str(o, "  NEARLY FULL (under 10 % free)");
    ob_char(o, '\n');
}

void crash_stacks_main_text(outbuf *o, spoor_crash *c)
{
    const char *no_sp;
    const spoor_stack_usage *u = spoor_crash_main_stack(c, &no_sp);
    ob_char(o, '\n');
    crash_stacks_line_text(o, "", "main stack", u, no_sp);
}
