/* The target dump writer (built for the host) against the host dump reader: round trips,
 * the crash-loop policy, streaming, region clipping, and corrupt dumps rejected with the
 * right one-line message. Hand-made dumps are laid out from docs/dump-format.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/crash.h"
#include "spoor/dump.h"
#include "spoor/error.h"

/* Fake target: 4 KiB of RAM at 0x20000000, 1 KiB of flash at 0x08000000. */
#define RAM_BASE 0x20000000u
#define RAM_SIZE 4096u
#define FLASH_BASE 0x08000000u
#define FLASH_SIZE 1024u

static uint8_t ram[RAM_SIZE];
static uint8_t flash[FLASH_SIZE];
static uint32_t noinit[1024]; /* the .noinit dump buffer, 4 KiB */
static const spoor_range ram_ranges[] = {{RAM_BASE, RAM_BASE + RAM_SIZE}};
static const spoor_range flash_ranges[] = {{FLASH_BASE, FLASH_BASE + FLASH_SIZE}};
static unsigned reads;

static bool fake_read(void *ctx, uint32_t addr, void *dst, uint32_t len)
{
    (void)ctx;
    reads++;
    if (addr >= RAM_BASE && addr - RAM_BASE + (uint64_t)len <= RAM_SIZE) {
        memcpy(dst, ram + (addr - RAM_BASE), len);
        return true;
    }
    if (addr >= FLASH_BASE && addr - FLASH_BASE + (uint64_t)len <= FLASH_SIZE) {
        memcpy(dst, flash + (addr - FLASH_BASE), len);
        return true;
    }
    fail_msg("read outside the fake target at 0x%08x+%u", addr, len);
    return false;
}

static const spoor_memory memory = {fake_read, NULL, ram_ranges, 1, flash_ranges, 1};

static uint32_t buffer_in_use;

static uint32_t noinit_size_in_use(void)
{
    return buffer_in_use - SPOOR_CRASH_CONTROL_SIZE;
}

static void setup_writer(uint32_t buffer_size)
{
    buffer_in_use = buffer_size;
    spoor_crash_config config = {0};
    config.buffer = noinit;
    config.buffer_size = buffer_size;
    config.stack_window = 256;
    config.ram = ram_ranges;
    config.ram_count = 1;
    config.flash = flash_ranges;
    config.flash_count = 1;
    assert_true(spoor_crash_setup(&config, &memory));
}

static int fresh(void **state)
{
    (void)state;
    memset(noinit, 0xA5, sizeof noinit); /* power-on garbage */
    for (uint32_t i = 0; i < RAM_SIZE; i++)
        ram[i] = (uint8_t)(i * 7 + 1);
    for (uint32_t i = 0; i < FLASH_SIZE; i++)
        flash[i] = (uint8_t)(i ^ 0x5A);
    setup_writer(sizeof noinit);
    return 0;
}

static void fill_capture(spoor_capture *c)
{
    memset(c, 0, sizeof *c);
    for (uint32_t i = 0; i < SPOOR_REGS_WORDS; i++)
        c->regs[i] = 0x1000u + i;
    c->regs[SPOOR_REGS_FLAGS / 4] = SPOOR_REGS_FRAME_VALID | SPOOR_REGS_ON_PSP;
    c->regs[SPOOR_REGS_SP / 4] = RAM_BASE + 0x800;
    c->regs[SPOOR_REGS_PC / 4] = 0x08000123u;
    c->has_fault = true;
    c->fault[0] = SPOOR_FAULT_HAS_CFSR | SPOOR_FAULT_HAS_HFSR | SPOOR_FAULT_HAS_BFAR;
    c->fault[SPOOR_FAULT_CFSR / 4] = 0x00008200u; /* PRECISERR + BFARVALID */
    c->fault[SPOOR_FAULT_HFSR / 4] = 0x40000000u;
    c->fault[SPOOR_FAULT_BFAR / 4] = 0x30000000u;
    c->reason = SPOOR_REASON_FAULT;
    c->code = 5;
    c->stack_start = RAM_BASE + 0x7E0;
    c->stack_len = 256;
    static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                   7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
    c->build_id = id;
    c->build_id_len = sizeof id;
}

static spoor_dump *take_dump(void)
{
    uint32_t size = 0;
    const uint8_t *data = spoor_crash_data(&size);
    assert_non_null(data);
    spoor_dump *d = spoor_dump_parse(data, size);
    if (!d)
        fail_msg("parse failed: %s", spoor_last_error());
    return d;
}

static void round_trip(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)(RAM_BASE + 0x100), 64, SPOOR_REGION_DATA));
    assert_false(spoor_crash_valid());
    assert_true(spoor_crash_write(&c));
    assert_true(spoor_crash_valid());

    spoor_dump *d = take_dump();
    assert_int_equal(d->version, 1);
    assert_true(d->has_registers);
    assert_int_equal(d->regs.flags, SPOOR_REGS_FRAME_VALID | SPOOR_REGS_ON_PSP);
    for (int i = 0; i < 13; i++)
        assert_int_equal(d->regs.r[i], 0x1001u + (uint32_t)i);
    assert_int_equal(d->regs.r[13], RAM_BASE + 0x800);
    assert_int_equal(d->regs.r[15], 0x08000123u);
    assert_int_equal(d->regs.xpsr, 0x1000u + SPOOR_REGS_XPSR / 4);
    assert_int_equal(d->regs.fpscr, 0x1000u + SPOOR_REGS_FPSCR / 4);
    assert_int_equal(d->regs.s[15], 0x1000u + SPOOR_REGS_S0 / 4 + 15);
    assert_true(d->has_fault);
    assert_int_equal(d->fault.cfsr, 0x8200u);
    assert_int_equal(d->fault.bfar, 0x30000000u);
    assert_int_equal(d->fault.valid, 0x13u);
    assert_true(d->has_reason);
    assert_int_equal(d->reason, SPOOR_REASON_FAULT);
    assert_int_equal(d->reason_code, 5);
    assert_null(d->file);
    assert_int_equal(d->build_id_len, 20);
    assert_int_equal(d->build_id[0], 0xde);
    assert_int_equal(d->build_id[19], 16);

    /* stack window and the registered region, both readable through spoor_dump_read */
    assert_int_equal(d->region_count, 2);
    assert_int_equal(d->regions[0].address, RAM_BASE + 0x100);
    assert_int_equal(d->regions[0].kind, SPOOR_REGION_DATA);
    assert_int_equal(d->regions[1].address, RAM_BASE + 0x7E0);
    assert_int_equal(d->regions[1].length, 256);
    assert_int_equal(d->regions[1].kind, SPOOR_REGION_STACK);
    uint8_t buf[256];
    assert_true(spoor_dump_read(d, RAM_BASE + 0x7E0, buf, 256));
    assert_memory_equal(buf, ram + 0x7E0, 256);
    assert_true(spoor_dump_read(d, RAM_BASE + 0x13C, buf, 4));
    assert_memory_equal(buf, ram + 0x13C, 4);
    assert_false(spoor_dump_read(d, RAM_BASE + 0x13D, buf, 4)); /* runs off the region */
    assert_false(spoor_dump_read(d, RAM_BASE + 0x000, buf, 4));
    spoor_dump_free(d);
}

static void assert_reason_text(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    c.has_fault = false;
    c.reason = SPOOR_REASON_ASSERT;
    c.file = "src/motor.c";
    c.line = 42;
    c.message = "speed <= max";
    assert_true(spoor_crash_write(&c));
    spoor_dump *d = take_dump();
    assert_false(d->has_fault);
    assert_int_equal(d->reason, SPOOR_REASON_ASSERT);
    assert_string_equal(d->file, "src/motor.c");
    assert_int_equal(d->line, 42);
    assert_string_equal(d->message, "speed <= max");
    assert_string_equal(spoor_dump_reason_name(d->reason), "assert");
    spoor_dump_free(d);
}

/* The first crash of a loop is kept; later ones only count, until the dump is taken. */
static void crash_loop_keeps_first(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    c.code = 3;
    assert_true(spoor_crash_write(&c));
    c.code = 4;
    assert_false(spoor_crash_write(&c));
    assert_false(spoor_crash_write(&c));
    assert_int_equal(spoor_crash_dropped(), 2);

    /* a reset: the buffer survives, setup runs again */
    setup_writer(sizeof noinit);
    assert_true(spoor_crash_valid());
    assert_int_equal(spoor_crash_dropped(), 2);
    spoor_dump *d = take_dump();
    assert_int_equal(d->reason_code, 3);
    spoor_dump_free(d);

    spoor_crash_take();
    assert_false(spoor_crash_valid());
    assert_null(spoor_crash_data(NULL));
    assert_true(spoor_crash_write(&c));
    d = take_dump();
    assert_int_equal(d->reason_code, 4);
    spoor_dump_free(d);
}

/* A dump whose bytes changed in RAM across the reset is not offered. */
static void corrupted_buffer_is_not_valid(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    assert_true(spoor_crash_write(&c));
    ((uint8_t *)noinit)[SPOOR_CRASH_CONTROL_SIZE + 40] ^= 1;
    setup_writer(sizeof noinit);
    assert_false(spoor_crash_valid());
    assert_true(spoor_crash_write(&c)); /* and a new crash may be recorded */
}

typedef struct collected {
    uint8_t bytes[4096];
    uint32_t len;
    unsigned calls;
    unsigned stop_after;
} collected;

static bool collect(void *ctx, const uint8_t *bytes, uint32_t len)
{
    collected *c = ctx;
    assert_true(len <= 100);
    memcpy(c->bytes + c->len, bytes, len);
    c->len += len;
    c->calls++;
    return c->calls != c->stop_after;
}

static void streaming(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    collected out = {.stop_after = 0};
    assert_false(spoor_crash_stream(collect, &out, 100)); /* nothing to stream */
    assert_true(spoor_crash_write(&c));
    uint32_t size;
    const uint8_t *data = spoor_crash_data(&size);
    assert_true(spoor_crash_stream(collect, &out, 100));
    assert_int_equal(out.len, size);
    assert_int_equal(out.calls, (size + 99) / 100);
    assert_memory_equal(out.bytes, data, size);

    collected partial = {.stop_after = 2};
    assert_false(spoor_crash_stream(collect, &partial, 100));
    assert_int_equal(partial.calls, 2);
}

/* Regions overlapping the stack window or each other are clipped, never duplicated;
 * regions outside RAM/flash are skipped without being read. */
static void regions_are_clipped_and_checked(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    c.stack_start = RAM_BASE + 0x400;
    c.stack_len = 0x100;
    /* covers the whole stack window and more on both sides */
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)(RAM_BASE + 0x3C0), 0x200, SPOOR_REGION_RTOS));
    /* inside the previous one: adds nothing */
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)(RAM_BASE + 0x450), 0x10, SPOOR_REGION_DATA));
    /* unmapped and half-mapped: skipped */
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)0x40000000u, 0x10, SPOOR_REGION_PERIPHERAL));
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)(RAM_BASE + RAM_SIZE - 8), 16, SPOOR_REGION_DATA));
    /* flash is readable too */
    assert_true(
        spoor_dump_add_region((void *)(uintptr_t)(FLASH_BASE + 0x10), 0x20, SPOOR_REGION_OTHER));
    assert_true(spoor_crash_write(&c));

    spoor_dump *d = take_dump();
    assert_int_equal(d->region_count, 4);
    assert_int_equal(d->regions[0].address, FLASH_BASE + 0x10);
    assert_int_equal(d->regions[1].address, RAM_BASE + 0x3C0);
    assert_int_equal(d->regions[1].length, 0x40);
    assert_true(d->regions[1].truncated);
    assert_int_equal(d->regions[2].address, RAM_BASE + 0x400);
    assert_int_equal(d->regions[2].kind, SPOOR_REGION_STACK);
    assert_int_equal(d->regions[3].address, RAM_BASE + 0x500);
    assert_int_equal(d->regions[3].length, 0xC0);
    uint8_t buf[0x200];
    assert_true(spoor_dump_read(d, RAM_BASE + 0x3C0, buf, sizeof buf)); /* across 3 records */
    assert_memory_equal(buf, ram + 0x3C0, sizeof buf);
    spoor_dump_free(d);
}

/* A buffer too small for the stack window truncates it and says so. */
static void small_buffer_truncates(void **state)
{
    (void)state;
    setup_writer(512);
    spoor_capture c;
    fill_capture(&c);
    c.stack_len = 1024;
    assert_true(spoor_crash_write(&c));
    uint32_t size;
    assert_non_null(spoor_crash_data(&size));
    assert_true(size <= 512 - SPOOR_CRASH_CONTROL_SIZE);
    spoor_dump *d = take_dump();
    assert_int_equal(d->region_count, 1);
    assert_true(d->regions[0].truncated);
    assert_true(d->regions[0].length < 1024);
    assert_true(d->has_registers);
    spoor_dump_free(d);
}

/* The smallest buffer still holds registers and fault registers; long texts are cut (the
 * end of the file name is kept) and the reason record says so. */
static void smallest_buffer_keeps_registers(void **state)
{
    (void)state;
    setup_writer(SPOOR_CRASH_CONTROL_SIZE + 16 + 4 * 8 + 16 + 164 + 36);
    spoor_capture c;
    fill_capture(&c);
    c.file = "a/very/long/path/to/some/deeply/nested/source/file/that/goes/on/motor.c";
    c.message = "a message that is also quite long, longer than the room that is left";
    assert_true(spoor_crash_write(&c));
    spoor_dump *d = take_dump();
    assert_true(d->has_registers);
    assert_int_equal(d->regs.r[15], 0x08000123u);
    assert_true(d->has_fault);
    assert_true(d->has_reason);
    assert_null(d->file); /* no room left for texts at all */
    assert_int_equal(d->region_count, 0);
    spoor_dump_free(d);
    spoor_crash_take();

    setup_writer(SPOOR_CRASH_CONTROL_SIZE + 16 + 4 * 8 + 16 + 164 + 36 + 24);
    assert_true(spoor_crash_write(&c));
    d = take_dump();
    assert_non_null(d->file);
    assert_int_equal(strlen(d->file) + strlen(d->message), 24);
    assert_string_equal(d->file, c.file + strlen(c.file) - strlen(d->file));
    assert_memory_equal(d->message, c.message, strlen(d->message));
    spoor_dump_free(d);

    spoor_crash_config config = {0};
    config.buffer = noinit;
    config.buffer_size = SPOOR_CRASH_CONTROL_SIZE + 16 + 4 * 8 + 16 + 164 + 36 - 4;
    assert_false(spoor_crash_setup(&config, &memory));
    assert_false(spoor_crash_write(&c));
}

/* Many random region sets: the dump always parses (no overlapping records), and every byte
 * it claims to hold equals the fake RAM; every registered byte fits or a record says
 * TRUNCATED or the region was partly outside RAM. */
static void random_regions_round_trip(void **state)
{
    (void)state;
    uint32_t seed = 12345;
#define NEXT() (seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xFFFFu)
    for (int round = 0; round < 300; round++) {
        memset(noinit, 0xA5, sizeof noinit);
        setup_writer(512 + (NEXT() % 3584u));
        spoor_capture c;
        fill_capture(&c);
        c.stack_start = RAM_BASE + (NEXT() % RAM_SIZE);
        c.stack_len = NEXT() % 600u;
        if (c.stack_start + c.stack_len > RAM_BASE + RAM_SIZE)
            c.stack_len = RAM_BASE + RAM_SIZE - c.stack_start;
        c.other_stack_start = RAM_BASE + (NEXT() % RAM_SIZE);
        c.other_stack_len = NEXT() % 300u;
        if (c.other_stack_start + c.other_stack_len > RAM_BASE + RAM_SIZE)
            c.other_stack_len = RAM_BASE + RAM_SIZE - c.other_stack_start;
        unsigned regions = NEXT() % (SPOOR_CRASH_MAX_REGIONS + 1);
        for (unsigned i = 0; i < regions; i++) {
            uint32_t addr = RAM_BASE - 64u + (NEXT() % (RAM_SIZE + 128u));
            assert_true(spoor_dump_add_region((void *)(uintptr_t)addr, 1u + NEXT() % 700u,
                                              SPOOR_REGION_DATA));
        }
        assert_true(spoor_crash_write(&c));
        spoor_dump *d = take_dump();
        uint32_t size;
        assert_non_null(spoor_crash_data(&size));
        assert_true(size <= noinit_size_in_use());
        for (size_t i = 0; i < d->region_count; i++) {
            const spoor_dump_region *r = &d->regions[i];
            assert_true(r->address >= RAM_BASE);
            assert_true(r->address + r->length <= RAM_BASE + RAM_SIZE);
            assert_memory_equal(r->bytes, ram + (r->address - RAM_BASE), r->length);
        }
        spoor_dump_free(d);
    }
#undef NEXT
}

/* ---- hand-made dumps ---------------------------------------------------------------- */

typedef struct image {
    uint8_t b[1024];
    uint32_t len;
} image;

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void start_image(image *im)
{
    memset(im, 0, sizeof *im);
    put32(im->b, 0x4D445053u); /* "SPDM" */
    im->b[4] = 1;              /* version 1 */
    im->b[6] = 16;             /* header size */
    im->len = 16;
}

static void add_record(image *im, uint16_t type, const void *payload, uint32_t len)
{
    im->b[im->len] = (uint8_t)type;
    im->b[im->len + 1] = (uint8_t)(type >> 8);
    put32(im->b + im->len + 4, len);
    if (len)
        memcpy(im->b + im->len + 8, payload, len);
    im->len += 8 + ((len + 3) & ~3u);
}

static void add_memory(image *im, uint32_t addr, uint32_t n)
{
    uint8_t p[128] = {0};
    put32(p, addr);
    add_record(im, 3, p, 8 + n);
}

/* Appends the end record, then sets total size and CRC (zlib CRC-32 over all but the CRC). */
static void seal(image *im)
{
    add_record(im, 0, NULL, 0);
    put32(im->b + 8, im->len);
    uint32_t crc = spoor_crc32(spoor_crc32(0, im->b, 12), im->b + 16, im->len - 16);
    put32(im->b + 12, crc);
}

static void expect_error(const image *im, uint32_t len, const char *message)
{
    spoor_dump *d = spoor_dump_parse(im->b, len);
    assert_null(d);
    assert_string_equal(spoor_last_error(), message);
}

static void minimal_dump_parses(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    seal(&im);
    spoor_dump *d = spoor_dump_parse(im.b, im.len);
    assert_non_null(d);
    assert_false(d->has_registers);
    assert_int_equal(d->region_count, 0);
    spoor_dump_free(d);
}

static void unknown_records_are_skipped(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    uint8_t odd[5] = {1, 2, 3, 4, 5};
    add_record(&im, 0x7777, odd, sizeof odd); /* padded to 8 */
    add_memory(&im, 0x20000000u, 4);
    add_record(&im, 0x0100, odd, 0);
    seal(&im);
    spoor_dump *d = spoor_dump_parse(im.b, im.len);
    if (!d)
        fail_msg("%s", spoor_last_error());
    assert_int_equal(d->skipped_records, 2);
    assert_int_equal(d->region_count, 1);
    spoor_dump_free(d);
}

static void bad_crc(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    add_memory(&im, 0x20000000u, 8);
    seal(&im);
    uint32_t stored = (uint32_t)im.b[12] | (uint32_t)im.b[13] << 8 | (uint32_t)im.b[14] << 16 |
                      (uint32_t)im.b[15] << 24;
    im.b[30] ^= 0x01; /* one bit of memory contents */
    uint32_t computed = spoor_crc32(spoor_crc32(0, im.b, 12), im.b + 16, im.len - 16);
    char want[96];
    snprintf(want, sizeof want, "dump: bad CRC (stored 0x%08x, computed 0x%08x)", stored, computed);
    expect_error(&im, im.len, want);
}

static void truncated(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    add_memory(&im, 0x20000000u, 32);
    seal(&im); /* 16 + 48 + 8 = 72 bytes */
    assert_int_equal(im.len, 72);
    expect_error(&im, 50, "dump: truncated at byte 50 of 72");
    expect_error(&im, 10, "dump: truncated at byte 10 of 16");
}

static void wrong_version(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    seal(&im);
    im.b[4] = 2;
    expect_error(&im, im.len, "dump: unsupported version 2 (this spoor reads version 1)");
}

static void overlapping_regions(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    add_memory(&im, 0x20000080u, 16);
    add_memory(&im, 0x20000000u, 0x20); /* fine: ends at 0x20 */
    add_memory(&im, 0x20000010u, 0x40); /* overlaps the previous one */
    seal(&im);
    expect_error(&im, im.len, "dump: memory regions 0x20000000+32 and 0x20000010+64 overlap");
}

static void not_a_dump(void **state)
{
    (void)state;
    image im;
    memset(&im, 0, sizeof im);
    memcpy(im.b,
           "\x7f"
           "ELF",
           4);
    expect_error(&im, 64, "dump: not a spoor crash dump (bad magic)");
    expect_error(&im, 0, "dump: not a spoor crash dump (bad magic, file shorter than 4 bytes)");
}

static void record_past_end_and_missing_end(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    add_memory(&im, 0x20000000u, 4);
    /* claim the record is longer than the dump */
    put32(im.b + 16 + 4, 500);
    add_record(&im, 0, NULL, 0);
    put32(im.b + 8, im.len);
    put32(im.b + 12, spoor_crc32(spoor_crc32(0, im.b, 12), im.b + 16, im.len - 16));
    expect_error(&im, im.len,
                 "dump: record at byte 16 (type 3, 500 bytes) runs past the end of the dump at "
                 "byte 44");

    start_image(&im);
    add_memory(&im, 0x20000000u, 4);
    put32(im.b + 8, im.len);
    put32(im.b + 12, spoor_crc32(spoor_crc32(0, im.b, 12), im.b + 16, im.len - 16));
    expect_error(&im, im.len, "dump: no end record (records run to byte 36 of 36)");
}

static void short_registers_record(void **state)
{
    (void)state;
    image im;
    start_image(&im);
    uint8_t regs[64] = {0};
    add_record(&im, 1, regs, sizeof regs);
    seal(&im);
    expect_error(&im, im.len, "dump: registers record at byte 16 too short (64 bytes, need 164)");
}

/* A dump file on disk, and the missing-file message. */
static void load_file(void **state)
{
    (void)state;
    spoor_capture c;
    fill_capture(&c);
    assert_true(spoor_crash_write(&c));
    uint32_t size;
    const uint8_t *data = spoor_crash_data(&size);
    char path[] = SPOOR_BUILD_DIR "/test_dump_writer.bin";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
    spoor_dump *d = spoor_dump_load(path);
    assert_non_null(d);
    assert_int_equal(d->regs.r[15], 0x08000123u);
    spoor_dump_free(d);
    remove(path);
    assert_null(spoor_dump_load(SPOOR_BUILD_DIR "/no-such-dump.bin"));
    assert_string_equal(spoor_last_error(), SPOOR_BUILD_DIR
                        "/no-such-dump.bin: cannot open: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(round_trip, fresh),
        cmocka_unit_test_setup(assert_reason_text, fresh),
        cmocka_unit_test_setup(crash_loop_keeps_first, fresh),
        cmocka_unit_test_setup(corrupted_buffer_is_not_valid, fresh),
        cmocka_unit_test_setup(streaming, fresh),
        cmocka_unit_test_setup(regions_are_clipped_and_checked, fresh),
        cmocka_unit_test_setup(small_buffer_truncates, fresh),
        cmocka_unit_test_setup(smallest_buffer_keeps_registers, fresh),
        cmocka_unit_test_setup(random_regions_round_trip, fresh),
        cmocka_unit_test_setup(load_file, fresh),
        cmocka_unit_test(minimal_dump_parses),
        cmocka_unit_test(unknown_records_are_skipped),
        cmocka_unit_test(bad_crc),
        cmocka_unit_test(truncated),
        cmocka_unit_test(wrong_version),
        cmocka_unit_test(overlapping_regions),
        cmocka_unit_test(not_a_dump),
        cmocka_unit_test(record_past_end_and_missing_end),
        cmocka_unit_test(short_registers_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
