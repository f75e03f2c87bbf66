/* libFuzzer harness: spoor top's statistics engine on whatever the ITM decoder makes of any
 * bytes, and the OpenOCD reply parsers on the same bytes as text. Never a crash; and the
 * engine's books balance: in every interval the threads' time and the time with no known
 * thread add up to the interval, and no exception is active longer than the interval. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/itm_decoder.h"
#include "spoor/openocd.h"
#include "spoor/top_stats.h"

#define check(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static void on_report(void *ctx, const spoor_top_report *r)
{
    (void)ctx;
    uint64_t len = r->end - r->start, sum = r->unknown_cycles;
    check(r->end >= r->start);
    for (size_t i = 0; i < r->nthreads; i++)
        sum += r->threads[i].cycles;
    check(sum == len);
    for (size_t i = 0; i < r->nexceptions; i++) {
        const spoor_top_exc_stats *e = &r->exceptions[i];
        check(e->total <= len);
        check(!e->completed || (e->min <= e->max && e->max <= e->maxwall));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static spoor_itm_decoder d;
    /* the first byte picks the interval length and the comparator */
    uint64_t interval = size ? 1u + data[0] * 37u : 100u;
    unsigned comparator = size ? data[0] & 3u : 1u;
    spoor_top_callbacks cb = {on_report, NULL, NULL, NULL};
    spoor_top *t = spoor_top_new(interval, &cb);
    check(t != NULL);
    spoor_top_set_idle(t, 0x20000000u);
    spoor_itm_init(&d, false);
    spoor_itm_packet p;
    uint64_t last = 0;
    for (size_t i = 0; i < size;) {
        i += spoor_itm_feed(&d, data + i, size - i);
        while (spoor_itm_next(&d, &p)) {
            spoor_top_packet(t, &p, comparator);
            last = p.time > last ? p.time : last;
        }
    }
    spoor_itm_finish(&d);
    while (spoor_itm_next(&d, &p)) {
        spoor_top_packet(t, &p, comparator);
        last = p.time > last ? p.time : last;
    }
    spoor_top_finish(t, last > spoor_top_now(t) ? last : spoor_top_now(t));
    spoor_top_free(t);

    char *text = malloc(size + 1);
    check(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    uint32_t words[16];
    spoor_openocd_parse_mdw(text, 0x20000000u, words, 16);
    for (size_t count = 1; count <= 16; count *= 4)
        spoor_openocd_parse_read_memory(text, words, count);
    size_t n = spoor_openocd_strip_telnet(text, size);
    check(n <= size);
    free(text);
    return 0;
}
