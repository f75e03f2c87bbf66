/* libFuzzer harness: the GDB remote protocol side of spoor gdbserver. Bytes from the network
 * go through the session (acks, resends) as cmd_gdbserver moves them; every packet is answered
 * by the request handler over a small memory, with a branch trace when the input's first byte
 * is odd (the btrace packets then answer). Nothing may crash, read out of bounds or overflow a
 * buffer; every reply is framed within the session's buffer. */
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
    static spoor_rsp_session session;
    static spoor_rsp_btrace bt;
    spoor_rsp_target t = {.signal = 11, .read = read_memory, .fp = size & 1};
    for (int i = 0; i < 16; i++)
        t.regs.r[i] = 0x01010101u * (uint32_t)i;
    {
        int i = 16;
        t.regs.xpsr = 0x01010101u * (uint32_t)i;
    }
    /* a trace of 300 blocks (more than one packet's worth of XML) and a gap */
    static spoor_rsp_block blocks[300];
    for (uint32_t i = 0; i < 300; i++)
        blocks[i] = (spoor_rsp_block){0x1000 + 16 * i, 0x1008 + 16 * i};
    blocks[100] = spoor_rsp_gap(0x2000);
    if (size && (data[0] & 1)) {
        if (!spoor_rsp_btrace_set(&bt, blocks, 300))
            abort();
        t.btrace = &bt;
    }
    spoor_rsp_session_init(&session, &t);
    for (size_t i = 0; i < size;) {
        spoor_rsp_io io;
        i += spoor_rsp_session_feed(&session, data + i, size - i, &io);
        if (io.out_len > sizeof session.frame)
            abort();
        if (io.event != SPOOR_RSP_PACKET)
            continue;
        spoor_rsp_session_answer(&session, &io);
        if (session.reply[sizeof session.reply - 1] != 0 || io.out_len > sizeof session.frame)
            abort();
        spoor_rsp_session_replied(&session, size - i);
    }
    spoor_rsp_btrace_free(&bt);
    return 0;
}
