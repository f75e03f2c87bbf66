/* spoor itm -c P,FMT (itm_channel.h): the format's one conversion, checked and bounded when
 * the option is read, and the text of a software channel's writes. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "itm_cli.h"

#define CHANNEL_MAX_WIDTH 64 /* for the width and for the precision */

static char *resolve_escapes(const char *s)
{
    char *r = malloc(strlen(s) + 1), *w = r;
    if (!r)
        return NULL;
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            switch (*s) {
            case 'n': *w++ = '\n'; break;
            case 't': *w++ = '\t'; break;
            case 'r': *w++ = '\r'; break;
            case 'e': *w++ = '\033'; break;
            default: *w++ = *s; break;
            }
        } else {
            *w++ = *s;
        }
    }
    *w = '\0';
    return r;
}

/* Reads a width or precision (decimal digits, at most CHANNEL_MAX_WIDTH) at *p into *out,
 * moving *p past the digits; false when it is larger. */
static bool bounded_number(const char **p, unsigned *out)
{
    unsigned v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = v * 10 + (unsigned)(**p - '0');
        if (v > CHANNEL_MAX_WIDTH)
            return false;
    }
    *out = v;
    return true;
}

/* Compiles the escape-resolved FMT of -c ARG into *ch (which takes fmt); returns 0 or the
 * exit status of the one-line error. FMT is literal text and %% with at most one conversion
 * among c d i u x X: flags "-+ 0#" each at most once ('#' only for x and X), a width and a
 * precision of at most CHANNEL_MAX_WIDTH (none of these for %c). */
static int compile_channel(itm_channel *ch, char *fmt, const char *arg)
{
    itm_channel n = {.on = true, .before = fmt};
    char *w = fmt; /* the text is rewritten in place: %% becomes %, the conversion a NUL */
    for (const char *p = fmt; *p; p++) {
        if (*p != '%' || p[1] == '%') {
            *w++ = *p;
            p += *p == '%';
            continue;
        }
        if (n.conv)
            return cli_error("itm", "-c %s: FORMAT may hold one conversion, not two", arg);
        char flags[8] = "";
        size_t nflags = 0;
        for (p++; *p && strchr("-+ 0#", *p); p++) {
            if (memchr(flags, *p, nflags))
                return cli_error("itm", "-c %s: flag '%c' given twice", arg, *p);
            flags[nflags++] = *p;
        }
        unsigned width = 0, precision = 0;
        if (!bounded_number(&p, &width))
            return cli_error("itm", "-c %s: a width is at most %d", arg, CHANNEL_MAX_WIDTH);
        bool has_precision = *p == '.';
        if (has_precision) {
            p++;
            if (!bounded_number(&p, &precision))
                return cli_error("itm", "-c %s: a precision is at most %d", arg, CHANNEL_MAX_WIDTH);
        }
        if (!*p || !strchr("cdiuxX", *p))
            return cli_error(
                "itm", "-c %s: FORMAT may hold one %%c %%d %%i %%u %%x or %%X conversion", arg);
        if (*p == 'c' && (nflags || width || has_precision)) /* it writes bytes as they are */
            return cli_error("itm", "-c %s: %%c takes no flags, width or precision", arg);
        if (memchr(flags, '#', nflags) && *p != 'x' && *p != 'X')
            return cli_error("itm", "-c %s: flag '#' is for %%x and %%X only", arg);
        n.conv = *p == 'i' ? 'd' : *p;
        char *e = n.spec + snprintf(n.spec, sizeof n.spec, "%%%s", flags);
        if (width)
            e += snprintf(e, 4, "%u", width);
        if (has_precision)
            e += snprintf(e, 5, ".%u", precision);
        e[0] = n.conv;
        e[1] = '\0';
        *w++ = '\0';
        n.after = w;
    }
    *w = '\0';
    if (!n.conv)
        n.after = w;
    n.raw = n.conv == 'c' && !*n.before && !*n.after;
    free(ch->before);
    *ch = n;
    return 0;
}

void itm_channel_print(FILE *out, const itm_channel *ch, uint32_t value, unsigned size)
{
    fputs(ch->before, out);
    switch (ch->conv) {
    case 'c': /* every byte written to the port, lowest address first */
        for (unsigned i = 0; i < size; i++)
            putc_unlocked((int)(value >> (8 * i) & 0xFF), out);
        break;
    case 'd': {
        int32_t v = size == 1 ? (int8_t)value : size == 2 ? (int16_t)value : (int32_t)value;
        fprintf(out, ch->spec, (int)v);
        break;
    }
    case 0: break;
    default: fprintf(out, ch->spec, (unsigned)value); break;
    }
    fputs(ch->after, out);
}

int itm_channel_add(itm_channels *cs, const char *arg)
{
    const char *comma = strchr(arg, ',');
    uint32_t port;
    if (!comma || comma == arg)
        return cli_error("itm", "-c %s: expected PORT,FORMAT (e.g. 0,%%c)", arg);
    if (!spoor_parse_u32(arg, (size_t)(comma - arg), SPOOR_NUM_AUTO, &port) ||
        port >= ITM_MAX_PORTS)
        return cli_error("itm", "-c %s: port must be 0..255", arg);
    char *fmt = resolve_escapes(comma + 1);
    if (!fmt)
        return cli_out_of_memory("itm");
    int rc = compile_channel(&cs->ch[port], fmt, arg);
    if (rc) {
        free(fmt);
        return rc;
    }
    cs->any = true;
    return 0;
}

bool itm_channels_raw(const itm_channels *cs, uint32_t ports[ITM_MAX_PORTS / 32])
{
    bool raw = cs->any;
    memset(ports, 0, ITM_MAX_PORTS / 8);
    for (int port = 0; port < ITM_MAX_PORTS; port++) {
        if (cs->ch[port].on && !cs->ch[port].raw)
            raw = false;
        if (cs->ch[port].raw)
            ports[port / 32] |= 1u << (port % 32);
    }
    return raw;
}

void itm_channels_free(itm_channels *cs)
{
    for (int i = 0; i < ITM_MAX_PORTS; i++)
        free(cs->ch[i].before);
}
