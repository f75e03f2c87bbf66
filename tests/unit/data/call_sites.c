/* Built by tests/unit/test_call_sites.c with arm-none-eabi-gcc -O2 -g (DWARF 4 and 5): every
 * NOINLINE function whose last statement is a call makes a tail call (`b.w`), which GCC
 * describes as a call site with DW_AT_call_tail_call / DW_AT_GNU_tail_call.
 *   caller -> tail1 ~> tail2 ~> leaf                       one chain
 *   amb_caller -> amb_pick ~> amb_mid ~> amb_left|amb_right ~> amb_leaf   two chains
 *   ind_caller -> ind_pick ~> ind_leaf, or ~> (*hook)()    a tail call with no known target
 *   direct_caller -> leaf                                  no tail call */
#include <stdint.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint32_t sink, sink2;
void (*volatile hook)(uint32_t);

void Reset_Handler(void);

NOINLINE void leaf(uint32_t n)
{
    sink += n;
}

NOINLINE void tail2(uint32_t n)
{
    sink2 = n;
    leaf(n + 1u);
}

NOINLINE void tail1(uint32_t n)
{
    sink2 = n * 3u;
    tail2(n + 2u);
}

NOINLINE void caller(uint32_t n)
{
    tail1(n);
    sink++;
}

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

NOINLINE void direct_caller(uint32_t n)
{
    leaf(n);
    sink++;
}

void Reset_Handler(void)
{
    caller(1u);
    amb_caller(2u);
    ind_caller(3u);
    direct_caller(4u);
    for (;;) {
    }
}
