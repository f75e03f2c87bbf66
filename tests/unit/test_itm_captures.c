/* The ITM decoder against real captures (../shared/testdata/itm, see its README):
 * - Blinky+Arm.SWO.raw against the reference decode Blinky+Arm.SWO.csv by Arm's ctrace
 *   (OpenCSD): every data-trace event with the same comparator, value and PC, the same
 *   cycles up to the reference's first error row; the loss at offset 8192 reported as an
 *   error and its bogus PC 0xb8aa47aa not emitted; the truncated last packet reported.
 * - rust-itm/itm.bin: its exception packets, hand-decoded from the bytes below with the
 *   ARMv7-M ARM D4 'Exception trace packet' layout, and its synchronization packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/itm_decoder.h"

#define DIR SPOOR_SHARED_DIR "/testdata/itm/"

static size_t read_file(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

#define MAXP 8192
static spoor_itm_packet P[MAXP];
static size_t NP;

static void decode_file(const char *path)
{
    static uint8_t buf[1 << 16];
    size_t n = read_file(path, buf, sizeof buf);
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    NP = 0;
    size_t done = 0;
    /* odd-sized pieces, so packets straddle feed calls */
    while (done < n) {
        size_t chunk = n - done < 777 ? n - done : 777;
        done += spoor_itm_feed(&d, buf + done, chunk);
        while (NP < MAXP && spoor_itm_next(&d, &P[NP]))
            NP++;
    }
    spoor_itm_finish(&d);
    while (NP < MAXP && spoor_itm_next(&d, &P[NP]))
        NP++;
    assert_true(NP < MAXP);
}

struct dwt_row {
    uint64_t cycles;
    unsigned comparator;
    uint32_t value, pc;
};

static void test_blinky_swo_against_ctrace(void **state)
{
    (void)state;
    /* The reference rows. A dwt row without a value is the reference's own bogus decode
     * of the lost bytes (PC 0xb8aa47aa), which spoor must not reproduce. */
    static struct dwt_row ref[1024];
    size_t nref = 0, first_error_row = SIZE_MAX;
    FILE *f = fopen(DIR "cmsis-ctrace-blinky/Blinky+Arm.SWO.csv", "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char *fields[8] = {0};
        char *p = line;
        for (int i = 0; i < 8 && p; i++) {
            fields[i] = p;
            p = strchr(p, ',');
            if (p)
                *p++ = '\0';
        }
        assert_non_null(fields[2]);
        if (!strcmp(fields[2], "error")) {
            if (first_error_row == SIZE_MAX)
                first_error_row = nref;
            continue;
        }
        assert_string_equal(fields[2], "dwt");
        if (!*fields[4]) {
            assert_int_equal(strtoul(fields[5], NULL, 16), 0xb8aa47aa);
            continue;
        }
        assert_true(nref < 1024);
        ref[nref].cycles = strtoull(fields[0], NULL, 10);
        ref[nref].comparator = (unsigned)strtoul(fields[3], NULL, 10);
        ref[nref].value = (uint32_t)strtoul(fields[4], NULL, 16);
        ref[nref].pc = (uint32_t)strtoul(fields[5], NULL, 16);
        nref++;
    }
    fclose(f);
    assert_int_equal(nref, 527);
    assert_int_equal(first_error_row, 391);

    decode_file(DIR "cmsis-ctrace-blinky/Blinky+Arm.SWO.raw");

    /* spoor's events: a data value with the PC value packet of the same comparator that
     * precedes it (the pair ctrace prints as one row). The events before the capture's
     * first sync are not in the reference (ctrace waits for a sync); spoor reports those
     * bytes as an error because the capture starts with a reserved header (0x1f). */
    static struct dwt_row got[1024];
    size_t ngot = 0;
    bool have_pc = false, seen_sync = false;
    uint32_t pc = 0;
    unsigned pc_cmp = 0;
    bool loss_reported = false, truncation_reported = false;
    for (size_t i = 0; i < NP; i++) {
        const spoor_itm_packet *p = &P[i];
        switch (p->type) {
        case SPOOR_ITM_SYNC: seen_sync = true; break;
        case SPOOR_ITM_DWT_PC:
            assert_int_not_equal(p->u.dwt_pc.pc, 0xb8aa47aa);
            have_pc = true;
            pc = p->u.dwt_pc.pc;
            pc_cmp = p->u.dwt_pc.comparator;
            break;
        case SPOOR_ITM_DWT_DATA:
            if (!seen_sync)
                break;
            assert_true(have_pc);
            assert_int_equal(pc_cmp, p->u.dwt_data.comparator);
            assert_true(p->u.dwt_data.write);
            assert_true(ngot < 1024);
            got[ngot].cycles = p->time;
            got[ngot].comparator = p->u.dwt_data.comparator;
            got[ngot].value = p->u.dwt_data.value;
            got[ngot].pc = pc;
            ngot++;
            have_pc = false;
            break;
        case SPOOR_ITM_ERROR:
            if (p->offset <= 8192 && p->offset + p->u.error.bytes_lost > 8195)
                loss_reported = true;
            if (p->u.error.why == SPOOR_ITM_ERR_TRUNCATED &&
                p->offset + p->u.error.bytes_lost == 12288)
                truncation_reported = true;
            have_pc = false;
            break;
        default: break;
        }
    }
    assert_true(loss_reported);
    assert_true(truncation_reported);
    assert_int_equal(ngot, nref);
    for (size_t i = 0; i < nref; i++) {
        assert_int_equal(got[i].comparator, ref[i].comparator);
        assert_int_equal(got[i].value, ref[i].value);
        assert_int_equal(got[i].pc, ref[i].pc);
        if (i < first_error_row)
            assert_int_equal(got[i].cycles, ref[i].cycles);
    }
}

static void test_rust_itm_exceptions(void **state)
{
    (void)state;
    static uint8_t raw[256];
    size_t n = read_file(DIR "rust-itm/itm.bin", raw, sizeof raw);
    assert_int_equal(n, 139);
    /* Expected, from the bytes by hand (0x0E, number[7:0], FN<<4 | number[8]):
     * 0e 16 10, 0e 18 10, 0e 18 20, 0e 17 10, 0e 17 20, 0e 16 30, 0e 00 10, 0e 00 10 */
    static const struct {
        uint16_t number;
        spoor_itm_exception_action action;
    } want[] = {
        {22, SPOOR_ITM_EXC_ENTER}, {24, SPOOR_ITM_EXC_ENTER}, {24, SPOOR_ITM_EXC_EXIT},
        {23, SPOOR_ITM_EXC_ENTER}, {23, SPOOR_ITM_EXC_EXIT},  {22, SPOOR_ITM_EXC_RETURN},
        {0, SPOOR_ITM_EXC_ENTER},  {0, SPOOR_ITM_EXC_ENTER},
    };
    /* Synchronization packets: runs of >= 5 zero bytes ending in 0x80, counted directly. */
    size_t syncs = 0, zeros = 0;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == 0x80 && zeros >= 5)
            syncs++;
        zeros = raw[i] == 0 ? zeros + 1 : 0;
    }
    decode_file(DIR "rust-itm/itm.bin");
    size_t k = 0, got_syncs = 0, lts1 = 0, lts2 = 0;
    for (size_t i = 0; i < NP; i++) {
        assert_int_not_equal(P[i].type, SPOOR_ITM_ERROR);
        if (P[i].type == SPOOR_ITM_SYNC)
            got_syncs++;
        if (P[i].type == SPOOR_ITM_TS_LOCAL)
            *(P[i].size == 1 ? &lts2 : &lts1) += 1;
        if (P[i].type != SPOOR_ITM_EXCEPTION)
            continue;
        assert_true(k < sizeof want / sizeof want[0]);
        assert_int_equal(P[i].u.exception.number, want[k].number);
        assert_int_equal(P[i].u.exception.action, want[k].action);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof want[0]);
    assert_int_equal(got_syncs, syncs);
    assert_true(lts1 > 0 && lts2 > 0);
    /* first timestamp: 0xC0 0xDB 0x0C = 0x5B + (0x0C << 7) cycles, dating the first packet */
    assert_int_equal(P[0].time, 0x5B + (0x0C << 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blinky_swo_against_ctrace),
        cmocka_unit_test(test_rust_itm_exceptions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
