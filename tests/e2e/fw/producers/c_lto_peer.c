/* The second unit of the C producer (c_inline.c): under -flto its small functions are inlined
 * across units, so inline chains cross compilation units. */
#include <stdint.h>

extern volatile uint32_t sink;

static inline int clamp_peer(int v)
{
    return v < -100 ? -100 : v > 100 ? 100 : v;
}

int peer_scale(int v)
{
    sink += (uint32_t)v;
    return clamp_peer(v * 9 / 4);
}
