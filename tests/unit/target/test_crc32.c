/* spoor_crc32 against the published check values of CRC-32/ISO-HDLC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/crash.h"

/* The catalogue check value: CRC of the ASCII digits "123456789". */
static void check_value(void **state)
{
    (void)state;
    assert_int_equal(spoor_crc32(0, "123456789", 9), 0xCBF43926u);
}

static void empty_input_is_zero(void **state)
{
    (void)state;
    assert_int_equal(spoor_crc32(0, "", 0), 0u);
}

/* Value from Python's zlib.crc32(b"The quick brown fox jumps over the lazy dog"). */
static void pangram(void **state)
{
    (void)state;
    const char *s = "The quick brown fox jumps over the lazy dog";
    assert_int_equal(spoor_crc32(0, s, (uint32_t)strlen(s)), 0x414FA339u);
}

static void chaining_equals_one_pass(void **state)
{
    (void)state;
    const char *s = "The quick brown fox jumps over the lazy dog";
    uint32_t n = (uint32_t)strlen(s);
    for (uint32_t cut = 0; cut <= n; cut++) {
        uint32_t crc = spoor_crc32(spoor_crc32(0, s, cut), s + cut, n - cut);
        assert_int_equal(crc, 0x414FA339u);
    }
}

/* 32 zero bytes: zlib.crc32(bytes(32)) == 0x190A55AD. */
static void zeros(void **state)
{
    (void)state;
    uint8_t z[32] = {0};
    assert_int_equal(spoor_crc32(0, z, sizeof z), 0x190A55ADu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_value), cmocka_unit_test(empty_input_is_zero),
        cmocka_unit_test(pangram),     cmocka_unit_test(chaining_equals_one_pass),
        cmocka_unit_test(zeros),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
