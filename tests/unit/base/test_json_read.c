/* The one JSON reader (util/json_read.h) and its tree (base/json_tree.h), and the hash index
 * (base/hash_index.h). Expected values come from RFC 8259's grammar and from Unicode's UTF-8
 * encoding of U+00E9 and U+1F600 (C3 A9, F0 9F 98 80), written out here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/hash_index.h"
#include "base/json_tree.h"
#include "util/json_read.h"

struct log {
    char text[2048];
    size_t n;
};

/* One line per item: depth, type letter, key, text. */
static const char *log_item(void *ctx, const spoor_json_item *it)
{
    struct log *l = ctx;
    static const char letters[] = "nftNsoae";
    int k = snprintf(l->text + l->n, sizeof l->text - l->n, "%u%c %s=%.*s\n", it->depth,
                     letters[it->type], it->key ? it->key : "-", (int)it->len, it->text);
    l->n += (size_t)k;
    return NULL;
}

static void items_in_order(void **state)
{
    (void)state;
    const char *doc = " {\"a\": [1, -2.5e+3, true, false, null], \"b\\n\": {\"c\": \"x\\u00e9\"}, "
                      "\"d\": \"\\ud83d\\ude00\"} ";
    struct log l = {{0}, 0};
    spoor_json_error err;
    assert_true(spoor_json_read(doc, strlen(doc), 8, log_item, &l, &err));
    assert_string_equal(l.text, "0o -=\n"
                                "1a a=\n"
                                "2N -=1\n"
                                "2N -=-2.5e+3\n"
                                "2t -=\n"
                                "2f -=\n"
                                "2n -=\n"
                                "1e -=\n"
                                "1o b\n=\n"
                                "2s c=x\xc3\xa9\n"
                                "1e -=\n"
                                "1s d=\xf0\x9f\x98\x80\n"
                                "0e -=\n");
}

static void check_error(const char *doc, unsigned depth, size_t offset, const char *message)
{
    spoor_json_error err;
    assert_false(spoor_json_read(doc, strlen(doc), depth, NULL, NULL, &err));
    assert_string_equal(err.message, message);
    assert_int_equal(err.offset, offset);
}

static void errors_name_the_byte(void **state)
{
    (void)state;
    check_error("{\"a\" 1}", 8, 5, "expected ':'");
    check_error("[1 2]", 8, 3, "expected ',' or ']'");
    check_error("{\"a\":1,}", 8, 7, "expected a string key");
    check_error("01", 8, 1, "more after the end of the document");
    check_error("1.", 8, 2, "expected a digit after '.'");
    check_error("1e+", 8, 3, "expected a digit in the exponent");
    check_error("+1", 8, 0, "expected a value");
    check_error("\"ab", 8, 3, "unterminated string");
    check_error("\"a\tb\"", 8, 3, "control character in a string");
    check_error("\"\\x\"", 8, 3, "bad escape in a string");
    check_error("\"\\u12G4\"", 8, 6, "bad \\u escape");
    check_error("\"\\ud800x\"", 8, 7, "lone surrogate in a \\u escape");
    check_error("\"\\udc00\"", 8, 7, "lone surrogate in a \\u escape");
    check_error("[[[]]]", 2, 2, "nested too deeply");
    check_error("tru", 8, 0, "expected a value");
    check_error("", 8, 0, "expected a value");
}

static void tree_members_and_integers(void **state)
{
    (void)state;
    const char *doc = "{\"n\": 42, \"f\": 1.5, \"big\": 1234567890123456789, \"s\": \"v\", "
                      "\"n\": 7, \"list\": [\"a\", {\"k\": null}]}";
    spoor_json_value v;
    spoor_json_error err;
    long long n = 0;
    assert_true(spoor_json_parse(doc, strlen(doc), 4, 16, &v, &err));
    assert_true(spoor_json_integer(spoor_json_member(&v, "n"), &n)); /* the first "n" */
    assert_int_equal(n, 42);
    assert_false(spoor_json_integer(spoor_json_member(&v, "f"), &n));
    assert_false(spoor_json_integer(spoor_json_member(&v, "big"), &n)); /* 19 digits */
    assert_false(spoor_json_integer(spoor_json_member(&v, "s"), &n));
    assert_string_equal(spoor_json_member(&v, "s")->text, "v");
    const spoor_json_value *list = spoor_json_member(&v, "list");
    assert_int_equal(list->type, SPOOR_JSON_ARRAY);
    assert_int_equal(list->n, 2);
    assert_int_equal(spoor_json_member(&list->items[1], "k")->type, SPOOR_JSON_NULL);
    assert_null(spoor_json_member(&v, "missing"));
    spoor_json_value_free(&v);

    assert_false(spoor_json_parse("[1,2,3]", 7, 4, 2, &v, &err));
    assert_string_equal(err.message, "more than 2 items");
    assert_false(spoor_json_parse("[\"a\\u0000\"]", 11, 4, 8, &v, &err));
    assert_string_equal(err.message, "\\u0000 in a string");
}

/* ---- the hash index ---- */

static uint64_t key_hash(const void *keys, size_t i)
{
    return ((const uint32_t *)keys)[i];
}

static bool key_is(const void *keys, size_t i, const void *key)
{
    return ((const uint32_t *)keys)[i] == *(const uint32_t *)key;
}

static void hash_index_grows_and_refills(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint32_t keys[N];
    spoor_hash_index x = {0};
    for (size_t i = 0; i < N; i++) {
        uint32_t k = 0x08000000u + 4096u * (uint32_t)i; /* one low-bit pattern for all */
        assert_int_equal(spoor_hash_reserve(&x, i, key_hash, keys), 0);
        size_t *slot = spoor_hash_slot(&x, k, key_is, keys, &k);
        assert_int_equal(*slot, 0);
        keys[i] = k;
        *slot = i + 1;
        assert_true(x.cap >= 2 * (i + 1));
    }
    for (size_t i = 0; i < N; i += 2) { /* reversed order: every position moves */
        uint32_t t = keys[i];
        keys[i] = keys[N - 1 - i];
        keys[N - 1 - i] = t;
    }
    spoor_hash_refill(&x, N, key_hash, keys);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(*spoor_hash_slot(&x, keys[i], key_is, keys, &keys[i]), i + 1);
    uint32_t absent = 0x07000000u;
    assert_int_equal(*spoor_hash_slot(&x, absent, key_is, keys, &absent), 0);
    spoor_hash_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(items_in_order),
        cmocka_unit_test(errors_name_the_byte),
        cmocka_unit_test(tree_members_and_integers),
        cmocka_unit_test(hash_index_grows_and_refills),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
