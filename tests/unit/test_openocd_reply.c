/* OpenOCD telnet replies, sans I/O: telnet negotiation removed (RFC 854) and mdw output parsed
 * (OpenOCD manual, "Memory access commands": "ADDR: WORD WORD ..." lines). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_telnet),
        cmocka_unit_test(test_parse_mdw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
