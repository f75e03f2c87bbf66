/* The JSON writer (src/util/json_write.h) into memory (util/outbuf.h's ob_init_memory/ob_take).
 * The expected texts are written out by hand from RFC 8259's grammar. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/json_write.h"

static outbuf ob;

static void test_document_in_memory(void **state)
{
    (void)state;
    ob_init_memory(&ob);
    json_out j;
    json_init(&j, &ob);
    json_object_begin(&j, NULL);
    json_string(&j, "name", "a\"b");
    json_hex32(&j, "pc", 0x80001234u);
    json_array_begin(&j, "list");
    json_raw(&j, NULL, "{\"x\":1}", 7);
    json_raw(&j, NULL, "[]", 2);
    json_null(&j, NULL);
    json_array_end(&j);
    json_raw(&j, "n", "-2", 2);
    json_object_end(&j);
    json_finish(&j);
    size_t len;
    char *text = ob_take(&ob, &len);
    assert_non_null(text);
    assert_string_equal(text,
                        "{\"name\":\"a\\\"b\",\"pc\":\"0x80001234\",\"list\":[{\"x\":1},[],null],"
                        "\"n\":-2}\n");
    assert_int_equal(len, strlen(text));
    free(text);
}

/* More than the 64 KiB buffer: flushed into memory piece by piece, nothing lost or doubled. */
static void test_larger_than_the_buffer(void **state)
{
    (void)state;
    ob_init_memory(&ob);
    json_out j;
    json_init(&j, &ob);
    json_array_begin(&j, NULL);
    for (unsigned i = 0; i < 50000; i++)
        json_uint(&j, NULL, i);
    json_array_end(&j);
    json_finish(&j);
    size_t len;
    char *text = ob_take(&ob, &len);
    assert_non_null(text);
    assert_true(len > sizeof ob.buf);
    assert_int_equal(text[len - 1], '\n');
    /* every number once, in order, one comma between two */
    size_t at = 1;
    assert_int_equal(text[0], '[');
    for (unsigned i = 0; i < 50000; i++) {
        char want[16];
        int n = snprintf(want, sizeof want, "%u%c", i, i + 1 < 50000 ? ',' : ']');
        assert_memory_equal(text + at, want, (size_t)n);
        at += (size_t)n;
    }
    assert_int_equal(at, len - 1);
    free(text);
    /* taken: the outbuf starts again empty */
    char *empty = ob_take(&ob, &len);
    assert_non_null(empty);
    assert_int_equal(len, 0);
    assert_string_equal(empty, "");
    free(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document_in_memory),
        cmocka_unit_test(test_larger_than_the_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
