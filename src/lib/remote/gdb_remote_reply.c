/* Decoding what a GDB server answers (GDB manual, "Overview", "Packets", "Stop Reply Packets",
 * "General Query Packets"): run-length encoding, hex data, error replies, the reply to a memory
 * write, qSupported features and stop replies. Sans I/O. */
#include <string.h>

#include "util/number.h"

#include "remote/gdb_remote_internal.h"

/* The repeat count a run-length character stands for: "X*N" is X then N - 29 more of it. */
static int run_length(char n)
{
    return (unsigned char)n >= 32 && (unsigned char)n <= 126 ? (unsigned char)n - 29 : -1;
}

long spoor_gdb_expand_rle(const char *payload, size_t len, const uint8_t *marks, char *out,
                          size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (payload[i] == '*' && (!marks || marks[i])) {
            int rep = i + 1 < len ? run_length(payload[i + 1]) : -1;
            if (!o || rep < 0 || (size_t)rep > cap - o)
                return -1;
            memset(out + o, out[o - 1], (size_t)rep);
            o += (size_t)rep;
            i++;
            continue;
        }
        if (o >= cap)
            return -1;
        out[o++] = payload[i];
    }
    if (o >= cap)
        return -1;
    out[o] = 0;
    return (long)o;
}

/* "Exx" or "E.text": the server's error reply. */
static bool is_error_reply(const char *r, size_t len)
{
    if (len == 3 && r[0] == 'E' && spoor_hex_digit((unsigned char)r[1]) >= 0 &&
        spoor_hex_digit((unsigned char)r[2]) >= 0)
        return true;
    return len >= 2 && r[0] == 'E' && r[1] == '.';
}

long spoor_gdb_decode_hex_reply(const char *reply, size_t len, uint8_t *out, size_t cap)
{
    if (is_error_reply(reply, len))
        return -1;
    size_t n = 0, nibbles = 0;
    int hi = 0;
    char prev = 0;
    for (size_t i = 0; i < len; i++) {
        char c = reply[i];
        int rep = 1;
        if (c == '*') { /* a hex reply holds no literal '*': it is run-length encoding */
            rep = i + 1 < len ? run_length(reply[i + 1]) : -1;
            if (!i || rep < 0)
                return -1;
            c = prev;
            i++;
        }
        int v = spoor_hex_digit((unsigned char)c);
        if (v < 0)
            return -1;
        for (int k = 0; k < rep; k++) {
            if (nibbles++ & 1) {
                if (n >= cap)
                    return -1;
                out[n++] = (uint8_t)(hi << 4 | v);
            } else {
                hi = v;
            }
        }
        prev = c;
    }
    return nibbles & 1 ? -1 : (long)n;
}

gdb_write_reply spoor_gdb_parse_write_reply(const char *reply, size_t len)
{
    if (!len)
        return GDB_WRITE_UNSUPPORTED;
    if (len == 2 && reply[0] == 'O' && reply[1] == 'K')
        return GDB_WRITE_OK;
    return is_error_reply(reply, len) ? GDB_WRITE_ERROR : GDB_WRITE_MALFORMED;
}

bool spoor_gdb_parse_supported(const char *reply, size_t len, gdb_supported *out)
{
    memset(out, 0, sizeof *out);
    if (is_error_reply(reply, len))
        return false;
    size_t pos = 0;
    while (pos < len) {
        const char *f = reply + pos;
        const char *semi = memchr(f, ';', len - pos);
        size_t flen = semi ? (size_t)(semi - f) : len - pos;
        pos += flen + 1;
        const char *eq = memchr(f, '=', flen);
        if (eq) {
            size_t nlen = (size_t)(eq - f);
            if (!nlen)
                return false;
            if (nlen == 10 && !memcmp(f, "PacketSize", 10)) {
                uint32_t v;
                if (!spoor_parse_u32(eq + 1, flen - nlen - 1, SPOOR_NUM_HEX_BARE, &v) || !v)
                    return false;
                out->packet_size = v;
            }
            continue;
        }
        if (flen < 2 || (f[flen - 1] != '+' && f[flen - 1] != '-' && f[flen - 1] != '?'))
            return false;
        for (size_t i = 0; i + 1 < flen; i++)
            if ((unsigned char)f[i] <= ' ' || (unsigned char)f[i] > '~')
                return false;
        bool plus = f[flen - 1] == '+';
        if (flen - 1 == 19 && !memcmp(f, "qXfer:features:read", 19))
            out->xfer_features = plus;
        else if (flen - 1 == 15 && !memcmp(f, "QStartNoAckMode", 15))
            out->no_ack = plus;
    }
    return true;
}

/* "O" and hex digits, two a character: console output a server may send while the target runs
 * (GDB manual, "Stop Reply Packets"). Not "OK". */
static bool is_console_output(const char *reply, size_t len)
{
    if (len < 3 || reply[0] != 'O' || (len - 1) % 2)
        return false;
    for (size_t i = 1; i < len; i++)
        if (spoor_hex_digit((unsigned char)reply[i]) < 0)
            return false;
    return true;
}

char spoor_gdb_parse_stop_reply(const char *reply, size_t len, int *signal)
{
    if (is_console_output(reply, len))
        return 'O'; /* *signal untouched */
    if (len < 2)
        return 0;
    char kind = reply[0];
    size_t digits = 0;
    int value = 0;
    while (1 + digits < len && digits < 7 && spoor_hex_digit((unsigned char)reply[1 + digits]) >= 0)
        value = value * 16 + spoor_hex_digit((unsigned char)reply[1 + digits++]);
    switch (kind) {
    case 'S':
        if (digits != 2 || len != 3)
            return 0;
        break;
    case 'T':
    case 'X':
        if (digits < 2)
            return 0;
        /* the signal is the first two digits; T's "n:r;" pairs follow */
        value = spoor_hex_digit((unsigned char)reply[1]) * 16 +
                spoor_hex_digit((unsigned char)reply[2]);
        break;
    case 'W':
        if (!digits || (1 + digits < len && reply[1 + digits] != ';'))
            return 0;
        break;
    default: return 0;
    }
    *signal = value;
    return kind;
}
