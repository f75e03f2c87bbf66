/* The OpenOCD Tcl RPC transport (spoor/openocd.h): OpenOCD's manual, "Tcl RPC server": a
 * command goes out terminated by 0x1a, its result comes back terminated by 0x1a. OpenOCD
 * sends a failed command's error message as its result (src/server/tcl_server.c writes the
 * interpreter's result, then 0x1a, whatever the command returned), so each command is sent
 * inside catch and the reply starts with O (the result follows) or E (the error message
 * follows). Reads are read_memory, writes write_memory. */
#include <stdio.h>
#include <string.h>

#include "base/set_error.h"
#include "remote/openocd_internal.h"
#include "remote/remote_text_internal.h"

#define EOM '\x1a'

/* The command inside catch, then 0x1a; 0 when it cannot go in braces (0x1a in it, braces that
 * do not pair, a backslash at its end) or is too long. */
static size_t wrap(const char *command, char *buf, size_t cap)
{
    int depth = 0;
    for (const char *p = command; *p; p++) {
        if (*p == EOM || (*p == '\\' && !*++p))
            return 0;
        depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
        if (depth < 0)
            return 0;
    }
    if (depth)
        return 0;
    int n = snprintf(buf, cap,
                     "if {[catch {%s} spoor_r]} {set spoor_r \"E$spoor_r\"} else "
                     "{set spoor_r \"O$spoor_r\"}%c",
                     command, EOM);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* Receives one reply: everything up to the 0x1a, which is replaced by NUL. */
static bool receive_reply(spoor_openocd *o)
{
    int64_t deadline = spoor_openocd_now_ms() + o->timeout_ms;
    o->len = 0;
    o->buf[0] = '\0';
    for (;;) {
        char *end = memchr(o->buf, EOM, o->len);
        if (end) {
            if (end != o->buf + o->len - 1) { /* one command out, one reply back */
                spoor_set_error(SPOOR_ERR_PROTOCOL, "%s: %zu bytes after the reply", o->where,
                                (size_t)(o->buf + o->len - end - 1));
                spoor_openocd_break(o);
                return false;
            }
            *end = '\0';
            o->len = (size_t)(end - o->buf);
            return true;
        }
        if (o->len && (unsigned char)o->buf[0] == 0xFF) { /* IAC: negotiation */
            spoor_set_error(SPOOR_ERR_PROTOCOL,
                            "%s: a telnet server, not the Tcl RPC server (-W PORT for telnet)",
                            o->where);
            spoor_openocd_break(o);
            return false;
        }
        if (!spoor_openocd_receive(o, deadline))
            return false;
    }
}

/* A peer's text (up to max bytes) for a one-line error, in the static buffer one_line. */
static char one_line[4 * 160 + 1];
static const char *line_of(const char *text, size_t max)
{
    spoor_peer_excerpt(text, strlen(text), max, false, one_line, sizeof one_line);
    return one_line;
}

/* Runs command; *result points at its output in the connection's buffer (valid until the
 * next request). */
static bool run(spoor_openocd *o, const char *command, const char **result)
{
    char request[600];
    size_t n = wrap(command, request, sizeof request);
    if (!n) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: %.80s: cannot be sent in braces", o->where,
                        command);
        return false;
    }
    if (!spoor_openocd_send(o, request, n) || !receive_reply(o))
        return false;
    *result = o->buf + 1;
    if (o->buf[0] == 'E') {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "%s: %s: %s", o->where, command,
                        line_of(*result, 160));
        return false;
    }
    if (o->buf[0] != 'O') {
        spoor_set_error(SPOOR_ERR_PROTOCOL, "%s: not the reply to a command sent in catch: %s",
                        o->where, line_of(o->buf, 160));
        spoor_openocd_break(o);
        return false;
    }
    return true;
}

static bool tcl_command(spoor_openocd *o, const char *command, char *out, size_t cap)
{
    const char *result;
    if (!run(o, command, &result))
        return false;
    spoor_openocd_output(result, o->len - 1, out, cap);
    return true;
}

static bool tcl_read_words(spoor_openocd *o, uint32_t addr, uint32_t *words, size_t count)
{
    char command[64];
    snprintf(command, sizeof command, "read_memory 0x%08x 32 %zu", addr, count);
    const char *out;
    if (!run(o, command, &out))
        return false;
    if (!spoor_openocd_parse_read_memory(out, words, count)) {
        spoor_set_error(SPOOR_ERR_PROTOCOL, "%s: %s: not a list of %zu words: %s", o->where,
                        command, count, line_of(out, 60));
        return false;
    }
    return true;
}

static bool tcl_write(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask)
{
    char command[96];
    if (mask == 0xFFFFFFFFu)
        snprintf(command, sizeof command, "write_memory 0x%08x 32 {0x%08x}", addr, value);
    else /* mmw ADDR SETBITS CLEARBITS */
        snprintf(command, sizeof command, "mmw 0x%08x 0x%08x 0x%08x", addr, value & mask,
                 ~value & mask);
    return tcl_command(o, command, NULL, 0);
}

static const openocd_transport tcl = {"openocd tcl", tcl_command, tcl_read_words, tcl_write};

spoor_openocd *spoor_openocd_connect_tcl(const char *where, unsigned timeout_ms)
{
    spoor_openocd *o = spoor_openocd_open(where, timeout_ms, &tcl);
    if (!o)
        return NULL;
    char version[128];
    if (!tcl_command(o, "version", version, sizeof version)) {
        spoor_openocd_close(o);
        return NULL;
    }
    return o;
}
