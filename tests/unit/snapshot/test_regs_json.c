/* The regs.json reader and the raw-input dump (--regs, --mem ADDR:FILE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/dump.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"

static bool parse(const char *text, spoor_dump *d)
{
    memset(d, 0, sizeof *d);
    return spoor_regs_json_parse(text, strlen(text), "regs.json", d);
}

static void full_register_set(void **state)
{
    (void)state;
    const char *text =
        "{\n"
        "  \"r0\": \"0x00000000\", \"r1\": \"0x1\", \"r2\": \"0x2\", \"r3\": \"0x3\",\n"
        "  \"r4\": \"0x4\", \"r5\": \"0x5\", \"r6\": \"0x6\", \"r7\": \"0x20001fe8\",\n"
        "  \"r8\": \"0x8\", \"r9\": \"0x9\", \"r10\": \"0xa\", \"r11\": \"0xB\", \"r12\": "
        "\"0xc\",\n"
        "  \"sp\": \"0x20001fe0\", \"lr\": \"0xfffffff9\", \"pc\": \"0x000001a4\",\n"
        "  \"xpsr\": \"0x61000003\", \"msp\": \"0x20001fe0\", \"psp\": \"0x0\",\n"
        "  \"control\": \"0x0\", \"exc_return\": \"0xFFFFFFF9\",\n"
        "  \"CFSR\": \"0x00000400\", \"hfsr\": \"0x40000000\", \"bfar\": \"0xe000ed38\"\n"
        "}\n";
    spoor_dump d;
    if (!parse(text, &d))
        fail_msg("%s", spoor_last_error());
    assert_true(d.has_registers);
    assert_int_equal(d.regs.r[0], 0);
    assert_int_equal(d.regs.r[7], 0x20001fe8u);
    assert_int_equal(d.regs.r[11], 0xBu);
    assert_int_equal(d.regs.r[13], 0x20001fe0u);
    assert_int_equal(d.regs.r[14], 0xfffffff9u);
    assert_int_equal(d.regs.r[15], 0x1a4u);
    assert_int_equal(d.regs.xpsr, 0x61000003u);
    assert_int_equal(d.regs.exc_return, 0xFFFFFFF9u);
    assert_true(d.has_fault);
    assert_int_equal(d.fault.cfsr, 0x400u);
    assert_int_equal(d.fault.hfsr, 0x40000000u);
    assert_int_equal(d.fault.bfar, 0xe000ed38u);
    assert_int_equal(d.fault.valid,
                     SPOOR_FAULT_HAS_CFSR | SPOOR_FAULT_HAS_HFSR | SPOOR_FAULT_HAS_BFAR);
    assert_int_equal(d.regs.flags, 0);
}

static void numbers_null_aliases_and_fp(void **state)
{
    (void)state;
    spoor_dump d;
    assert_true(
        parse("{\"pc\": 4096, \"lr\": null, \"r13\": \"0x20000000\", \"s3\": \"0x3f800000\","
              " \"fpscr\": \"0x0\", \"msplim\": \"0x20000000\"}",
              &d));
    assert_int_equal(d.regs.r[15], 4096);
    assert_int_equal(d.regs.r[14], 0xFFFFFFFFu); /* null: unknown */
    assert_int_equal(d.regs.r[13], 0x20000000u);
    assert_int_equal(d.regs.s[3], 0x3f800000u);
    assert_int_equal(d.regs.flags, SPOOR_REGS_FP_VALID | SPOOR_REGS_HAS_LIMITS);
    assert_false(d.has_fault);
    assert_true(parse("  { }  ", &d));
    assert_false(d.has_registers);
}

static void expect_error(const char *text, const char *message)
{
    spoor_dump d;
    assert_false(parse(text, &d));
    assert_string_equal(spoor_last_error(), message);
}

static void errors_name_the_problem(void **state)
{
    (void)state;
    expect_error("{\"pc\": \"0x1\",\n \"r16\": \"0x0\"}",
                 "regs.json: line 2: unknown register \"r16\"");
    expect_error("{\"pc\": \"0xZZ\"}",
                 "regs.json: line 1: value of \"pc\" is not a 32-bit hex number: \"0xZZ\"");
    expect_error("{\"pc\": \"0x100000000\"}",
                 "regs.json: line 1: value of \"pc\" is not a 32-bit hex number: \"0x100000000\"");
    expect_error("{\"pc\": -1}",
                 "regs.json: line 1: value of \"pc\" must be a hex string like \"0x20001000\"");
    expect_error("{\"pc\": 1.5}",
                 "regs.json: line 1: value of \"pc\" must be a hex string like \"0x20001000\"");
    expect_error("{\"pc\" \"0x1\"}", "regs.json: line 1: expected ':'");
    expect_error("{\"pc\": \"0x1\"", "regs.json: line 1: expected ',' or '}'");
    expect_error("[1, 2]", "regs.json: line 1: expected '{'");
    expect_error("{\"pc\": \"0x1\"} x", "regs.json: line 1: more after the end of the document");
    expect_error("{\"pc", "regs.json: line 1: unterminated string");
    expect_error("", "regs.json: line 1: expected '{'");
    /* hardening: the documented form only, pc and sp required, no key twice */
    expect_error("{\"pc\": \"304\", \"sp\": \"0x20000000\"}",
                 "regs.json: line 1: value of \"pc\" must be a hex string starting with 0x, got "
                 "\"304\"");
    expect_error("{\"pc\": \"0x100\"}", "regs.json: \"pc\" and \"sp\" are required");
    expect_error("{\"sp\": \"0x20000000\", \"r0\": \"0x1\"}",
                 "regs.json: \"pc\" and \"sp\" are required");
    expect_error("{\"pc\": null, \"sp\": \"0x20000000\"}",
                 "regs.json: line 1: \"pc\" is required and cannot be null");
    expect_error("{\"pc\": \"0x1\", \"sp\": \"0x2\", \"PC\": \"0x3\"}",
                 "regs.json: line 1: register \"PC\" given twice");
    expect_error("{\"pc\": \"0x1\", \"sp\": \"0x2\", \"r15\": \"0x3\"}",
                 "regs.json: line 1: register \"r15\" given twice");
    spoor_dump d;
    assert_false(spoor_regs_json_parse("{}x", 3, "snap/cpu.json", &d));
    assert_string_equal(spoor_last_error(),
                        "snap/cpu.json: line 1: more after the end of the document");
    /* a nested value is refused by its member; escapes are JSON and read as such */
    expect_error("{\"pc\": {\"x\": 1}}",
                 "regs.json: line 1: value of \"pc\" must be a hex string like \"0x20001000\"");
    expect_error("{\"pc\": [\"0x1\"]}",
                 "regs.json: line 1: value of \"pc\" must be a hex string like \"0x20001000\"");
    expect_error("{\"p\\u0000c\": \"0x1\"}", "regs.json: line 1: unknown register \"p\"");
    expect_error("{\"pc\": \"0x1\\u0000\", \"sp\": \"0x2\"}",
                 "regs.json: line 1: value of \"pc\" is not a 32-bit hex number: \"0x1\"");
    assert_true(parse("{\"\\u0070c\": \"0x\\u0031\", \"sp\": \"0x2\"}", &d));
    assert_int_equal(d.regs.r[15], 1);
}

static char *write_temp(const char *name, const void *bytes, size_t len)
{
    char *path = malloc(512);
    snprintf(path, 512, "%s/test_regs_json_%s", SPOOR_BUILD_DIR, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    return path;
}

static void raw_inputs_make_a_dump(void **state)
{
    (void)state;
    const char *regs = "{\"sp\": \"0x20000010\", \"pc\": \"0x100\"}";
    char *regs_path = write_temp("regs.json", regs, strlen(regs));
    uint8_t a[32], b[16];
    for (int i = 0; i < 32; i++)
        a[i] = (uint8_t)i;
    for (int i = 0; i < 16; i++)
        b[i] = (uint8_t)(0x80 + i);
    char *a_path = write_temp("a.bin", a, sizeof a);
    char *b_path = write_temp("b.bin", b, sizeof b);

    char arg_a[600], arg_b[600];
    snprintf(arg_a, sizeof arg_a, "0x20000000:%s", a_path);
    snprintf(arg_b, sizeof arg_b, "536870944:%s", b_path); /* 0x20000020, decimal */
    spoor_raw_memory mems[2];
    assert_true(spoor_raw_memory_parse(arg_b, &mems[0]));
    assert_true(spoor_raw_memory_parse(arg_a, &mems[1]));
    assert_int_equal(mems[0].address, 0x20000020u);
    spoor_snapshot_source src = {.regs_path = regs_path, .mems = mems, .nmems = 2};
    spoor_snapshot *s = spoor_snapshot_open(&src, NULL);
    if (!s)
        fail_msg("%s", spoor_last_error());
    assert_int_equal(s->regs.r[13], 0x20000010u);
    uint8_t buf[48];
    assert_true(spoor_mem_read(s->mem, 0x20000000u, buf, 48));
    assert_memory_equal(buf, a, 32);
    assert_memory_equal(buf + 32, b, 16);
    assert_false(spoor_mem_read(s->mem, 0x20000000u, buf, 49));
    spoor_snapshot_close(s);

    /* overlapping memory files */
    snprintf(arg_b, sizeof arg_b, "0x20000010:%s", b_path);
    assert_true(spoor_raw_memory_parse(arg_b, &mems[0]));
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "(0x20000010+16) and --mem "));
    assert_non_null(strstr(spoor_last_error(), "(0x20000000+32) overlap"));
    /* images without registers */
    src.regs_path = NULL;
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_string_equal(spoor_last_error(), "--mem: no registers (give --regs)");

    remove(regs_path);
    remove(a_path);
    remove(b_path);
    free(regs_path);
    free(a_path);
    free(b_path);
}

static void bad_mem_arguments(void **state)
{
    (void)state;
    spoor_raw_memory m;
    const char *bad[] = {"file.bin", ":file.bin", "0x2000:", "zz:file", "0x100000000:f", "-1:f"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(spoor_raw_memory_parse(bad[i], &m));
        char want[128];
        snprintf(want, sizeof want, "--mem: expected ADDR:FILE, got '%s'", bad[i]);
        assert_string_equal(spoor_last_error(), want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_register_set),       cmocka_unit_test(numbers_null_aliases_and_fp),
        cmocka_unit_test(errors_name_the_problem), cmocka_unit_test(raw_inputs_make_a_dump),
        cmocka_unit_test(bad_mem_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
