/* Target access as library calls, on the example firmware's ELFs and memory built here:
 * spoor_calls_read (the ring by its state symbol), spoor_mtb_read / spoor_mtb_from_dump /
 * spoor_mtb_freeze / spoor_mtb_thaw, the memory-only snapshot, spoor_dump_build_id_warning and
 * spoor_frame_symbolize / spoor_frame_function_offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spoor/calls_decode.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/error.h"
#include "spoor/memory.h"
#include "spoor/mtb_decode.h"
#include "spoor/snapshot.h"
#include "spoor/unwind.h"

#define CALLS_FW SPOOR_FIRMWARE_DIR "/examples/calls_trace-m3.elf"
#define HELLO_FW SPOOR_FIRMWARE_DIR "/examples/hello-m3.elf"

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* ---- spoor_calls_read ------------------------------------------------------------------ */

#define RING 0x20010000u

/* A memory view with the recorder's state at its symbol (ring at RING, 4 slots, 2 written:
 * main calls itself from main+4 and returns; the first layout: next an index) and, when
 * with_ring, the ring. */
static spoor_mem *calls_memory(const spoor_elf *elf, bool with_ring)
{
    uint32_t state_at, size, main_at, main_size;
    assert_true(spoor_elf_symbol(elf, SPOOR_CALLS_STATE_SYMBOL, &state_at, &size));
    assert_int_equal(size, SPOOR_CALLS_ST_LAST + 4); /* the host reads the first 24 bytes */
    assert_true(spoor_elf_symbol(elf, "main", &main_at, &main_size));
    uint8_t st[SPOOR_CALLS_STATE_SIZE] = {0};
    put32(st + SPOOR_CALLS_ST_MAGIC, SPOOR_CALLS_MAGIC);
    put32(st + SPOOR_CALLS_ST_FORMAT, SPOOR_CALLS_REC_SIZE);
    put32(st + SPOOR_CALLS_ST_RING, RING);
    put32(st + SPOOR_CALLS_ST_CAPACITY, 4);
    put32(st + SPOOR_CALLS_ST_NEXT, 2);
    put32(st + SPOOR_CALLS_ST_FLAGS, SPOOR_CALLS_FLAG_READY | SPOOR_CALLS_FLAG_ENABLED);
    uint8_t ring[4 * SPOOR_CALLS_REC_SIZE] = {0};
    put32(ring + 0, main_at | SPOOR_CALLS_KIND_ENTER);
    put32(ring + 4, (main_at + 4) | 1);
    put32(ring + 8, main_at);
    put32(ring + 12, (main_at + 4) | 1);
    spoor_mem *m = spoor_mem_new();
    assert_non_null(m);
    assert_true(spoor_mem_add_bytes(m, state_at, st, sizeof st, "state"));
    if (with_ring)
        assert_true(spoor_mem_add_bytes(m, RING, ring, sizeof ring, "ring"));
    return m;
}

static void calls_read_finds_and_decodes_the_ring(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CALLS_FW);
    assert_non_null(elf);
    uint32_t main_at, main_size;
    assert_true(spoor_elf_symbol(elf, "main", &main_at, &main_size));
    spoor_mem *m = calls_memory(elf, true);
    spoor_calls_info info;
    spoor_call_trace t;
    assert_true(spoor_calls_read(elf, spoor_mem_reader, m, "in", &info, &t));
    assert_int_equal(info.ring, RING);
    assert_int_equal(info.capacity, 4);
    assert_int_equal(t.count, 2);
    assert_int_equal(t.records[0].kind, SPOOR_CALL_ENTER);
    assert_int_equal(t.records[0].function, main_at);
    assert_int_equal(t.records[0].site, main_at + 4);
    assert_int_equal(t.records[1].kind, SPOOR_CALL_EXIT);
    spoor_call_trace_free(&t);
    spoor_mem_free(m);

    m = calls_memory(elf, false); /* the ring is not in the input */
    assert_false(spoor_calls_read(elf, spoor_mem_reader, m, "in", &info, &t));
    assert_string_equal(spoor_last_error(),
                        "in: the call ring (0x20010000+32) is not in the input");
    spoor_call_trace_free(&t);
    spoor_mem_free(m);

    m = spoor_mem_new(); /* nor is the state */
    assert_false(spoor_calls_read(elf, spoor_mem_reader, m, "in", &info, &t));
    assert_non_null(strstr(spoor_last_error(), "in: the call recorder's state (spoor_calls_state, "
                                               "0x"));
    assert_non_null(strstr(spoor_last_error(), "+24) is not in the input"));
    spoor_mem_free(m);
    spoor_elf_close(elf);

    elf = spoor_elf_open(HELLO_FW); /* no recorder linked */
    assert_non_null(elf);
    m = spoor_mem_new();
    assert_false(spoor_calls_read(elf, spoor_mem_reader, m, "in", &info, &t));
    assert_string_equal(spoor_last_error(),
                        HELLO_FW ": no call recorder (no symbol spoor_calls_state: link the "
                                 "target library and call spoor_calls_init)");
    spoor_mem_free(m);
    spoor_elf_close(elf);
}

/* ---- MTB ------------------------------------------------------------------------------- */

#define MTB_REGS 0x40000000u
#define MTB_BUF 0x20020000u

/* A register block at MTB_REGS (MASK 1: 32 bytes at MTB_BUF, POSITION 16) with master, and
 * the buffer when with_buffer. */
static spoor_mem *mtb_memory(uint32_t master, bool with_buffer, uint8_t buf[32])
{
    uint8_t regs[16];
    put32(regs + 0, 16);
    put32(regs + 4, master);
    put32(regs + 8, 0);
    put32(regs + 12, MTB_BUF);
    for (unsigned i = 0; i < 32; i++)
        buf[i] = (uint8_t)(i < 16 ? 0x10 + i : 0);
    spoor_mem *m = spoor_mem_new();
    assert_non_null(m);
    assert_true(spoor_mem_add_bytes(m, MTB_REGS, regs, sizeof regs, "regs"));
    if (with_buffer)
        assert_true(spoor_mem_add_bytes(m, MTB_BUF, buf, 32, "buffer"));
    return m;
}

static void mtb_read_takes_registers_and_buffer(void **state)
{
    (void)state;
    uint8_t buf[32];
    spoor_mem *m = mtb_memory(0x80000001u, true, buf);
    spoor_mtb_trace t;
    assert_true(spoor_mtb_read(m, MTB_REGS, NULL, "in", &t));
    assert_int_equal(t.regs.position, 16);
    assert_int_equal(t.regs.master, 0x80000001u);
    assert_int_equal(t.regs.base, MTB_BUF);
    assert_int_equal(t.layout.address, MTB_BUF);
    assert_int_equal(t.layout.size, 32);
    assert_memory_equal(t.bytes, buf, 32);
    spoor_mtb_trace_free(&t);

    /* frozen: MASTER as found before the stop, not as read after it */
    spoor_mtb_frozen frozen = {MTB_REGS + 4, 0x80000021u, true};
    assert_true(spoor_mtb_read(m, MTB_REGS, &frozen, "in", &t));
    assert_int_equal(t.regs.master, 0x80000021u);
    spoor_mtb_trace_free(&t);

    assert_false(spoor_mtb_read(m, MTB_REGS + 0x100, NULL, "in", &t));
    assert_string_equal(spoor_last_error(),
                        "in: cannot read the MTB registers at 0x40000100 (give them with --mem "
                        "0x40000100:FILE, or --mtb-regs ADDR for a block elsewhere)");
    spoor_mtb_trace_free(&t);
    spoor_mem_free(m);

    m = mtb_memory(0x80000001u, false, buf);
    assert_false(spoor_mtb_read(m, MTB_REGS, NULL, "in", &t));
    assert_string_equal(spoor_last_error(),
                        "in: cannot read the 32-byte trace buffer at 0x20020000 (MTB_BASE "
                        "0x20020000, MTB_POSITION 0x00000010; give it with --mem 0x20020000:FILE)");
    spoor_mtb_trace_free(&t);
    spoor_mem_free(m);
}

static void mtb_from_dump_checks_the_record(void **state)
{
    (void)state;
    uint8_t bytes[64] = {0};
    spoor_dump d = {0};
    spoor_mtb_trace t;
    assert_false(spoor_mtb_from_dump(&d, "x.dump", &t));
    assert_string_equal(spoor_last_error(), "x.dump: no MTB record in the dump (was "
                                            "spoor_crash_config.mtb_registers set?)");
    d.has_mtb = true;
    d.mtb_position = 16;
    d.mtb_master = 0x80000001u; /* 32 bytes at mtb_base */
    d.mtb_base = MTB_BUF;
    d.mtb_address = MTB_BUF - 16;
    d.mtb_bytes = bytes;
    d.mtb_len = sizeof bytes;
    assert_true(spoor_mtb_from_dump(&d, "x.dump", &t));
    assert_ptr_equal(t.bytes, bytes + 16);
    assert_int_equal(t.layout.size, 32);
    spoor_mtb_trace_free(&t);
    d.mtb_len = 40; /* the buffer runs past the record */
    assert_false(spoor_mtb_from_dump(&d, "x.dump", &t));
    assert_string_equal(spoor_last_error(),
                        "x.dump: the MTB registers place the 32-byte buffer at 0x20020000, the "
                        "dump's MTB record holds 0x2001fff0..0x20020018");
}

static void mtb_freeze_on_memory_that_cannot_be_written(void **state)
{
    (void)state;
    uint8_t buf[32];
    /* a running MTB: the stop is a write, and images take none; nothing was written */
    spoor_mem *m = mtb_memory(0x80000021u, true, buf);
    spoor_mtb_frozen frozen;
    assert_false(spoor_mtb_freeze(m, MTB_REGS, "in", &frozen));
    assert_non_null(strstr(spoor_last_error(), "in: --freeze: cannot stop the MTB: "));
    assert_false(frozen.written);
    assert_true(spoor_mtb_thaw(m, &frozen, "in")); /* nothing to restore */
    spoor_mem_free(m);
    /* a stopped MTB needs no write: MASTER as found */
    m = mtb_memory(0x00000001u, true, buf);
    assert_true(spoor_mtb_freeze(m, MTB_REGS, "in", &frozen));
    assert_false(frozen.written);
    assert_int_equal(frozen.master, 1);
    assert_int_equal(frozen.master_at, MTB_REGS + 4);
    assert_true(spoor_mtb_thaw(m, &frozen, "in"));
    /* a failed restore says the MTB stays stopped */
    frozen.written = true;
    frozen.master = 0x80000001u;
    assert_false(spoor_mtb_thaw(m, &frozen, "in"));
    assert_non_null(strstr(spoor_last_error(), "in: --freeze: cannot write MTB_MASTER 0x80000001 "
                                               "back, the MTB stays stopped: "));
    assert_false(spoor_mtb_freeze(m, MTB_REGS + 0x100, "in", &frozen));
    assert_non_null(strstr(spoor_last_error(), "in: --freeze: cannot read MTB_MASTER at "
                                               "0x40000104: "));
    spoor_mem_free(m);
}

/* ---- the memory-only snapshot ------------------------------------------------------------ */

static void memory_only_snapshot_needs_no_registers(void **state)
{
    (void)state;
    char path[] = "/tmp/spoor-access-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const uint8_t image[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(write(fd, image, sizeof image), sizeof image);
    close(fd);
    spoor_elf *elf = spoor_elf_open(CALLS_FW);
    assert_non_null(elf);
    spoor_raw_memory mem = {0x20030000u, path};
    spoor_snapshot_source src = {.mems = &mem, .nmems = 1};
    assert_null(spoor_snapshot_open(&src, elf));
    assert_string_equal(spoor_last_error(), "--mem: no registers (give --regs)");
    src.memory_only = true;
    spoor_snapshot *s = spoor_snapshot_open(&src, elf);
    assert_non_null(s);
    assert_true(s->memory_only);
    assert_string_equal(s->input, "--mem");
    assert_null(s->dump);
    assert_int_equal(s->regs.r[15], 0);
    assert_int_equal(s->fault.valid, 0);
    uint8_t got[8];
    assert_true(spoor_mem_read(s->mem, 0x20030000u, got, sizeof got)); /* the image */
    assert_memory_equal(got, image, sizeof image);
    uint32_t main_at, main_size, word, elf_word;
    assert_true(spoor_elf_symbol(elf, "main", &main_at, &main_size));
    assert_true(spoor_mem_read_u32(s->mem, main_at, &word)); /* and the ELF below it */
    const uint8_t *text;
    uint32_t text_at;
    size_t text_size;
    assert_true(spoor_elf_section(elf, ".text", &text_at, &text, &text_size));
    memcpy(&elf_word, text + (main_at - text_at), 4);
    assert_int_equal(word, elf_word);
    spoor_snapshot_close(s);
    spoor_elf_close(elf);
    unlink(path);
}

/* ---- the build-id check ------------------------------------------------------------------ */

static void build_id_warning_only_on_a_difference(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CALLS_FW);
    assert_non_null(elf);
    const uint8_t *id;
    size_t len;
    assert_true(spoor_elf_build_id(elf, &id, &len));
    assert_int_equal(len, 20);
    uint8_t other[20];
    memcpy(other, id, len);
    char buf[400], want[400], hex[41];
    spoor_dump d = {0};
    assert_null(spoor_dump_build_id_warning(NULL, elf, buf, sizeof buf)); /* live */
    assert_null(spoor_dump_build_id_warning(&d, elf, buf, sizeof buf));   /* no record */
    d.build_id = other;
    d.build_id_len = len;
    assert_null(spoor_dump_build_id_warning(&d, elf, buf, sizeof buf)); /* the same build */
    other[19] ^= 0xFF;
    assert_ptr_equal(spoor_dump_build_id_warning(&d, elf, buf, sizeof buf), buf);
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    snprintf(want, sizeof want,
             "build-id mismatch: the dump is from %.38s%02x, the ELF is %s; names and lines may "
             "be wrong",
             hex, other[19], hex);
    assert_string_equal(buf, want);
    d.build_id_len = 19; /* a shorter id differs too */
    assert_non_null(spoor_dump_build_id_warning(&d, elf, buf, sizeof buf));
    spoor_elf_close(elf);
}

/* ---- frame names ------------------------------------------------------------------------- */

static void frame_offsets_count_from_the_shown_pc(void **state)
{
    (void)state;
    spoor_elf *elf = spoor_elf_open(CALLS_FW);
    assert_non_null(elf);
    uint32_t main_at, main_size; /* the symbol table's, not DWARF's */
    assert_true(spoor_elf_symbol(elf, "main", &main_at, &main_size));
    spoor_location loc[16];
    /* a return address: named by the byte before it, the offset is the pc's */
    spoor_frame f = {.kind = SPOOR_FRAME_CALL, .pc = main_at + 8, .pc_is_return = true};
    size_t n = spoor_frame_symbolize(elf, &f, loc, 16);
    assert_true(n >= 1);
    assert_string_equal(loc[n - 1].function, "main");
    assert_int_equal(spoor_frame_function_offset(elf, &f, &loc[0]), 8);
    /* a return address after main's last instruction still belongs to main: offset = size */
    f.pc = main_at + main_size;
    n = spoor_frame_symbolize(elf, &f, loc, 16);
    assert_string_equal(loc[n - 1].function, "main");
    assert_int_equal(spoor_frame_function_offset(elf, &f, &loc[0]), main_size);
    /* frame 0: the pc itself */
    f = (spoor_frame){.kind = SPOOR_FRAME_CALL, .pc = main_at};
    n = spoor_frame_symbolize(elf, &f, loc, 16);
    assert_string_equal(loc[n - 1].function, "main");
    assert_int_equal(spoor_frame_function_offset(elf, &f, &loc[0]), 0);
    /* no function holds the address: the innermost location's offset */
    f.pc = 0xF0000000u;
    n = spoor_frame_symbolize(elf, &f, loc, 16);
    assert_int_equal(n, 1);
    assert_null(loc[0].function);
    loc[0].offset = 7;
    assert_int_equal(spoor_frame_function_offset(elf, &f, &loc[0]), 7);
    spoor_elf_close(elf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls_read_finds_and_decodes_the_ring),
        cmocka_unit_test(mtb_read_takes_registers_and_buffer),
        cmocka_unit_test(mtb_from_dump_checks_the_record),
        cmocka_unit_test(mtb_freeze_on_memory_that_cannot_be_written),
        cmocka_unit_test(memory_only_snapshot_needs_no_registers),
        cmocka_unit_test(build_id_warning_only_on_a_difference),
        cmocka_unit_test(frame_offsets_count_from_the_shown_pc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
