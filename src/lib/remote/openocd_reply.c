/* What OpenOCD sends, sans I/O: telnet negotiation removed (RFC 854: IAC, then a command
 * byte, then an option byte for WILL/WONT/DO/DONT; IAC IAC is a 0xFF byte), the output of mdw
 * (OpenOCD manual, "mdw [phys] addr [count]": lines "ADDR: WORD WORD ...", words in hex) and
 * the result of read_memory over the Tcl RPC server (manual, "read_memory address width
 * count": a Tcl list of the elements, each 0x and hex digits). */
#include <string.h>

#include "spoor/openocd.h"
#include "util/number.h"

#define IAC 0xFFu

size_t spoor_openocd_strip_telnet(char *text, size_t len)
{
    size_t w = 0;
    for (size_t r = 0; r < len; r++) {
        unsigned char c = (unsigned char)text[r];
        if (c == IAC && r + 1 < len) {
            unsigned char cmd = (unsigned char)text[r + 1];
            if (cmd == IAC) { /* an escaped 0xFF */
                text[w++] = (char)IAC;
                r++;
            } else if (cmd >= 251 && cmd <= 254) { /* WILL WONT DO DONT + option */
                r += 2;
            } else { /* a two-byte command */
                r++;
            }
            continue;
        }
        if (c == '\r' || c == '\0')
            continue;
        text[w++] = (char)c;
    }
    if (w < len)
        text[w] = '\0';
    return w;
}

static bool hex_word(const char **p, uint32_t *v)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = 0;
    while (spoor_hex_digit((unsigned char)s[n]) >= 0)
        n++;
    if (n > 8 || !spoor_parse_u32(s, n, SPOOR_NUM_HEX_BARE, v))
        return false;
    *p = s + n;
    return true;
}

bool spoor_openocd_parse_mdw(const char *text, uint32_t addr, uint32_t *words, size_t count)
{
    size_t got = 0;
    for (const char *line = text; line && *line && got < count;) {
        const char *nl = strchr(line, '\n');
        const char *colon = strchr(line, ':');
        if (colon && (!nl || colon < nl) && !strncmp(line, "0x", 2)) {
            const char *p = line + 2;
            uint32_t at;
            if (!hex_word(&p, &at) || p != colon || at != addr + 4u * (uint32_t)got)
                return false;
            p = colon + 1;
            uint32_t v;
            while (got < count && (!nl || p < nl) && hex_word(&p, &v))
                words[got++] = v;
        }
        line = nl ? nl + 1 : NULL;
    }
    return got == count;
}

bool spoor_openocd_parse_read_memory(const char *text, uint32_t *words, size_t count)
{
    const char *p = text;
    for (size_t got = 0; got < count; got++) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
            return false;
        p += 2;
        if (spoor_hex_digit((unsigned char)*p) < 0 || !hex_word(&p, &words[got]) ||
            (*p && *p != ' ' && *p != '\t' && *p != '\n'))
            return false;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    return *p == '\0';
}
