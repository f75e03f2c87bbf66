/* libFuzzer harness: the GDB remote protocol side of spoor gdbserver. Bytes from the network
 * go through the packet parser; every packet is answered by the request handler over a small
 * memory, and the reply is framed. Nothing may crash, read out of bounds or overflow a buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/gdb_rsp.h"

static uint8_t memory[256];

static bool read_memory(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < 0x1000 || addr - 0x1000 > sizeof memory || len > sizeof memory - (addr - 0x1000))
        return false;
    memcpy(buf, memory + (addr - 0x1000), len);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static spoor_rsp_parser parser;
    static char reply[SPOOR_RSP_MAX_PACKET + 1], frame[2 * SPOOR_RSP_MAX_PACKET + 8];
    spoor_rsp_target t = {.signal = 11, .read = read_memory, .fp = size & 1};
    for (int i = 0; i < 16; i++)
        t.regs.r[i] = 0x01010101u * (uint32_t)i;
    {
        int i = 16;
        t.regs.xpsr = 0x01010101u * (uint32_t)i;
    }
    spoor_rsp_init(&parser);
    for (size_t i = 0; i < size; i++) {
        if (spoor_rsp_feed(&parser, data[i]) != SPOOR_RSP_PACKET)
            continue;
        bool detach;
        size_t n = spoor_rsp_handle(&t, parser.packet, reply, sizeof reply, &detach);
        if (n >= sizeof reply || reply[n] != 0)
            abort();
        spoor_rsp_frame(reply, n, frame, sizeof frame);
    }
    return 0;
}
