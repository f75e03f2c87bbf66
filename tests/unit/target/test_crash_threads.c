/* The thread walk of a thread-aware dump (target/src/crash_threads.c, built for the host) over
 * fake RAM laid out by hand: FreeRTOS lists (list.h: uxNumberOfItems, pxIndex, xListEnd
 * {xItemValue, pxNext, pxPrevious}; items {xItemValue, pxNext, pxPrevious, pvOwner,
 * pxContainer}), a circular pointer list (ThreadX's created list), corrupted links that point
 * outside RAM or loop, the order of the regions, the stack bounds, and the regions in a dump the
 * host reader parses. Every read outside the fake RAM fails the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/crash.h"
#include "spoor/crash_threads.h"
#include "spoor/dump.h"
#include "spoor/error.h"

#define RAM_BASE 0x20000000u
#define RAM_SIZE 0x4000u

static uint8_t ram[RAM_SIZE];
static const spoor_range ram_ranges[] = {{RAM_BASE, RAM_BASE + RAM_SIZE}};
static const spoor_range flash_ranges[] = {{0x08000000u, 0x08000400u}};

static bool fake_read(void *ctx, uint32_t addr, void *dst, uint32_t len)
{
    (void)ctx;
    if (addr < RAM_BASE || addr - RAM_BASE + (uint64_t)len > RAM_SIZE)
        fail_msg("read outside the fake RAM at 0x%08x+%u", addr, len);
    memcpy(dst, ram + (addr - RAM_BASE), len);
    return true;
}

static const spoor_memory memory = {fake_read, NULL, ram_ranges, 1, flash_ranges, 1};

static void put(uint32_t addr, uint32_t v)
{
    memcpy(ram + (addr - RAM_BASE), &v, 4);
}

typedef struct region {
    uint32_t addr, len, kind;
} region;

static region regions[256];
static uint32_t nregions;

static void collect(void *ctx, uint32_t addr, uint32_t len, uint32_t kind)
{
    (void)ctx;
    assert_true(nregions < 256);
    regions[nregions++] = (region){addr, len, kind};
}

/* FreeRTOS geometry: List_t 20 bytes (xListEnd at 8, its pxNext at 12), ListItem_t pxNext at 4,
 * pvOwner at 12. TCB: pxTopOfStack at 0, xStateListItem at 4 (20 bytes), pxEndOfStack at 40,
 * 64 bytes in all. */
#define LISTS 0x20000100u /* two ready lists, 20 bytes each */
#define SUSPENDED 0x20000140u
#define CURRENT 0x20000180u
#define TCB(i) (0x20001000u + 0x100u * (i))
#define STACK(i) (0x20002000u + 0x400u * (i)) /* 256-byte stacks */

static void list_init(uint32_t list)
{
    put(list, 0);
    put(list + 4, list + 8);
    put(list + 8, 0xFFFFFFFFu);
    put(list + 12, list + 8);
    put(list + 16, list + 8);
}

/* appends TCB i's xStateListItem to list (after the item prev, or the end marker) */
static void list_add(uint32_t list, uint32_t prev, unsigned i)
{
    uint32_t item = TCB(i) + 4;
    put(item + 4, list + 8);                 /* pxNext: the end marker */
    put((prev ? prev : list + 8) + 4, item); /* the previous item's pxNext */
    put(item + 12, TCB(i));                  /* pvOwner */
    put(TCB(i), STACK(i) + 0xC0);            /* pxTopOfStack: 64 bytes used */
    put(TCB(i) + 40, STACK(i) + 0xFC);       /* pxEndOfStack: the last word */
}

static spoor_threads_layout freertos_layout(void)
{
    spoor_threads_layout l = {0};
    l.globals[0] = (spoor_range){CURRENT, CURRENT + 4};
    l.globals[1] = (spoor_range){LISTS, LISTS + 40};
    l.global_count = 2;
    l.lists[0] = (spoor_thread_list){SPOOR_THREAD_LIST_FREERTOS, LISTS, 0, 2};
    l.lists[1] = (spoor_thread_list){SPOOR_THREAD_LIST_FREERTOS, SUSPENDED, 0, 1};
    l.list_count = 2;
    l.current = CURRENT;
    l.tcb_size = 64;
    l.sp_offset = 0;
    l.stack_top_kind = SPOOR_STACK_TOP_LAST_WORD;
    l.stack_top_offset = 40;
    l.list_size = 20;
    l.list_end = 8;
    l.list_first = 12;
    l.item_next = 4;
    l.item_owner = 12;
    l.stack_window = 512;
    return l;
}

static int fresh(void **state)
{
    (void)state;
    memset(ram, 0, sizeof ram);
    nregions = 0;
    list_init(LISTS);
    list_init(LISTS + 20);
    list_init(SUSPENDED);
    list_add(LISTS, 0, 0); /* ready[0]: task 0, task 1 */
    list_add(LISTS, TCB(0) + 4, 1);
    list_add(LISTS + 20, 0, 2); /* ready[1]: task 2 */
    list_add(SUSPENDED, 0, 3);  /* suspended: task 3 */
    put(CURRENT, TCB(2));
    return 0;
}

static void freertos_lists(void **state)
{
    (void)state;
    spoor_threads_layout l = freertos_layout();
    assert_int_equal(spoor_threads_regions(&l, &memory, collect, NULL), 4);
    /* globals, then the TCBs (the current one first), then the stacks but the current one's */
    region want[] = {{CURRENT, 4, SPOOR_REGION_RTOS},
                     {LISTS, 40, SPOOR_REGION_RTOS},
                     {TCB(2), 64, SPOOR_REGION_RTOS},
                     {TCB(0), 64, SPOOR_REGION_RTOS},
                     {TCB(1), 64, SPOOR_REGION_RTOS},
                     {TCB(3), 64, SPOOR_REGION_RTOS},
                     {STACK(0) + 0xC0, 64, SPOOR_REGION_THREAD_STACK},
                     {STACK(1) + 0xC0, 64, SPOOR_REGION_THREAD_STACK},
                     {STACK(3) + 0xC0, 64, SPOOR_REGION_THREAD_STACK}};
    assert_int_equal(nregions, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < nregions; i++) {
        assert_int_equal(regions[i].addr, want[i].addr);
        assert_int_equal(regions[i].len, want[i].len);
        assert_int_equal(regions[i].kind, want[i].kind);
    }
}

static void window_without_top(void **state)
{
    (void)state;
    spoor_threads_layout l = freertos_layout();
    l.stack_top_kind = SPOOR_STACK_TOP_NONE;
    l.stack_window = 0;                     /* the default */
    put(TCB(3), RAM_BASE + RAM_SIZE - 100); /* a stack near the end of RAM: clipped there */
    spoor_threads_regions(&l, &memory, collect, NULL);
    assert_int_equal(nregions, 9);
    assert_int_equal(regions[6].len, SPOOR_THREADS_DEFAULT_WINDOW);
    assert_int_equal(regions[8].addr, RAM_BASE + RAM_SIZE - 100);
    assert_int_equal(regions[8].len, 100);
}

static void corrupted_links_end_the_list(void **state)
{
    (void)state;
    spoor_threads_layout l = freertos_layout();
    put(TCB(0) + 4 + 4, 0x60000000u);  /* task 0's pxNext outside RAM: task 1 is lost */
    put(TCB(3) + 4 + 4, TCB(3) + 4);   /* task 3's item points to itself: a loop */
    put(TCB(2) + 4 + 12, 0x20000002u); /* task 2's owner misaligned: skipped */
    put(CURRENT, 0x1234u);             /* the current pointer outside RAM: not a TCB */
    assert_int_equal(spoor_threads_regions(&l, &memory, collect, NULL), 2);
    assert_int_equal(regions[2].addr, TCB(0));
    assert_int_equal(regions[3].addr, TCB(3));
}

static void circular_pointer_list(void **state)
{
    (void)state;
    /* ThreadX: _tx_thread_created_ptr at 0x20000200, tx_thread_created_next at 8, the stack
     * pointer at 4 and the stack's last byte at 12 */
    spoor_threads_layout l = {0};
    l.lists[0] = (spoor_thread_list){SPOOR_THREAD_LIST_POINTER, 0x20000200u, 8, 0};
    l.lists[1] =
        (spoor_thread_list){SPOOR_THREAD_LIST_POINTER, 0x20000204u, SPOOR_THREAD_NO_NEXT, 0};
    l.list_count = 2;
    l.tcb_size = 32;
    l.sp_offset = 4;
    l.stack_top_kind = SPOOR_STACK_TOP_LAST_BYTE;
    l.stack_top_offset = 12;
    put(0x20000200u, TCB(0));
    put(0x20000204u, TCB(3)); /* a single pointer (RTX5's idle thread) */
    for (unsigned i = 0; i < 3; i++) {
        put(TCB(i) + 8, TCB((i + 1) % 3));
        put(TCB(i) + 4, STACK(i) + 0x80);
        put(TCB(i) + 12, STACK(i) + 0xFF);
    }
    put(TCB(3) + 8, TCB(0)); /* not followed */
    put(TCB(3) + 4, STACK(3) + 0xF0);
    put(TCB(3) + 12, STACK(3) + 0xFF);
    assert_int_equal(spoor_threads_regions(&l, &memory, collect, NULL), 4);
    assert_int_equal(nregions, 8);
    assert_int_equal(regions[4].addr, STACK(0) + 0x80);
    assert_int_equal(regions[4].len, 0x80);
    assert_int_equal(regions[7].len, 0x10);
}

static void long_lists_are_bounded(void **state)
{
    (void)state;
    /* 100 TCBs on one pointer list: SPOOR_THREADS_MAX kept */
    spoor_threads_layout l = {0};
    l.lists[0] = (spoor_thread_list){SPOOR_THREAD_LIST_POINTER, 0x20000200u, 0, 0};
    l.list_count = 1;
    l.tcb_size = 16;
    put(0x20000200u, 0x20001000u);
    for (unsigned i = 0; i < 100; i++)
        put(0x20001000u + 16 * i, 0x20001000u + 16 * (i + 1));
    put(0x20001000u + 16 * 99, 0);
    assert_int_equal(spoor_threads_regions(&l, &memory, collect, NULL), SPOOR_THREADS_MAX);
}

static void threads_in_a_dump(void **state)
{
    (void)state;
    static uint32_t noinit[1024];
    spoor_crash_config config = {0};
    config.buffer = noinit;
    config.buffer_size = sizeof noinit;
    config.ram = ram_ranges;
    config.ram_count = 1;
    config.flash = flash_ranges;
    config.flash_count = 1;
    assert_true(spoor_crash_setup(&config, &memory));
    spoor_threads_layout l = freertos_layout();
    assert_true(spoor_crash_add_threads(&l));
    l.list_count = 0;
    assert_false(spoor_crash_add_threads(&l));
    spoor_capture c;
    memset(&c, 0, sizeof c);
    c.reason = SPOOR_REASON_FAULT;
    c.stack_start = STACK(2) + 0x80; /* the running task's window overlaps nothing */
    c.stack_len = 0x80;
    assert_true(spoor_crash_write(&c));
    uint32_t size = 0;
    const uint8_t *data = spoor_crash_data(&size);
    spoor_dump *d = spoor_dump_parse(data, size);
    if (!d)
        fail_msg("parse failed: %s", spoor_last_error());
    /* the stack window, 2 globals, 4 TCBs, 3 stacks (the reader sorts them by address) */
    assert_int_equal(d->region_count, 10);
    unsigned stacks = 0, tcb2 = 0;
    for (size_t i = 0; i < d->region_count; i++) {
        if (d->regions[i].kind == SPOOR_REGION_THREAD_STACK) {
            assert_int_equal(d->regions[i].length, 64);
            stacks++;
        }
        if (d->regions[i].address == TCB(2)) {
            assert_int_equal(d->regions[i].length, 64);
            assert_memory_equal(d->regions[i].bytes, ram + (TCB(2) - RAM_BASE), 64);
            tcb2++;
        }
    }
    assert_int_equal(stacks, 3);
    assert_int_equal(tcb2, 1);
    spoor_dump_free(d);
    /* a new setup forgets the layout */
    assert_true(spoor_crash_setup(&config, &memory));
    spoor_crash_take();
    assert_true(spoor_crash_write(&c));
    d = spoor_dump_parse(spoor_crash_data(&size), size);
    assert_non_null(d);
    assert_int_equal(d->region_count, 1);
    spoor_dump_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(freertos_lists, fresh),
        cmocka_unit_test_setup(window_without_top, fresh),
        cmocka_unit_test_setup(corrupted_links_end_the_list, fresh),
        cmocka_unit_test_setup(circular_pointer_list, fresh),
        cmocka_unit_test_setup(long_lists_are_bounded, fresh),
        cmocka_unit_test_setup(threads_in_a_dump, fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
