/* The MTB's flow as GDB branch trace: the blocks spoor_mtb_btrace_build makes of packets over
 * synthetic Thumb code, and the btrace packets spoor_rsp_handle answers with them. Expected
 * values from the MTB TRMs' packet rules (docs/mtb.md) and the GDB manual: "Branch Trace
 * Format" (block begin/end, newest first), "qXfer:btrace:read" (annex all/new/delta),
 * "Branch Trace Configuration Format". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/gdb_rsp.h"
#include "spoor/mtb_decode.h"

/* 0x1000-0x1fff: 16-bit NOPs (0xbf00), but a 32-bit BL (0xf000 0xf800) at 0x1104. */
static bool read_code(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < 0x1000 || addr + len > 0x2000)
        return false;
    uint8_t *out = buf;
    for (size_t i = 0; i < len; i++) {
        uint32_t a = addr + (uint32_t)i;
        uint16_t half = a >= 0x1104 && a < 0x1108 ? (a < 0x1106 ? 0xf000 : 0xf800) : 0xbf00;
        out[i] = (uint8_t)(half >> (8 * (a & 1u)));
    }
    return true;
}

static spoor_mtb_packet branch(uint32_t src, uint32_t dst)
{
    return (spoor_mtb_packet){.src = src, .dst = dst, .kind = SPOOR_MTB_BRANCH};
}

static spoor_mtb_packet entry(uint32_t src, uint32_t dst)
{
    return (spoor_mtb_packet){.src = src, .dst = dst, .a = true, .kind = SPOOR_MTB_EXCEPTION_ENTRY};
}

#define BLOCK(b, e) ((spoor_rsp_block){(b), (e)})

static void expect_blocks(const spoor_mtb_btrace *bt, const spoor_rsp_block *want, size_t n)
{
    assert_int_equal(bt->count, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(bt->blocks[i].begin, want[i].begin);
        assert_int_equal(bt->blocks[i].end, want[i].end);
    }
}

/* A fault: the window ends at the exception entry whose return address is the stop pc; the
 * handler's branch after it is not the stopped code's history. */
static void test_fault_window(void **state)
{
    (void)state;
    spoor_mtb_packet p[] = {branch(0x1f00, 0x1000), branch(0x1008, 0x1100), entry(0x1108, 0x1800),
                            branch(0x1804, 0x1900)};
    spoor_mtb_btrace bt;
    assert_true(spoor_mtb_btrace_build(p, 4, false, 0x1109, read_code, NULL, &bt));
    /* 0x1000..0x1008 (5 NOPs, the branch included); 0x1100, 0x1102, the BL at 0x1104, then the
     * stop pc 0x1108, the current instruction */
    spoor_rsp_block want[] = {BLOCK(0x1000, 0x1008), BLOCK(0x1100, 0x1108)};
    expect_blocks(&bt, want, 2);
    assert_int_equal(bt.insns, 5 + 3);
    assert_int_equal(bt.gaps, 0);
    assert_int_equal(bt.packets, 3);
    assert_true(bt.at_entry);
    spoor_mtb_btrace_free(&bt);
    /* wrapped: the oldest packet's run was overwritten: one gap first */
    assert_true(spoor_mtb_btrace_build(p, 4, true, 0x1108, read_code, NULL, &bt));
    spoor_rsp_block wrapped[] = {spoor_rsp_gap(0x1000), BLOCK(0x1000, 0x1008),
                                 BLOCK(0x1100, 0x1108)};
    expect_blocks(&bt, wrapped, 3);
    assert_true(bt.blocks[0].end < bt.blocks[0].begin);
    assert_int_equal(bt.gaps, 1);
    spoor_mtb_btrace_free(&bt);
}

/* No entry at the stop pc (a halted target): the last run goes on to the stop pc, or is a gap
 * when no straight run reaches it. */
static void test_stop_after_the_newest_packet(void **state)
{
    (void)state;
    spoor_mtb_packet p[] = {branch(0x1f00, 0x1000), branch(0x1004, 0x1200)};
    spoor_mtb_btrace bt;
    assert_true(spoor_mtb_btrace_build(p, 2, false, 0x1206, read_code, NULL, &bt));
    spoor_rsp_block want[] = {BLOCK(0x1000, 0x1004), BLOCK(0x1200, 0x1206)};
    expect_blocks(&bt, want, 2);
    assert_int_equal(bt.insns, 3 + 3);
    assert_false(bt.at_entry);
    spoor_mtb_btrace_free(&bt);
    /* the stop pc before the newest destination: unknown, never invented */
    assert_true(spoor_mtb_btrace_build(p, 2, false, 0x1100, read_code, NULL, &bt));
    spoor_rsp_block gap[] = {BLOCK(0x1000, 0x1004), spoor_rsp_gap(0x1200), BLOCK(0x1100, 0x1100)};
    expect_blocks(&bt, gap, 3);
    assert_int_equal(bt.gaps, 1);
    spoor_mtb_btrace_free(&bt);
    /* an empty MTB: the stop pc alone */
    assert_true(spoor_mtb_btrace_build(p, 0, false, 0x1100, read_code, NULL, &bt));
    spoor_rsp_block alone[] = {BLOCK(0x1100, 0x1100)};
    expect_blocks(&bt, alone, 1);
    assert_int_equal(bt.insns, 0);
    spoor_mtb_btrace_free(&bt);
    /* code not readable between packets: a gap there */
    spoor_mtb_packet far[] = {branch(0x1f00, 0x3000), branch(0x3004, 0x1000)};
    assert_true(spoor_mtb_btrace_build(far, 2, false, 0x1002, read_code, NULL, &bt));
    spoor_rsp_block unreadable[] = {spoor_rsp_gap(0x3000), BLOCK(0x1000, 0x1002)};
    expect_blocks(&bt, unreadable, 2);
    spoor_mtb_btrace_free(&bt);
}

static bool read_nothing(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx, (void)addr, (void)buf, (void)len;
    return false;
}

static const char *ask(spoor_rsp_target *t, const char *packet)
{
    static char reply[SPOOR_RSP_MAX_PACKET + 1];
    bool detach;
    spoor_rsp_handle(t, packet, reply, sizeof reply, &detach);
    return reply;
}

static void test_btrace_packets(void **state)
{
    (void)state;
    spoor_rsp_block blocks[] = {BLOCK(0x1000, 0x1008), spoor_rsp_gap(0x1200),
                                BLOCK(0x1100, 0x1108)};
    spoor_rsp_btrace bt;
    assert_true(spoor_rsp_btrace_set(&bt, blocks, 3));
    spoor_rsp_target t = {.signal = 11, .read = read_nothing};
    assert_string_equal(ask(&t, "qSupported:multiprocess+"),
                        "PacketSize=1000;qXfer:features:read+"); /* no trace: as before */
    assert_string_equal(ask(&t, "qXfer:btrace:read:all:0,fff"), "");
    t.btrace = &bt;
    assert_string_equal(ask(&t, "qSupported:multiprocess+"),
                        "PacketSize=1000;qXfer:features:read+;Qbtrace:bts+;Qbtrace:off+;"
                        "qXfer:btrace:read+;qXfer:btrace-conf:read+");
    const char *conf = ask(&t, "qXfer:btrace-conf:read::0,fff");
    assert_int_equal(conf[0], 'l');
    assert_non_null(strstr(conf, "<btrace-conf version=\"1.0\">\n<bts/>"));
    /* newest first */
    const char *all = ask(&t, "qXfer:btrace:read:all:0,fff");
    assert_int_equal(all[0], 'l');
    const char *newest = strstr(all, "<block begin=\"0x00001100\" end=\"0x00001108\"/>");
    const char *gap = strstr(all, "<block begin=\"0x00001200\" end=\"0x000011ff\"/>");
    const char *oldest = strstr(all, "<block begin=\"0x00001000\" end=\"0x00001008\"/>");
    assert_true(newest && gap && oldest && newest < gap && gap < oldest);
    assert_non_null(strstr(all, "<btrace version=\"1.0\">"));
    /* read once: :new has nothing new; :delta is refused (GDB then reads :new) */
    assert_non_null(strstr(ask(&t, "qXfer:btrace:read:new:0,fff"), "<btrace version=\"1.0\">\n"
                                                                   "</btrace>"));
    assert_string_equal(ask(&t, "qXfer:btrace:read:delta:0,fff"), "E01");
    /* recording enabled again: the trace is new again; in pieces, 'm' then 'l' */
    assert_string_equal(ask(&t, "Qbtrace:bts"), "OK");
    char first[4200]; /* as large as a reply (ask) */
    snprintf(first, sizeof first, "%s", ask(&t, "qXfer:btrace:read:new:0,20"));
    assert_int_equal(first[0], 'm');
    assert_int_equal(strlen(first), 0x21);
    assert_memory_equal(first + 1, all + 1, 0x20);
    /* another thread's trace: none */
    spoor_rsp_thread threads[2] = {{.extra = "a"}, {.extra = "b"}};
    size_t selected = 1;
    t.threads = threads, t.nthreads = 2, t.selected = &selected;
    assert_null(strstr(ask(&t, "qXfer:btrace-conf:read::0,fff"), "<bts/>"));
    assert_string_equal(ask(&t, "qXfer:btrace:read:all:0,fff"), "E01");
    spoor_rsp_btrace_free(&bt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_window),
        cmocka_unit_test(test_stop_after_the_newest_packet),
        cmocka_unit_test(test_btrace_packets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
