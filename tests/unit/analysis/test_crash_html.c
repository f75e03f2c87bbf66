/* spoor report's page of a saved report (spoor/analysis.h spoor_crash_html_from_json) with the
 * crash example's ELF: the report held escaped for its script element, the annex's input, ELF,
 * code window (at an address the ELF's symbol table gives) and source lines (a file written
 * here, found under a source folder with its leading directories removed), errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "spoor/analysis.h"
#include "spoor/error.h"

#define CRASH_ELF SPOOR_FIRMWARE_DIR "/examples/crash-m3.elf"

static char *page_of(const spoor_elf *elf, const char *report, const spoor_report_options *o)
{
    size_t len = 0;
    char *page = spoor_crash_html_from_json(elf, report, strlen(report), o, &len);
    assert_non_null(page);
    assert_int_equal(len, strlen(page));
    return page;
}

static void test_page_holds_the_report(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CRASH_ELF);
    assert_non_null(elf);
    const char *report =
        "{\"fault\":{\"type\":\"BusFault\"},\"warnings\":[\"</script><!-- & >\"]}\n";
    spoor_report_options o = {.input = "crash.bin"};
    char *page = page_of(elf, report, &o);
    assert_true(!strncmp(page, "<!DOCTYPE html>\n", 16));
    assert_non_null(strstr(page, "</html>"));
    assert_null(strstr(page, "@SPOOR_"));
    assert_null(strstr(page, "</script><!--"));
    assert_non_null(strstr(page, "<script type=\"application/json\" id=\"spoor-crash\">"
                                 "{\"fault\":{\"type\":\"BusFault\"},\"warnings\":"
                                 "[\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u003e\"]}\n"
                                 "</script>"));
    char annex[1200];
    snprintf(annex, sizeof annex,
             "\",\"elf\":\"%s\",\"input\":\"crash.bin\",\"code\":[],\"sources\":[]}\n</script>",
             CRASH_ELF);
    assert_non_null(strstr(page, "<script type=\"application/json\" id=\"spoor-annex\">"
                                 "{\"spoor\":\""));
    assert_non_null(strstr(page, annex));
    free(page);
    page = page_of(elf, report, NULL); /* no options: no input named */
    assert_non_null(strstr(page, "\"input\":null,"));
    free(page);
    spoor_elf_close(elf);
}

static void test_code_window(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CRASH_ELF);
    assert_non_null(elf);
    uint32_t addr, size;
    assert_true(spoor_elf_symbol(elf, "main", &addr, &size));
    char report[200], want[200];
    snprintf(report, sizeof report, "{\"backtrace\":[{\"pc\":\"0x%08x\"}]}", addr | 1);
    snprintf(want, sizeof want,
             "\"code\":[{\"addr\":\"0x%08x\",\"function\":\"main\",\"offset\":0,", addr & ~1u);
    char *page = page_of(elf, report, NULL);
    assert_non_null(strstr(page, want));
    snprintf(want, sizeof want, "\"insns\":[{\"pc\":\"0x%08x\",\"size\":", addr & ~1u);
    assert_non_null(strstr(page, want)); /* nothing before the function's first instruction */
    free(page);
    spoor_elf_close(elf);
}

static void test_source_dir(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CRASH_ELF);
    assert_non_null(elf);
    char dir[] = "/tmp/spoor-crash-html-XXXXXX", sub[64], file[96];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(file, sizeof file, "%s/fw.c", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    for (int i = 1; i <= 20; i++)
        fprintf(f, "line %d\n", i);
    fclose(f);
    const char *dirs[] = {"/nonexistent", dir};
    spoor_report_options o = {.source_dirs = dirs, .nsource_dirs = 2};
    char *page = page_of(elf, "{\"frame\":{\"file\":\"a/b/sub/fw.c\",\"line\":10}}", &o);
    char want[400];
    snprintf(want, sizeof want,
             "\"sources\":[{\"file\":\"a/b/sub/fw.c\",\"path\":\"%s\",\"first\":6,\"lines\":"
             "[\"line 6\",\"line 7\",\"line 8\",\"line 9\",\"line 10\",\"line 11\",\"line 12\","
             "\"line 13\",\"line 14\"]}]}",
             file);
    assert_non_null(strstr(page, want));
    free(page);
    o.nsource_dirs = 1; /* not found: named, with no path */
    page = page_of(elf, "{\"frame\":{\"file\":\"a/b/sub/fw.c\",\"line\":10}}", &o);
    assert_non_null(strstr(page, "\"sources\":[{\"file\":\"a/b/sub/fw.c\",\"path\":null}]}"));
    free(page);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
    spoor_elf_close(elf);
}

static void test_not_a_report(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CRASH_ELF);
    assert_non_null(elf);
    size_t len = 0;
    assert_null(spoor_crash_html_from_json(elf, " [1]", 4, NULL, &len));
    assert_string_equal(spoor_last_error(),
                        "not a spoor crash --json report: byte 1: not a JSON object");
    assert_null(spoor_crash_html_from_json(elf, "{\"a\":}", 6, NULL, &len));
    assert_true(!strncmp(spoor_last_error(), "not a spoor crash --json report: byte 5: ", 41));
    spoor_elf_close(elf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_holds_the_report),
        cmocka_unit_test(test_code_window),
        cmocka_unit_test(test_source_dir),
        cmocka_unit_test(test_not_a_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
