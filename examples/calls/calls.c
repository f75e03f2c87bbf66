/*
 * calls: a known call graph for unwinder and symbolizer tests.
 *
 *   main -> compute_report -> level_one -> level_two -> level_three   (deepest, noinline)
 *   level_two and level_three both use mix(), a static inline function that gets inlined.
 *   main -> raise_tick pends SysTick -> SysTick_Handler -> tick_work -> mix (inlined)
 *   main -> raise_irq pends IRQ 3   -> IRQ3_Handler    -> irq_work  -> mix (inlined)
 *
 * The printed numbers follow from mix() alone, so a test can recompute them.
 */
#include <stdint.h>

#include "cortexm_regs.h"
#include "semihost.h"

#define NOINLINE __attribute__((noinline))

/* Keeps results observable so the compiler cannot drop the calls. */
volatile uint32_t calls_sink;

static volatile uint32_t tick_count;
static volatile uint32_t tick_result;
static volatile uint32_t irq_result;

static inline uint32_t mix(uint32_t a, uint32_t b)
{
    return (a * 31u) ^ (b + 7u);
}

NOINLINE uint32_t level_three(uint32_t x)
{
    uint32_t r = mix(x, x >> 1);
    calls_sink = r;
    return r + 1u;
}

NOINLINE uint32_t level_two(uint32_t x)
{
    uint32_t r = level_three(x + 1u);
    return mix(r, x);
}

NOINLINE uint32_t level_one(uint32_t x)
{
    return level_two(x * 2u) + 3u;
}

NOINLINE uint32_t compute_report(uint32_t seed)
{
    uint32_t result = level_one(seed);
    semihost_write_string("report ");
    semihost_write_decimal(seed);
    semihost_write_string(" = ");
    semihost_write_decimal(result);
    semihost_write_string("\n");
    return result;
}

NOINLINE uint32_t tick_work(uint32_t n)
{
    uint32_t r = mix(n, 5u);
    calls_sink = r;
    return r;
}

void SysTick_Handler(void)
{
    tick_result = tick_work(tick_count) + 1u;
    tick_count = tick_count + 1u;
}

NOINLINE uint32_t irq_work(uint32_t n)
{
    return mix(n, n);
}

void IRQ3_Handler(void)
{
    irq_result = irq_work(tick_result) + 2u;
}

/* Pends SysTick; the exception is taken right after the barrier, inside this function. */
NOINLINE void raise_tick(void)
{
    SCB_ICSR = SCB_ICSR_PENDSTSET;
    barrier_dsb_isb();
}

/* Enables and pends device interrupt 3 through the NVIC. */
NOINLINE void raise_irq(void)
{
    NVIC_ISER0 = 1u << 3;
    NVIC_ISPR0 = 1u << 3;
    barrier_dsb_isb();
}

int main(void)
{
    semihost_write_string("calls on " SPOOR_EXAMPLE_CPU "\n");
    uint32_t total = 0u;
    for (uint32_t seed = 1u; seed <= 3u; seed++) {
        total += compute_report(seed);
    }
    raise_tick();
    semihost_write_string("tick ");
    semihost_write_decimal(tick_count);
    semihost_write_string(" = ");
    semihost_write_decimal(tick_result);
    semihost_write_string("\n");
    raise_irq();
    semihost_write_string("irq = ");
    semihost_write_decimal(irq_result);
    semihost_write_string("\n");
    semihost_write_string("total = ");
    semihost_write_decimal(total);
    semihost_write_string("\n");
    return 0;
}
