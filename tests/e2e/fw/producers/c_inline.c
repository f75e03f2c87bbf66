/* C producer for the symbolizer's differential test (tests/e2e/test_sym_producers.py), built at
 * -gdwarf-2 to -gdwarf-5, with -flto (together with c_lto_peer.c) and with -gsplit-dwarf:
 * static inline functions nested two deep, a loop, a switch, a function pointer table and
 * calls into newlib (memcpy, strlen, qsort: code without DWARF, named by the symbol table).
 * Linked for the mps2-an385 memory map; it is never run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

volatile uint32_t sink;
static char buffer[64];

int peer_scale(int v); /* c_lto_peer.c */

static inline uint32_t rotate(uint32_t v, unsigned n)
{
    return (v << (n & 31)) | (v >> ((32 - n) & 31));
}

static inline uint32_t mix(uint32_t a, uint32_t b)
{
    a ^= rotate(b, 7);
    a += rotate(a, 13) * 5u;
    return a;
}

static int compare_ints(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

__attribute__((noinline)) static uint32_t checksum(const char *s)
{
    uint32_t h = 2166136261u;
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        h = mix(h, (uint8_t)s[i]);
    return h;
}

__attribute__((noinline)) int classify(int v)
{
    switch (v & 7) {
    case 0: return peer_scale(v);
    case 1: return v * 3;
    case 2: return (int)mix((uint32_t)v, 11u);
    case 3: return -v;
    case 5: return v >> 2;
    default: return v + 1;
    }
}

typedef int (*op_fn)(int);
static int op_double(int v) { return v * 2; }
static int op_square(int v) { return v * v; }
static const op_fn ops[] = {op_double, op_square, classify};

__attribute__((noinline)) void run(int rounds)
{
    int values[16];
    for (int i = 0; i < 16; i++)
        values[i] = ops[i % 3]((int)sink + i);
    qsort(values, 16, sizeof values[0], compare_ints);
    memcpy(buffer, values, sizeof buffer);
    buffer[sizeof buffer - 1] = 0;
    for (int r = 0; r < rounds; r++)
        sink = mix(sink, checksum(buffer) + (uint32_t)r);
}

void Reset_Handler(void)
{
    for (;;)
        run((int)sink & 15);
}

__attribute__((section(".vectors"), used)) void (*const vectors[])(void) = {
    (void (*)(void))0x20008000, Reset_Handler};
