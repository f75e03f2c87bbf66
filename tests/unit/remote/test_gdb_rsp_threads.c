/* The GDB server's threads (spoor_rsp_handle with spoor_rsp_target.threads): the packets of
 * the GDB manual's "General Query Packets" (qfThreadInfo/qsThreadInfo, qThreadExtraInfo) and
 * 'H'/'T', and 'g'/'p' answering with the selected thread's registers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/gdb_rsp.h"

static bool no_memory(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx, (void)addr, (void)buf, (void)len;
    return false;
}

static const char *ask(const spoor_rsp_target *t, const char *packet)
{
    static char reply[SPOOR_RSP_MAX_PACKET + 1];
    bool detach;
    spoor_rsp_handle(t, packet, reply, sizeof reply, &detach);
    return reply;
}

static void test_threads(void **state)
{
    (void)state;
    static spoor_rsp_thread threads[3];
    memset(threads, 0, sizeof threads);
    for (int i = 0; i < 3; i++) {
        threads[i].regs.r[15] = 0x100u + (uint32_t)i * 0x10u;
        threads[i].regs.r[4] = 0xA0u + (uint32_t)i;
    }
    strcpy(threads[1].extra, "sensor (ready)");
    size_t selected = 0;
    spoor_rsp_target t = {.read = no_memory, .signal = 5};
    t.threads = threads;
    t.nthreads = 3;
    t.selected = &selected;
    assert_string_equal(ask(&t, "?"), "T05thread:1;");
    assert_string_equal(ask(&t, "qfThreadInfo"), "m1,2,3");
    assert_string_equal(ask(&t, "qsThreadInfo"), "l");
    /* "sensor (ready)" in hex */
    assert_string_equal(ask(&t, "qThreadExtraInfo,2"), "73656e736f7220287265616479"
                                                       "29");
    assert_string_equal(ask(&t, "T3"), "OK");
    assert_string_equal(ask(&t, "T4"), "E01");
    assert_string_equal(ask(&t, "p4"), "a0000000");
    assert_string_equal(ask(&t, "Hg2"), "OK");
    assert_int_equal(selected, 1);
    assert_string_equal(ask(&t, "pf"), "10010000"); /* pc 0x110, little-endian */
    assert_string_equal(ask(&t, "p4"), "a1000000");
    assert_string_equal(ask(&t, "Hg3"), "OK");
    assert_string_equal(ask(&t, "pf"), "20010000");
    assert_string_equal(ask(&t, "Hg0"), "OK"); /* any thread: the first */
    assert_string_equal(ask(&t, "pf"), "00010000");
    assert_string_equal(ask(&t, "Hg9"), "E01");
    assert_int_equal(selected, 0);
    assert_string_equal(ask(&t, "Hc-1"), "OK");
}

/* Without threads the target is one thread, as before. */
static void test_one_thread(void **state)
{
    (void)state;
    spoor_rsp_target t = {.read = no_memory, .signal = 5};
    t.regs.r[15] = 0x200;
    assert_string_equal(ask(&t, "?"), "S05");
    assert_string_equal(ask(&t, "qfThreadInfo"), "m1");
    assert_string_equal(ask(&t, "Hg1"), "OK");
    assert_string_equal(ask(&t, "T1"), "OK");
    assert_string_equal(ask(&t, "T2"), "E01");
    assert_string_equal(ask(&t, "pf"), "00020000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
