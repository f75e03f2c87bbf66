/* MTB decoding from hand-made buffers. Each expectation follows from the MTB rules
 * (CoreSight MTB-M33/MTB-M0+ TRMs, KL27 RM 43.3.1): source word at the even word with the
 * A-bit in bit 0, destination word at the odd word with the S-bit in bit 0; POSITION.POINTER
 * [31:3] is the byte offset of the next write, WRAP [2] says every slot was written, so the
 * oldest packet is at POINTER when wrapped and at 0 otherwise; MASTER.MASK gives 2^(MASK+4)
 * bytes; the buffer starts at BASE plus the POINTER bits above MASK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/mtb_decode.h"
#include "spoor/thumb.h"

static void put(uint8_t *buf, uint32_t offset, uint32_t src_word, uint32_t dst_word)
{
    for (unsigned i = 0; i < 4; i++) {
        buf[offset + i] = (uint8_t)(src_word >> (8 * i));
        buf[offset + 4 + i] = (uint8_t)(dst_word >> (8 * i));
    }
}

/* Decodes a buffer that must decode; the packet count. */
static size_t decode_ok(const spoor_mtb_layout *l, const uint8_t *buf, size_t len,
                        spoor_mtb_packet *p)
{
    size_t n = 0;
    assert_true(spoor_mtb_decode(l, buf, len, p, &n));
    return n;
}

static void layout_fields(void **state)
{
    (void)state;
    spoor_mtb_layout l;
    /* MASK 2: 64 bytes; POINTER 0x48 -> buffer at BASE + 0x40, next write at 0x08 */
    spoor_mtb_regs r = {0x48u | 4u, 0x80000002u, 0, 0x20000000u};
    assert_true(spoor_mtb_layout_get(&r, &l));
    assert_int_equal(l.size, 64);
    assert_int_equal(l.address, 0x20000040u);
    assert_int_equal(l.write, 8);
    assert_true(l.wrapped);
    assert_true(l.enabled);
    /* MASK 0: the smallest buffer, 16 bytes */
    spoor_mtb_regs small = {0x8u, 0x0u, 0, 0x20007000u};
    assert_true(spoor_mtb_layout_get(&small, &l));
    assert_int_equal(l.size, 16);
    assert_int_equal(l.address, 0x20007000u);
    assert_false(l.wrapped);
    assert_false(l.enabled);
}

static void layout_bad(void **state)
{
    (void)state;
    spoor_mtb_layout l;
    spoor_mtb_regs misaligned = {0, 9, 0, 0x20000004u};
    assert_false(spoor_mtb_layout_get(&misaligned, &l));
    assert_non_null(strstr(spoor_last_error(), "not 8-byte aligned"));
    spoor_mtb_regs huge = {0, 31, 0, 0x20000000u};
    assert_false(spoor_mtb_layout_get(&huge, &l));
    assert_non_null(strstr(spoor_last_error(), "MASK 31"));
    spoor_mtb_regs past = {0, 9, 0, 0xFFFFF000u}; /* 8 KiB from 0xFFFFF000 */
    assert_false(spoor_mtb_layout_get(&past, &l));
    assert_non_null(strstr(spoor_last_error(), "past 4 GiB"));
}

/* Not wrapped: packets from offset 0 up to the pointer; the A/S bits come off the addresses. */
static void not_wrapped(void **state)
{
    (void)state;
    uint8_t buf[32] = {0};
    put(buf, 0, 0x20000348u, 0x2000032au | 1u); /* first packet after enabling: S */
    put(buf, 8, 0x2000034cu, 0x2000032au);
    spoor_mtb_layout l = {0x20000000u, 32, 16, false, true};
    spoor_mtb_packet p[4];
    assert_int_equal(decode_ok(&l, buf, sizeof buf, p), 2);
    assert_int_equal(p[0].src, 0x20000348u);
    assert_int_equal(p[0].dst, 0x2000032au);
    assert_true(p[0].s);
    assert_false(p[0].a);
    assert_int_equal(p[0].kind, SPOOR_MTB_BRANCH);
    assert_int_equal(p[1].offset, 8);
    assert_false(p[1].s);
}

/* Wrapped: the oldest packet is the one at the pointer, then round the end to the start. */
static void wrapped_order(void **state)
{
    (void)state;
    uint8_t buf[32];
    put(buf, 0, 0x100u, 0x200u);  /* 3rd oldest */
    put(buf, 8, 0x300u, 0x400u);  /* newest (pointer is 16) */
    put(buf, 16, 0x500u, 0x600u); /* oldest */
    put(buf, 24, 0x700u, 0x800u);
    spoor_mtb_layout l = {0x20000000u, 32, 16, true, false};
    spoor_mtb_packet p[4];
    assert_int_equal(decode_ok(&l, buf, sizeof buf, p), 4);
    uint32_t want[4] = {0x500u, 0x700u, 0x100u, 0x300u};
    for (int i = 0; i < 4; i++)
        assert_int_equal(p[i].src, want[i]);
    assert_int_equal(p[0].offset, 16);
    assert_int_equal(p[3].offset, 8);
}

/* Exception entry: A=1, source = preferred return address; exception return: two packets,
 * (BX LR -> EXC_RETURN, A=0) and (EXC_RETURN -> return address, A=1). */
static void exception_kinds(void **state)
{
    (void)state;
    uint8_t buf[32];
    put(buf, 0, 0x2000010au | 1u, 0x20000400u); /* entry: interrupted before 0x2000010a */
    put(buf, 8, 0x20000410u, 0xFFFFFFF9u);      /* BX LR at 0x20000410 to EXC_RETURN */
    put(buf, 16, 0xFFFFFFF9u, 0x2000010au);     /* A-bit is bit 0 of 0xFFFFFFF9 itself */
    put(buf, 24, 0x20000120u, 0x20000100u);
    spoor_mtb_layout l = {0x20000000u, 32, 0, true, true};
    spoor_mtb_packet p[4];
    assert_int_equal(decode_ok(&l, buf, sizeof buf, p), 4);
    assert_int_equal(p[0].kind, SPOOR_MTB_EXCEPTION_ENTRY);
    assert_true(p[0].a);
    assert_int_equal(p[0].src, 0x2000010au);
    assert_int_equal(p[1].kind, SPOOR_MTB_EXCEPTION_RETURN);
    assert_false(p[1].a);
    assert_int_equal(p[1].dst, 0xFFFFFFF8u);
    assert_true(p[1].s); /* bit 0 of the EXC_RETURN destination word reads as S */
    assert_int_equal(p[2].kind, SPOOR_MTB_EXCEPTION_RETURN);
    assert_true(p[2].a);
    assert_int_equal(p[3].kind, SPOOR_MTB_BRANCH);
    assert_string_equal(spoor_mtb_kind_name(p[2].kind), "exception_return");
}

static void bad_buffers(void **state)
{
    (void)state;
    uint8_t buf[64] = {0};
    spoor_mtb_packet p[8];
    size_t n = 99;
    spoor_mtb_layout empty = {0x20000000u, 64, 0, false, true};
    assert_false(spoor_mtb_decode(&empty, buf, sizeof buf, p, &n));
    assert_int_equal(n, 0);
    assert_non_null(strstr(spoor_last_error(), "empty"));
    spoor_mtb_layout zeros = {0x20000000u, 64, 0, true, true};
    assert_false(spoor_mtb_decode(&zeros, buf, sizeof buf, p, &n));
    assert_non_null(strstr(spoor_last_error(), "only zeros"));
    spoor_mtb_layout big = {0x20000000u, 64, 8, false, true};
    assert_false(spoor_mtb_decode(&big, buf, 32, p, &n)); /* MASK larger than the image */
    assert_non_null(strstr(spoor_last_error(), "the image holds 32"));
    spoor_mtb_layout odd = {0x20000000u, 64, 12, false, true};
    assert_false(spoor_mtb_decode(&odd, buf, sizeof buf, p, &n));
}

/* ---- the flow --------------------------------------------------------------------------- */

/* Code at 0x1000: 0x1000 movs r0,#1 (2); 0x1002 bl (4); 0x1006 adds (2); 0x1008 b.n (2);
 * 0x100a nop; ... the bytes only matter for their sizes. */
static uint8_t code[64];

static bool read_code(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx;
    if (addr < 0x1000u || addr - 0x1000u + len > sizeof code)
        return false;
    memcpy(buf, code + (addr - 0x1000u), len);
    return true;
}

struct steps {
    uint32_t pc[32];
    int kind[32];
    int n;
};

static bool collect(void *ctx, const spoor_mtb_step *s)
{
    struct steps *st = ctx;
    if (st->n < 32) {
        st->pc[st->n] = s->pc;
        st->kind[st->n] = (int)s->kind;
        st->n++;
    }
    return true;
}

static void flow_runs(void **state)
{
    (void)state;
    memset(code, 0, sizeof code);
    for (unsigned i = 0; i < sizeof code; i += 2) {
        code[i] = 0x00;
        code[i + 1] = 0xBF; /* nop (0xBF00) */
    }
    code[2] = 0x00; /* 0x1002: BL, 0xF000 0xF800 */
    code[3] = 0xF0;
    code[4] = 0x00;
    code[5] = 0xF8;
    spoor_mtb_packet p[3] = {
        {0x0F00u, 0x1000u, false, true, SPOOR_MTB_BRANCH, 0},
        {0x1002u, 0x1010u, false, false, SPOOR_MTB_BRANCH, 8},          /* the BL */
        {0x1014u, 0x1020u, true, false, SPOOR_MTB_EXCEPTION_ENTRY, 16}, /* before 0x1014 */
    };
    struct steps st = {0};
    assert_true(spoor_mtb_flow(p, 3, read_code, NULL, 0, collect, &st));
    /* packet 0; 0x1000, 0x1002 (BL, 4 bytes); packet 1; 0x1010, 0x1012; packet 2 */
    uint32_t pcs[] = {0x0F00u, 0x1000u, 0x1002u, 0x1002u, 0x1010u, 0x1012u, 0x1014u};
    int kinds[] = {SPOOR_MTB_STEP_PACKET, SPOOR_MTB_STEP_INSN, SPOOR_MTB_STEP_INSN,
                   SPOOR_MTB_STEP_PACKET, SPOOR_MTB_STEP_INSN, SPOOR_MTB_STEP_INSN,
                   SPOOR_MTB_STEP_PACKET};
    assert_int_equal(st.n, 7);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(st.pc[i], pcs[i]);
        assert_int_equal(st.kind[i], kinds[i]);
    }
    assert_true(spoor_thumb_is_call(code + 2, 4));
    assert_false(spoor_thumb_is_call(code, 2));
    const uint8_t blx_r3[2] = {0x98, 0x47}; /* 0x4798 */
    assert_true(spoor_thumb_is_call(blx_r3, 2));
}

static void flow_gaps(void **state)
{
    (void)state;
    spoor_mtb_packet p[4] = {
        {0x0F00u, 0x1010u, false, true, SPOOR_MTB_BRANCH, 0},
        {0x1008u, 0x1000u, false, false, SPOOR_MTB_BRANCH, 8},  /* source before destination */
        {0x9000u, 0x5000u, false, false, SPOOR_MTB_BRANCH, 16}, /* far after */
        {0x5004u, 0x1000u, false, false, SPOOR_MTB_BRANCH, 24}, /* unreadable code */
    };
    struct steps st = {0};
    assert_true(spoor_mtb_flow(p, 4, read_code, NULL, 0x1000u, collect, &st));
    assert_int_equal(st.n, 7);
    assert_int_equal(st.kind[1], SPOOR_MTB_STEP_GAP);
    assert_int_equal(st.kind[3], SPOOR_MTB_STEP_GAP);
    assert_int_equal(st.kind[5], SPOOR_MTB_STEP_GAP);
    assert_int_equal(st.pc[5], 0x5000u);
    /* a source in the middle of a 32-bit instruction */
    memset(code, 0, sizeof code);
    code[0] = 0x00;
    code[1] = 0xF0; /* 0x1000: 32-bit */
    spoor_mtb_packet q[2] = {{0x0F00u, 0x1000u, false, true, SPOOR_MTB_BRANCH, 0},
                             {0x1002u, 0x1000u, false, false, SPOOR_MTB_BRANCH, 8}};
    struct steps st2 = {0};
    assert_true(spoor_mtb_flow(q, 2, read_code, NULL, 0, collect, &st2));
    assert_int_equal(st2.kind[st2.n - 2], SPOOR_MTB_STEP_GAP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_fields),   cmocka_unit_test(layout_bad),
        cmocka_unit_test(not_wrapped),     cmocka_unit_test(wrapped_order),
        cmocka_unit_test(exception_kinds), cmocka_unit_test(bad_buffers),
        cmocka_unit_test(flow_runs),       cmocka_unit_test(flow_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
