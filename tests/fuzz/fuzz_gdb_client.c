/* libFuzzer harness: what a GDB server may send the client (src/lib/gdb_remote_*.c). The first
 * byte picks a parser: target description XML (the iterator and the register table), an 'm'
 * reply (hex with run-length encoding), a received payload's run-length expansion, a stop
 * reply, a qSupported reply, a register value by name, or the reply to a memory write ('M').
 * Nothing may crash, read out of bounds or return more than it was given room for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/gdb_remote_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 7) {
    case 0: {
        static spoor_gdb_reg regs[GDB_MAX_REGS];
        unsigned next = 0;
        long n = spoor_gdb_parse_tdesc(text, len, regs, 0, GDB_MAX_REGS, &next);
        if (n > GDB_MAX_REGS)
            abort();
        for (long i = 0; i < n; i++)
            if (regs[i].bitsize == 0 || regs[i].bitsize > GDB_MAX_REG_BITS || regs[i].name[15])
                abort();
        size_t pos = 0, steps = 0; /* every element moves on: the walk ends */
        gdb_tdesc_item it;
        for (;;) {
            gdb_tdesc_kind k = spoor_gdb_tdesc_next(text, len, &pos, &it);
            if (k == GDB_TDESC_END || k == GDB_TDESC_ERROR)
                break;
            if (pos > len || ++steps > len)
                abort();
        }
        break;
    }
    case 1: {
        uint8_t out[64];
        long n = spoor_gdb_decode_hex_reply(text, len, out, sizeof out);
        if (n > (long)sizeof out)
            abort();
        break;
    }
    case 2: {
        static char out[GDB_REPLY_MAX + 1];
        uint8_t *marks = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            marks[i] = text[i] == '*' && (i & 1);
        long n = spoor_gdb_expand_rle(text, len, marks, out, sizeof out);
        if (n >= (long)sizeof out || (n >= 0 && out[n] != 0))
            abort();
        free(marks);
        break;
    }
    case 3: {
        int sig;
        spoor_gdb_parse_stop_reply(text, len, &sig);
        break;
    }
    case 4: {
        gdb_supported s;
        spoor_gdb_parse_supported(text, len, &s);
        break;
    }
    case 5: {
        char name[16];
        size_t n = len < 15 ? len : 15;
        memcpy(name, text, n);
        name[n] = 0;
        spoor_regs r;
        gdb_regs_seen seen = {0};
        char missing[64];
        spoor_gdb_reg_store(&r, &seen, name, (const uint8_t *)text + n, len - n < 8 ? len - n : 8);
        spoor_gdb_regs_finish(&r, &seen, missing, sizeof missing);
        break;
    }
    case 6: {
        gdb_write_reply k = spoor_gdb_parse_write_reply(text, len);
        if (k == GDB_WRITE_OK && (len != 2 || memcmp(text, "OK", 2)))
            abort();
        if (k == GDB_WRITE_UNSUPPORTED && len)
            abort();
        break;
    }
    }
    return 0;
}
