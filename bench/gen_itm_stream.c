/* Writes a mixed ITM/DWT stream of a given size for bench/itm.sh: software packets (port 0
 * carries printable text for `spoor itm -c 0,%c`, other ports 2- and 4-byte values), local
 * timestamps of both formats, data trace PC + value pairs, exception trace, PC samples,
 * event counters, global timestamps and a synchronization packet every 4 KiB or so.
 * Deterministic (xorshift), so every run decodes the same bytes.
 * Mode "bursts" (default) emits what firmware emits: runs of printf characters, periodic
 * data-trace pairs, exception enter/exit/return sequences, PC samples, each followed by a
 * timestamp. Mode "random" draws every packet independently (a worst case for the branch
 * predictor, not something a target produces). Mode "printf" is printf text only: 1-byte
 * software packets on port 0, no timestamp, no sync (what `spoor itm -c 0,%c` reads from a
 * target that only prints). Mode "zeros" is mostly runs of zero bytes, as an idle SWO line or a
 * sparse capture gives: runs of 64 KiB to 1 MiB, each ending in a synchronization packet
 * (0x80) except one in eight, which the next packet header cuts short (zeros that are no sync:
 * the decoder reports the bytes up to the next sync as lost), between bursts of about 1 KiB of
 * bursts-mode packets.
 * usage: gen_itm_stream BYTES [bursts|random|printf|zeros] > FILE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Mode "zeros": a run of 64 KiB to 1 MiB zero bytes, ending in 0x80 (a sync) but one in eight
 * times; returns the bytes written. */
static size_t zero_run(void)
{
    static const uint8_t zeros[1 << 16];
    size_t run = ((size_t)1 << 16) + next() % ((1u << 20) - (1u << 16));
    for (size_t left = run; left;) {
        size_t piece = left < sizeof zeros ? left : sizeof zeros;
        fwrite(zeros, 1, piece, stdout);
        left -= piece;
    }
    if (next() % 8 != 0) {
        putchar(0x80);
        run++;
    }
    return run;
}

static int burst = 0; /* packets left in the current burst */
static uint32_t burst_kind;

/* The packet class (0..99, as in random mode) of the next packet in bursts mode. */
static uint32_t next_kind(void)
{
    static const uint32_t after[] = {0, 45, 55, 70, 82, 90};
    static int step;
    if (burst == 0) {
        uint32_t r = next() % 100;
        burst_kind = r < 40 ? 0 : r < 50 ? 1 : r < 75 ? 2 : r < 88 ? 3 : r < 97 ? 4 : 5;
        burst = burst_kind == 0 ? 16 + (int)(next() % 64) : 1 + (int)(next() % 8);
        step = 0;
    }
    burst--;
    /* every source packet is followed by a timestamp, except inside printf runs */
    uint32_t k;
    if (burst_kind == 0)
        k = burst == 0 ? 60 : 0;
    else if (step++ % 2 == 1)
        k = 60;
    else
        k = after[burst_kind] + (burst_kind == 5 ? (next() % 10) : 0);
    if (burst_kind != 0 && step % 2 == 1)
        burst++; /* the timestamp does not count as a burst packet */
    return k;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_itm_stream BYTES [bursts|random|printf|zeros] > FILE\n");
        return 2;
    }
    unsigned long long want = strtoull(argv[1], NULL, 0);
    int random_mode = argc == 3 && argv[2][0] == 'r';
    int printf_mode = argc == 3 && argv[2][0] == 'p';
    int zeros_mode = argc == 3 && argv[2][0] == 'z';
    static const char text[] = "The quick brown fox jumps over the lazy dog 0123456789.\n";
    static uint8_t buf[1 << 16];
    size_t n = 0, t = 0, since_sync = 0, since_zeros = 0;
    unsigned long long written = 0;
    if (printf_mode) { /* port 0, one character per 2-byte packet: BYTES / 2 of them */
        for (unsigned long long i = 0; i < want / 2; i++) {
            putchar(0x01);
            putchar(text[t++ % (sizeof text - 1)]);
        }
        return 0;
    }
    while (written < want) {
        uint32_t r = next(), k = random_mode ? r % 100 : next_kind();
        uint8_t *p = buf + n;
        if (since_sync >= 4096) {
            for (int i = 0; i < 5; i++)
                *p++ = 0x00;
            *p++ = 0x80;
            since_sync = 0;
        } else if (k < 45) { /* port 0, one character */
            *p++ = 0x01;
            *p++ = (uint8_t)text[t++ % (sizeof text - 1)];
        } else if (k < 55) { /* port 1..31, halfword or word */
            uint8_t port = (uint8_t)(1 + (r >> 8) % 31);
            if (r & 0x100000) {
                *p++ = (uint8_t)(port << 3 | 2);
                *p++ = (uint8_t)r;
                *p++ = (uint8_t)(r >> 8);
            } else {
                uint32_t v = next();
                *p++ = (uint8_t)(port << 3 | 3);
                for (int i = 0; i < 4; i++)
                    *p++ = (uint8_t)(v >> (8 * i));
            }
        } else if (k < 70) { /* local timestamp, format 1 (2-3 bytes) or format 2 */
            if (k < 63) {
                uint32_t ts = 200 + (r >> 8) % 20000;
                *p++ = 0xC0;
                while (ts > 0x7F) {
                    *p++ = (uint8_t)(0x80 | (ts & 0x7F));
                    ts >>= 7;
                }
                *p++ = (uint8_t)ts;
            } else {
                *p++ = (uint8_t)((1 + (r >> 8) % 6) << 4);
            }
        } else if (k < 82) { /* data trace: PC value then data value, comparator 0..3 */
            uint8_t cmp = (uint8_t)((r >> 8) & 3);
            uint32_t pc = 0x08000000u | (next() & 0xFFFEu), v = next();
            *p++ = (uint8_t)(0x47 | cmp << 4);
            for (int i = 0; i < 4; i++)
                *p++ = (uint8_t)(pc >> (8 * i));
            *p++ = (uint8_t)(0x8F | cmp << 4);
            for (int i = 0; i < 4; i++)
                *p++ = (uint8_t)(v >> (8 * i));
        } else if (k < 90) { /* exception trace */
            uint16_t num = (uint16_t)(16 + (r >> 8) % 64);
            *p++ = 0x0E;
            *p++ = (uint8_t)num;
            *p++ = (uint8_t)((1 + (r >> 20) % 3) << 4 | (num >> 8));
        } else if (k < 96) { /* PC sample, 1 in 8 asleep */
            if ((r >> 8) % 8 == 0) {
                *p++ = 0x15;
                *p++ = 0x00;
            } else {
                uint32_t pc = 0x08000000u | (next() & 0xFFFEu);
                *p++ = 0x17;
                for (int i = 0; i < 4; i++)
                    *p++ = (uint8_t)(pc >> (8 * i));
            }
        } else if (k < 98) { /* event counter */
            *p++ = 0x05;
            *p++ = (uint8_t)(1u << ((r >> 8) % 6));
        } else { /* global timestamp 1 (4 bytes) */
            uint32_t g = next() & 0x3FFFFFF;
            *p++ = 0x94;
            *p++ = (uint8_t)(0x80 | (g & 0x7F));
            *p++ = (uint8_t)(0x80 | ((g >> 7) & 0x7F));
            *p++ = (uint8_t)(0x80 | ((g >> 14) & 0x7F));
            *p++ = (uint8_t)((g >> 21) & 0x1F);
        }
        size_t len = (size_t)(p - (buf + n));
        n += len;
        since_sync += len;
        since_zeros += len;
        if (zeros_mode && since_zeros >= 1024) { /* the burst ends: the line goes idle */
            fwrite(buf, 1, n, stdout);
            written += n + zero_run();
            n = 0;
            since_zeros = 0;
            since_sync = 0;
        }
        if (n > sizeof buf - 64) {
            fwrite(buf, 1, n, stdout);
            written += n;
            n = 0;
        }
    }
    fwrite(buf, 1, n, stdout);
    return 0;
}
