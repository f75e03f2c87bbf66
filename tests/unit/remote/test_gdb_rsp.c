/* The GDB remote protocol codec and request handler. Expected bytes follow the GDB manual's
 * "Overview" of the remote protocol: $payload#checksum, checksum = sum of the payload bytes
 * modulo 256 as two hex digits, and '}' escapes $ # } * by XOR 0x20. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/gdb_rsp.h"

static spoor_rsp_event feed_all(spoor_rsp_parser *p, const char *s, size_t n)
{
    spoor_rsp_event last = SPOOR_RSP_NONE;
    for (size_t i = 0; i < n; i++) {
        spoor_rsp_event e = spoor_rsp_feed(p, (uint8_t)s[i]);
        if (e != SPOOR_RSP_NONE)
            last = e;
    }
    return last;
}

static void test_parse_packets(void **state)
{
    (void)state;
    spoor_rsp_parser p;
    spoor_rsp_init(&p);
    /* "g": 0x67 -> checksum 67 */
    assert_int_equal(feed_all(&p, "$g#67", 5), SPOOR_RSP_PACKET);
    assert_string_equal(p.packet, "g");
    /* "m0,4": 6d+30+2c+34 = 0xfd */
    assert_int_equal(feed_all(&p, "+$m0,4#fd", 9), SPOOR_RSP_PACKET);
    assert_string_equal(p.packet, "m0,4");
    assert_int_equal(feed_all(&p, "$m0,4#fe", 8), SPOOR_RSP_BAD_CHECKSUM);
    assert_int_equal(feed_all(&p, "$m0,4#zz", 8), SPOOR_RSP_BAD_CHECKSUM);
    assert_int_equal(spoor_rsp_feed(&p, '+'), SPOOR_RSP_ACK);
    assert_int_equal(spoor_rsp_feed(&p, '-'), SPOOR_RSP_NACK);
    assert_int_equal(spoor_rsp_feed(&p, 0x03), SPOOR_RSP_INTERRUPT);
    /* escaped '#' inside the payload: "a}\x03b" is a # b; checksum counts the wire bytes */
    char pkt[32];
    unsigned sum = ('a' + '}' + 0x03 + 'b') & 0xff;
    int n = snprintf(pkt, sizeof pkt, "$a}%cb#%02x", 0x03, sum);
    assert_int_equal(feed_all(&p, pkt, (size_t)n), SPOOR_RSP_PACKET);
    assert_string_equal(p.packet, "a#b");
}

static void test_overlong_packet_is_rejected(void **state)
{
    (void)state;
    static spoor_rsp_parser p;
    spoor_rsp_init(&p);
    spoor_rsp_feed(&p, '$');
    unsigned sum = 0;
    for (int i = 0; i < SPOOR_RSP_MAX_PACKET + 10; i++) {
        spoor_rsp_feed(&p, 'x');
        sum += 'x';
    }
    char tail[4];
    snprintf(tail, sizeof tail, "#%02x", sum & 0xff);
    assert_int_equal(feed_all(&p, tail, 3), SPOOR_RSP_BAD_CHECKSUM);
}

static void test_frame(void **state)
{
    (void)state;
    char out[64];
    size_t n = spoor_rsp_frame("OK", 2, out, sizeof out);
    assert_int_equal(n, 6);
    assert_memory_equal(out, "$OK#9a", 6); /* 0x4f + 0x4b = 0x9a */
    n = spoor_rsp_frame("a$", 2, out, sizeof out);
    assert_memory_equal(out, "$a}\x04#", 5);
    assert_int_equal(spoor_rsp_frame("OK", 2, out, 5), 0);
}

static const uint8_t memory[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

static bool read_mem(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < 0x1000 || addr - 0x1000 + len > sizeof memory)
        return false;
    memcpy(buf, memory + (addr - 0x1000), len);
    return true;
}

static void test_handler(void **state)
{
    (void)state;
    spoor_rsp_target t = {.signal = 11, .read = read_mem};
    for (int i = 0; i < 16; i++)
        t.regs.r[i] = 0x01020300u + (uint32_t)i;
    {
        int i = 16;
        t.regs.xpsr = 0x01020300u + (uint32_t)i;
    }
    static char reply[SPOOR_RSP_MAX_PACKET + 1];
    bool detach;
    spoor_rsp_handle(&t, "?", reply, sizeof reply, &detach);
    assert_string_equal(reply, "S0b");
    size_t n = spoor_rsp_handle(&t, "g", reply, sizeof reply, &detach);
    assert_int_equal(n, 17 * 8);
    assert_memory_equal(reply, "00030201", 8);          /* r0 little-endian */
    assert_memory_equal(reply + 16 * 8, "10030201", 8); /* xpsr */
    spoor_rsp_handle(&t, "pf", reply, sizeof reply, &detach);
    assert_string_equal(reply, "0f030201");
    spoor_rsp_handle(&t, "m1002,4", reply, sizeof reply, &detach);
    assert_string_equal(reply, "33445566");
    spoor_rsp_handle(&t, "m1006,8", reply, sizeof reply, &detach); /* partial: what is known */
    assert_string_equal(reply, "7788");
    spoor_rsp_handle(&t, "m2000,4", reply, sizeof reply, &detach);
    assert_string_equal(reply, "E01");
    spoor_rsp_handle(&t, "M1000,1:00", reply, sizeof reply, &detach);
    assert_string_equal(reply, "E01");
    spoor_rsp_handle(&t, "c", reply, sizeof reply, &detach);
    assert_string_equal(reply, "E01");
    spoor_rsp_handle(&t, "qSupported:multiprocess+", reply, sizeof reply, &detach);
    assert_non_null(strstr(reply, "qXfer:features:read+"));
    spoor_rsp_handle(&t, "qXfer:features:read:target.xml:0,20", reply, sizeof reply, &detach);
    assert_int_equal(reply[0], 'm');
    assert_int_equal(strlen(reply), 0x21);
    spoor_rsp_handle(&t, "qXfer:features:read:target.xml:0,fff", reply, sizeof reply, &detach);
    assert_int_equal(reply[0], 'l');
    assert_non_null(strstr(reply, "org.gnu.gdb.arm.m-profile"));
    assert_non_null(strstr(reply, "<reg name=\"xpsr\""));
    spoor_rsp_handle(&t, "vMustReplyEmpty", reply, sizeof reply, &detach);
    assert_string_equal(reply, "");
    assert_false(detach);
    spoor_rsp_handle(&t, "D", reply, sizeof reply, &detach);
    assert_true(detach);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_packets),
        cmocka_unit_test(test_overlong_packet_is_rejected),
        cmocka_unit_test(test_frame),
        cmocka_unit_test(test_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
