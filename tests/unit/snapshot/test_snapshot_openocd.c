/* spoor_snapshot_source's OpenOCD input (spoor/snapshot.h): memory only, one live target at
 * a time, telnet or (tcl:) the Tcl RPC server; what a memory-only snapshot stacks. The servers
 * are ports nobody listens on (a loopback listener closed again): the error says which
 * client tried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "loopback_listener.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"

/* "127.0.0.1:PORT" of a port that refuses connections. */
static void closed_port(char *where, size_t cap, const char *prefix)
{
    int port = 0;
    int fd = listen_loopback(&port);
    assert_true(fd >= 0);
    close(fd);
    snprintf(where, cap, "%s127.0.0.1:%d", prefix, port);
}

static void test_openocd_needs_memory_only(void **state)
{
    (void)state;
    spoor_snapshot_source src = {.openocd = "4444"};
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "OpenOCD gives target memory, not the registers"));
}

static void test_one_live_target(void **state)
{
    (void)state;
    spoor_snapshot_source src = {.gdb = "127.0.0.1:3333", .openocd = "4444", .memory_only = true};
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "give one live target"));
}

static void test_openocd_clients(void **state)
{
    (void)state;
    char where[64];
    closed_port(where, sizeof where, "");
    spoor_snapshot_source src = {.openocd = where, .memory_only = true, .gdb_timeout_ms = 2000};
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "openocd 127.0.0.1:")); /* the telnet client */
    closed_port(where, sizeof where, "tcl:");
    src.openocd = where;
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "openocd tcl 127.0.0.1:")); /* the Tcl client */
}

/* Memory only: a DUMP and --mem images together are layers, not a conflict; without
 * memory_only they are refused as before. */
static void test_memory_only_stacks(void **state)
{
    (void)state;
    spoor_raw_memory image = {.address = 0x20000000, .path = "/nonexistent/ram.bin"};
    spoor_snapshot_source src = {.dump_path = "/nonexistent/crash.bin", .mems = &image, .nmems = 1};
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "give either a DUMP or --regs/--mem, not both"));
    src.memory_only = true;
    assert_null(spoor_snapshot_open(&src, NULL));
    assert_non_null(strstr(spoor_last_error(), "/nonexistent/crash.bin")); /* the DUMP opened */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openocd_needs_memory_only),
        cmocka_unit_test(test_one_live_target),
        cmocka_unit_test(test_openocd_clients),
        cmocka_unit_test(test_memory_only_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
