/* OpenOCD replies, sans I/O: telnet negotiation removed (RFC 854), mdw output parsed (OpenOCD
 * manual, "Memory access commands": "ADDR: WORD WORD ..." lines) and read_memory's result over
 * the Tcl RPC server (manual, "read_memory address width count": a Tcl list of the elements;
 * OpenOCD 0.12 prints each as 0x and hex digits without leading zeros). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/openocd.h"

static void test_strip_telnet(void **state)
{
    (void)state;
    /* IAC WILL ECHO, IAC WILL SGA, IAC DONT LINEMODE, text with CR LF, IAC IAC (a 0xFF byte),
     * IAC NOP (a two-byte command) */
    char text[] = "\xff\xfb\x01\xff\xfb\x03\xff\xfe\x22Open On-Chip Debugger\r\n> a\xff\xff"
                  "b\xff\xf1"
                  "c";
    size_t n = spoor_openocd_strip_telnet(text, sizeof text - 1);
    assert_int_equal(n, strlen("Open On-Chip Debugger\n> a\xff"
                               "bc"));
    assert_memory_equal(text,
                        "Open On-Chip Debugger\n> a\xff"
                        "bc",
                        n);
}

static void test_parse_mdw(void **state)
{
    (void)state;
    uint32_t w[10];
    const char *two_lines = "0x20000000: 00000001 00000002 00000003 00000004 00000005 00000006 "
                            "00000007 00000008 \n0x20000020: deadbeef 0000000a \n";
    assert_true(spoor_openocd_parse_mdw(two_lines, 0x20000000, w, 10));
    assert_int_equal(w[0], 1);
    assert_int_equal(w[7], 8);
    assert_int_equal(w[8], 0xdeadbeef);
    assert_int_equal(w[9], 10);
    /* fewer words than asked, a line at the wrong address, an error message */
    assert_false(spoor_openocd_parse_mdw("0x20000000: 00000001 \n", 0x20000000, w, 2));
    assert_false(spoor_openocd_parse_mdw("0x20000004: 00000001 00000002 \n", 0x20000000, w, 2));
    assert_false(spoor_openocd_parse_mdw("Error reading memory at 0x20000000\n", 0x20000000, w, 1));
    assert_false(spoor_openocd_parse_mdw("0x20000000: 1234567890 \n", 0x20000000, w, 1));
}

static void test_parse_read_memory(void **state)
{
    (void)state;
    uint32_t w[3];
    assert_true(spoor_openocd_parse_read_memory("0x1 0x20000400 0xDEADBEEF", w, 3));
    assert_int_equal(w[0], 1);
    assert_int_equal(w[1], 0x20000400);
    assert_int_equal(w[2], 0xdeadbeef);
    assert_true(spoor_openocd_parse_read_memory("0x00000000\n", w, 1));
    assert_int_equal(w[0], 0);
    /* too few, too many, no 0x, nine digits, an error message, a word glued to text */
    assert_false(spoor_openocd_parse_read_memory("0x1 0x2", w, 3));
    assert_false(spoor_openocd_parse_read_memory("0x1 0x2 0x3 0x4", w, 3));
    assert_false(spoor_openocd_parse_read_memory("1 2 3", w, 3));
    assert_false(spoor_openocd_parse_read_memory("0x123456789", w, 1));
    assert_false(spoor_openocd_parse_read_memory("read_memory: failed to read memory", w, 1));
    assert_false(spoor_openocd_parse_read_memory("0x12g", w, 1));
    assert_false(spoor_openocd_parse_read_memory("0x", w, 1));
    assert_false(spoor_openocd_parse_read_memory("", w, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_telnet),
        cmocka_unit_test(test_parse_mdw),
        cmocka_unit_test(test_parse_read_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
