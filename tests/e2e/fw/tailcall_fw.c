/* Test firmware for the tail-call test (tests/e2e/test_unwind_tailcall.py), built with -O2 so
 * that GCC turns a function's last call into a branch (`b.w callee`): the tail-calling
 * function leaves no frame and its callee returns straight to the caller's caller. Every
 * NOINLINE function below whose last statement is a call makes such a tail call. The test
 * stops in these functions, in this order:
 *   1. single_leaf:  main -> single_caller -> single_tail ~> single_leaf
 *   2. chain_leaf:   main -> chain_caller -> chain_a ~> chain_b ~> chain_c ~> chain_leaf
 *                    (chain_b may also tail-call chain_other, which leads elsewhere: one
 *                    chain still fits)
 *   3. amb_leaf:     main -> amb_caller -> amb_pick ~> amb_mid ~> amb_left ~> amb_leaf; amb_mid
 *                    could as well have gone through amb_right: two chains fit
 *   4. h_leaf:       in a handler: IRQ0_Handler -> h_work ~> h_leaf (thread code h_caller
 *                    pended IRQ0)
 *   5. x_irq_leaf:   across an exception frame: main -> x_caller -> x_tail ~> x_spin, which
 *                    pends IRQ1 and is interrupted: IRQ1_Handler -> x_irq_leaf
 * (~> is a tail call). Everything runs on MSP, which gdb follows through exception frames.
 * tests/unit/elf/test_call_sites.c reads this firmware's call sites too, and also ind_caller ->
 * ind_pick ~> ind_leaf, where ind_pick could as well tail-call through a pointer.
 * Self-contained: no library; the start-up of fw_startup.h. */
#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define NVIC_ISER0 0xE000E100u
#define NVIC_ISPR0 0xE000E200u
#define NOINLINE __attribute__((noinline, noclone))

volatile uint32_t sink, sink2;
void (*volatile hook)(uint32_t);
static volatile uint32_t irq0_seen, irq1_seen;

#include "fw_startup.h"

int main(void);
void IRQ0_Handler(void);
void IRQ1_Handler(void);

FW_VECTORS(18, [16] = IRQ0_Handler, [17] = IRQ1_Handler);

/* 1. one tail call */
NOINLINE void single_leaf(uint32_t n)
{
    sink += n;
}

NOINLINE void single_tail(uint32_t n)
{
    sink2 = n;
    single_leaf(n + 1u);
}

NOINLINE void single_caller(uint32_t n)
{
    single_tail(n * 3u);
    sink++;
}

/* 2. a chain of three tail calls, with a branch that leads elsewhere */
NOINLINE void chain_leaf(uint32_t n)
{
    sink += n * 7u;
}

NOINLINE void chain_other(uint32_t n)
{
    sink2 = n ^ 0x55u;
}

NOINLINE void chain_c(uint32_t n)
{
    sink2 = n + 4u;
    chain_leaf(n + 1u);
}

NOINLINE void chain_b(uint32_t n)
{
    sink2 = n;
    if (n > 1000u) {
        chain_other(n);
    } else {
        chain_c(n * 5u);
    }
}

NOINLINE void chain_a(uint32_t n)
{
    sink2 = n + 9u;
    chain_b(n + 2u);
}

NOINLINE void chain_caller(uint32_t n)
{
    chain_a(n);
    sink++;
}

/* 3. two chains fit: amb_mid ~> amb_left ~> amb_leaf and amb_mid ~> amb_right ~> amb_leaf */
NOINLINE void amb_leaf(uint32_t n)
{
    sink += n * 11u;
}

NOINLINE void amb_left(uint32_t n)
{
    sink2 = n + 1u;
    amb_leaf(n + 2u);
}

NOINLINE void amb_right(uint32_t n)
{
    sink2 = n * 13u;
    amb_leaf(n + 3u);
}

NOINLINE void amb_mid(uint32_t n)
{
    sink2 = n;
    if (n & 1u) {
        amb_left(n);
    } else {
        amb_right(n);
    }
}

NOINLINE void amb_pick(uint32_t n)
{
    sink2 = n * 17u;
    amb_mid(n + 4u);
}

NOINLINE void amb_caller(uint32_t n)
{
    amb_pick(n);
    sink++;
}

/* 4. a tail call in an interrupt handler */
NOINLINE void h_leaf(uint32_t n)
{
    sink += n * 19u;
}

NOINLINE void h_work(uint32_t n)
{
    sink2 = n;
    h_leaf(n + 5u);
}

void IRQ0_Handler(void)
{
    h_work(irq0_seen + 2u);
    irq0_seen = irq0_seen + 1u;
}

NOINLINE void h_caller(uint32_t n)
{
    REG32(NVIC_ISER0) = 1u;
    REG32(NVIC_ISPR0) = 1u;
    while (irq0_seen == 0u) {
        sink += n;
    }
    sink++;
}

/* 5. interrupted code that was reached by a tail call */
NOINLINE void x_irq_leaf(uint32_t n)
{
    sink += n * 23u;
}

void IRQ1_Handler(void)
{
    x_irq_leaf(irq1_seen + 3u);
    irq1_seen = irq1_seen + 1u;
}

NOINLINE void x_spin(uint32_t n)
{
    REG32(NVIC_ISER0) = 2u;
    REG32(NVIC_ISPR0) = 2u;
    while (irq1_seen == 0u) {
        sink += n;
    }
    sink2 = n;
}

NOINLINE void x_tail(uint32_t n)
{
    sink2 = n * 29u;
    x_spin(n + 6u);
}

NOINLINE void x_caller(uint32_t n)
{
    x_tail(n);
    sink++;
}

/* a tail call with no known target next to one with */
NOINLINE void ind_leaf(uint32_t n)
{
    sink += n * 5u;
}

NOINLINE void ind_pick(uint32_t n)
{
    sink2 = n;
    if (n & 2u) {
        hook(n);
    } else {
        ind_leaf(n);
    }
}

NOINLINE void ind_caller(uint32_t n)
{
    ind_pick(n);
    sink++;
}

int main(void)
{
    ind_caller(4u);
    single_caller(1u);
    chain_caller(2u);
    amb_caller(3u);
    h_caller(4u);
    x_caller(5u);
    for (;;) {
        sink++;
    }
}

void Reset_Handler(void)
{
    main();
}
