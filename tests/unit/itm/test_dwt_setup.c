/* spoor_dwt_plan_apply() (spoor/dwt_setup.h): the plan of spoor_itm_watch_plan() written
 * through a memory view whose live layer is a register file here (the live-layer plumbing of
 * src/lib/snapshot/memory_internal.h, as the GDB and OpenOCD layers use it). The register file
 * behaves as the core does where the set-up depends on it: the DWT reads as zero until
 * DEMCR.TRCENA is set, DWT_CTRL.NUMCOMP is bits 31:28. Checked: every write in the plan's
 * order, the masked writes keeping the other bits, DWT_CTRL read before any comparator
 * register is written and a missing comparator refused, which write failed when the target
 * refuses one, a static layer in front (memory from bytes) refusing the first write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/set_error.h"
#include "snapshot/memory_internal.h"
#include "spoor/dwt_setup.h"
#include "spoor/itm_watch.h"

#define NREGS 32
#define MAXLOG 64

/* The target's registers and what was done to them. */
struct regfile {
    uint32_t addr[NREGS], value[NREGS];
    size_t n;
    uint32_t numcomp_ctrl; /* what DWT_CTRL holds besides the bits written (NUMCOMP) */
    uint32_t refuse;       /* a write to this address fails (0: none) */
    uint32_t unreadable;   /* a read of this address fails (0: none) */
    uint32_t writes[MAXLOG], written[MAXLOG], reads[MAXLOG];
    size_t nwrites, nreads;
};

static struct regfile R;

static uint32_t *reg(struct regfile *r, uint32_t addr)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->addr[i] == addr)
            return &r->value[i];
    assert_true(r->n < NREGS);
    r->addr[r->n] = addr;
    r->value[r->n] = 0;
    return &r->value[r->n++];
}

static bool trace_on(struct regfile *r)
{
    return *reg(r, SPOOR_DEMCR) >> 24 & 1;
}

static bool rf_read(void *impl, uint32_t addr, void *buf, size_t len)
{
    struct regfile *r = impl;
    assert_int_equal(len, 4);
    assert_int_equal(addr & 3, 0);
    if (addr == r->unreadable) {
        spoor_set_error(SPOOR_ERR_IO, "regfile: read of 0x%08x failed", addr);
        return false;
    }
    uint32_t v = *reg(r, addr);
    if (addr == SPOOR_DWT_CTRL) /* the DWT reads as zero without trace on */
        v = trace_on(r) ? (v & 0x0FFFFFFFu) | r->numcomp_ctrl : 0;
    r->reads[r->nreads++] = addr;
    memcpy(buf, &v, 4);
    return true;
}

static bool rf_write(void *impl, uint32_t addr, const void *buf, size_t len)
{
    struct regfile *r = impl;
    assert_int_equal(len, 4);
    if (addr == r->refuse) {
        spoor_set_error(SPOOR_ERR_PROTOCOL, "regfile: write to 0x%08x refused", addr);
        return false;
    }
    uint32_t v;
    memcpy(&v, buf, 4);
    *reg(r, addr) = v;
    r->writes[r->nwrites] = addr;
    r->written[r->nwrites++] = v;
    return true;
}

static void rf_free(void *impl)
{
    (void)impl;
}

static const mem_live_ops RF_OPS = {rf_read, rf_write, NULL, NULL, rf_free};

/* A view with the register file as its live layer; DEMCR, ITM_TCR and DWT_CTRL hold bits the
 * plan must keep. */
static spoor_mem *view(uint32_t numcomp)
{
    memset(&R, 0, sizeof R);
    R.numcomp_ctrl = numcomp << 28;
    *reg(&R, SPOOR_DEMCR) = 0x00000401;    /* VC_CORERESET, VC_HARDERR */
    *reg(&R, SPOOR_ITM_TCR) = 0x00800300;  /* BUSY, TSPrescale 0b11 */
    *reg(&R, SPOOR_DWT_CTRL) = 0x00001000; /* POSTPRESET */
    *reg(&R, SPOOR_DWT_FUNCTION(1)) = 0x2; /* in use for something else */
    spoor_mem *m = spoor_mem_new();
    assert_non_null(m);
    assert_true(spoor_mem_add_live(m, &RF_OPS, &R));
    return m;
}

static size_t plan(spoor_dwt_arch arch, unsigned comparator, spoor_reg_write *w)
{
    size_t n = spoor_itm_watch_plan(0x20001248, comparator, arch, 0, w);
    assert_true(n > 5);
    return n;
}

static void test_every_write(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 1, w);
    spoor_mem *m = view(4);
    spoor_dwt_apply_result r;
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_OK);
    assert_int_equal(r.written, n);
    assert_int_equal(r.dwt_ctrl, 0x40001000);
    /* one write per step of the plan, in its order */
    assert_int_equal(R.nwrites, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(R.writes[i], w[i].addr);
    /* DEMCR first, then DWT_CTRL read (NUMCOMP), before any comparator register */
    assert_int_equal(R.reads[0], SPOOR_DEMCR);
    assert_int_equal(R.reads[1], SPOOR_DWT_CTRL);
    /* masked writes keep the other bits */
    assert_int_equal(*reg(&R, SPOOR_DEMCR), 0x01000401);
    assert_int_equal(*reg(&R, SPOOR_ITM_TCR), 0x0081000F); /* TraceBusID 1, prescale 0, BUSY */
    assert_int_equal(*reg(&R, SPOOR_DWT_CTRL) & 0x0FFFFFFFu, 0x00001401);
    assert_int_equal(*reg(&R, SPOOR_ITM_LAR), SPOOR_CORESIGHT_UNLOCK);
    assert_int_equal(*reg(&R, SPOOR_DWT_LAR), SPOOR_CORESIGHT_UNLOCK);
    assert_int_equal(*reg(&R, SPOOR_DWT_COMP(1)), 0x20001248);
    assert_int_equal(*reg(&R, SPOOR_DWT_MASK(1)), 0);
    assert_int_equal(*reg(&R, SPOOR_DWT_FUNCTION(1)), 0x80D);
    spoor_mem_free(m);

    n = plan(SPOOR_DWT_ARMV8M, 3, w);
    m = view(4);
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 3, &r), SPOOR_DWT_APPLY_OK);
    assert_int_equal(*reg(&R, SPOOR_DWT_COMP(3)), 0x20001248);
    assert_int_equal(*reg(&R, SPOOR_DWT_FUNCTION(3)), 0x82D);
    spoor_mem_free(m);
}

/* NUMCOMP 1 has no comparator 1, and a DWT that reads as zero (QEMU) none at all: refused
 * after DEMCR, nothing else written. */
static void test_no_comparator(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 1, w);
    static const struct {
        unsigned numcomp;
        const char *text;
    } cases[] = {
        {1, "DWT_CTRL 0x10001000: the core has 1 comparators, no comparator 1"},
        {0, "DWT_CTRL 0x00001000: the core has 0 comparators, no comparator 1"},
    };
    for (size_t i = 0; i < 2; i++) {
        spoor_mem *m = view(cases[i].numcomp);
        spoor_dwt_apply_result r;
        assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_NO_COMPARATOR);
        assert_int_equal(r.written, 1);
        assert_int_equal(R.nwrites, 1);
        assert_int_equal(R.writes[0], SPOOR_DEMCR);
        assert_string_equal(spoor_last_error(), cases[i].text);
        spoor_mem_free(m);
    }
    spoor_mem *m = view(4); /* comparator 3 of 4 is there */
    n = plan(SPOOR_DWT_ARMV7M, 3, w);
    spoor_dwt_apply_result r;
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 3, &r), SPOOR_DWT_APPLY_OK);
    spoor_mem_free(m);
}

/* The target refuses a write: which one, the target's message, nothing written after it. */
static void test_write_refused(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 2, w);
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && w[k].addr == w[k - 1].addr)
            continue; /* the same register twice: the first write fails */
        size_t first = k;
        for (size_t j = 0; j < k; j++)
            if (w[j].addr == w[k].addr) /* FUNCTION2: off first, then set */
                first = j;
        spoor_mem *m = view(4);
        R.refuse = w[k].addr;
        spoor_dwt_apply_result r;
        assert_int_equal(spoor_dwt_plan_apply(m, w, n, 2, &r), SPOOR_DWT_APPLY_WRITE_FAILED);
        assert_int_equal(r.written, first);
        assert_int_equal(R.nwrites, first);
        assert_non_null(strstr(spoor_last_error(), "refused"));
        spoor_mem_free(m);
    }
}

/* DWT_CTRL cannot be read, or a masked register's read fails. */
static void test_read_fails(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 1, w);
    spoor_mem *m = view(4);
    R.unreadable = SPOOR_DWT_CTRL;
    spoor_dwt_apply_result r;
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_CTRL_FAILED);
    assert_int_equal(r.written, 1);
    assert_string_equal(spoor_last_error(), "regfile: read of 0xe0001000 failed");
    spoor_mem_free(m);

    m = view(4);
    R.unreadable = SPOOR_ITM_TCR; /* write 3 is read-modify-write */
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_WRITE_FAILED);
    assert_int_equal(r.written, 3);
    assert_int_equal(R.nwrites, 3);
    spoor_mem_free(m);
}

/* Memory from bytes: the view writes to a live target only. With DEMCR in an image in front of
 * the live layer the first write is refused; with no live layer at all too. */
static void test_static_layers(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 1, w);
    static const uint8_t demcr[4] = {0x01, 0x04, 0, 0};
    spoor_mem *m = spoor_mem_new();
    assert_true(spoor_mem_add_bytes(m, SPOOR_DEMCR, demcr, 4, "regs.bin"));
    memset(&R, 0, sizeof R);
    R.numcomp_ctrl = 4u << 28;
    assert_true(spoor_mem_add_live(m, &RF_OPS, &R));
    spoor_dwt_apply_result r;
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_WRITE_FAILED);
    assert_int_equal(r.written, 0);
    assert_non_null(strstr(spoor_last_error(), "held by regs.bin"));
    assert_int_equal(R.nwrites, 0);
    spoor_mem_free(m);

    m = spoor_mem_new(); /* bytes only */
    assert_true(spoor_mem_add_bytes(m, SPOOR_DEMCR, demcr, 4, "regs.bin"));
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_WRITE_FAILED);
    assert_non_null(strstr(spoor_last_error(), "no live target"));
    spoor_mem_free(m);

    m = spoor_mem_new(); /* nothing: DEMCR's read fails, and says so */
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 1, &r), SPOOR_DWT_APPLY_WRITE_FAILED);
    assert_string_equal(spoor_last_error(), "cannot read 0xe000edfc: no live target");
    spoor_mem_free(m);
}

static void test_bad_plan(void **state)
{
    (void)state;
    spoor_reg_write w[SPOOR_ITM_WATCH_MAX_WRITES];
    size_t n = plan(SPOOR_DWT_ARMV7M, 1, w);
    spoor_mem *m = view(4);
    spoor_dwt_apply_result r;
    assert_int_equal(spoor_dwt_plan_apply(m, w, 0, 1, &r), SPOOR_DWT_APPLY_BAD_PLAN);
    assert_int_equal(spoor_dwt_plan_apply(m, w, n, 4, &r), SPOOR_DWT_APPLY_BAD_PLAN);
    assert_int_equal(spoor_dwt_plan_apply(m, w + 1, n - 1, 1, &r), SPOOR_DWT_APPLY_BAD_PLAN);
    assert_int_equal(R.nwrites, 0);
    spoor_mem_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_write),   cmocka_unit_test(test_no_comparator),
        cmocka_unit_test(test_write_refused), cmocka_unit_test(test_read_fails),
        cmocka_unit_test(test_static_layers), cmocka_unit_test(test_bad_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
