/* The OpenOCD telnet transport (spoor/openocd.h): a command line out, its output back up to
 * the next prompt ("> " at the start of a line), telnet negotiation stripped. Reads are
 * `mdw ADDR COUNT`, writes `mww`/`mmw`; OpenOCD's manual, "Telnet" and "Memory access
 * commands". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "remote/openocd_internal.h"
#include "remote/remote_text_internal.h"

/* Reads until the text (negotiation stripped) ends with a prompt. */
static bool read_to_prompt(spoor_openocd *o)
{
    int64_t deadline = spoor_openocd_now_ms() + o->timeout_ms;
    o->len = 0;
    o->buf[0] = '\0';
    for (;;) {
        if (o->len >= 2 && !strcmp(o->buf + o->len - 2, "> ") &&
            (o->len == 2 || o->buf[o->len - 3] == '\n'))
            return true;
        size_t before = o->len;
        if (!spoor_openocd_receive(o, deadline))
            return false;
        /* negotiation can straddle reads only at an IAC at the very end: rare, and then the
         * next read completes it; strip what is here */
        o->len = before + spoor_openocd_strip_telnet(o->buf + before, o->len - before);
        o->buf[o->len] = '\0';
    }
}

static bool telnet_command(spoor_openocd *o, const char *command, char *out, size_t cap)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%s\n", command);
    if (n < 0 || (size_t)n >= sizeof line) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd: command too long");
        return false;
    }
    if (!spoor_openocd_send(o, line, (size_t)n) || !read_to_prompt(o))
        return false;
    /* the output: after the echoed command line, before the prompt */
    const char *start = o->buf, *end = o->buf + o->len - 2;
    const char *echo = strstr(o->buf, command);
    if (echo) {
        const char *nl = strchr(echo, '\n');
        start = nl && nl < end ? nl + 1 : end;
    }
    spoor_openocd_output(start, (size_t)(end - start), out, cap);
    return true;
}

/* OpenOCD's answer to a command that failed, as one line (its newlines and raw bytes escaped). */
static void refused(const char *command, const char *out)
{
    char text[4 * 80 + 1];
    spoor_peer_excerpt(out, strlen(out), 80, false, text, sizeof text);
    spoor_set_error(SPOOR_ERR_UNAVAILABLE, "openocd: %s: %s", command, text);
}

static bool telnet_read_words(spoor_openocd *o, uint32_t addr, uint32_t *words, size_t count)
{
    char command[64];
    snprintf(command, sizeof command, "mdw 0x%08x %zu", addr, count);
    char *out = malloc(OPENOCD_REPLY_MAX);
    bool ok = out && telnet_command(o, command, out, OPENOCD_REPLY_MAX) &&
              spoor_openocd_parse_mdw(out, addr, words, count);
    if (out && !ok && spoor_last_status() != SPOOR_ERR_IO &&
        spoor_last_status() != SPOOR_ERR_PROTOCOL && spoor_last_status() != SPOOR_ERR_TOO_LARGE)
        refused(command, out);
    else if (!out)
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
    free(out);
    return ok;
}

static bool telnet_write(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask)
{
    char command[96], out[512];
    if (mask == 0xFFFFFFFFu)
        snprintf(command, sizeof command, "mww 0x%08x 0x%08x", addr, value);
    else /* mmw ADDR SETBITS CLEARBITS */
        snprintf(command, sizeof command, "mmw 0x%08x 0x%08x 0x%08x", addr, value & mask,
                 ~value & mask);
    if (!telnet_command(o, command, out, sizeof out))
        return false;
    if (out[0]) { /* OpenOCD says nothing when a write works */
        refused(command, out);
        return false;
    }
    return true;
}

static const openocd_transport telnet = {"openocd", telnet_command, telnet_read_words,
                                         telnet_write};

spoor_openocd *spoor_openocd_connect(const char *where, unsigned timeout_ms)
{
    spoor_openocd *o = spoor_openocd_open(where, timeout_ms, &telnet);
    if (o && !read_to_prompt(o)) {
        spoor_openocd_close(o);
        return NULL;
    }
    return o;
}
