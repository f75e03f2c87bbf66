/* spoor top's explanations of an empty or partial result, each said once on stderr: a stream
 * without a thread switch (what it did carry, by packet type, which comparators matched, what
 * to check), a stream that looks TPIU-formatted but was read as plain ITM, and threads shown
 * without names because no target memory was given. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "spoor/trace_pump.h"
#include "top_cli.h"

/* "12 sync, 3 ts_local" of the decoder's counters ("none" without a packet). */
static void packet_counts(const spoor_itm_stats *st, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int t = 0; st && t < SPOOR_ITM_TYPE_COUNT && n < cap; t++)
        if (st->packets[t])
            n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu64 " %s", n ? ", " : "",
                                  st->packets[t], spoor_itm_type_name((spoor_itm_type)t));
    if (!buf[0])
        snprintf(buf, cap, "no packet");
}

static void comparator_list(unsigned seen, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < 4 && n < cap; k++)
        if (seen & 1u << k)
            n += (size_t)snprintf(buf + n, cap - n, "%s%u", n ? ", " : "", k);
    if (!buf[0])
        snprintf(buf, cap, "none");
}

bool top_stream_looks_tpiu(const spoor_trace_pump *pump)
{
    const uint8_t *head;
    size_t n = spoor_trace_pump_head(pump, &head);
    return spoor_tpiu_looks_framed(head, n);
}

int top_explain_stream(struct top_cli *c, const spoor_trace_pump *pump, bool tpiu)
{
    spoor_top_session_status ss;
    spoor_top_session_status_get(c->session, &ss);
    if (ss.any_packet && !ss.stream_timed && !ss.host_timed)
        cli_warn("top",
                 "%s: no local timestamp in the stream (ITM_TCR.TSENA is 0, or the capture "
                 "lost them): every time is 0 and only switches are counted; enable TSENA (and "
                 "DWT_CTRL.CYCCNTENA), or read the stream live (-s), where packets without "
                 "timestamps are timed by the host's clock",
                 c->spec);
    if (ss.intervals_done) /* -n reached: the stream was not read to its end */
        return 0;
    if (!spoor_trace_pump_bytes(pump))
        return cli_error("top", "%s: the stream is empty (no byte)", c->spec);
    const spoor_itm_stats *st = spoor_trace_pump_stats(pump, tpiu ? c->tpiu_id : 0);
    bool framed = !tpiu && top_stream_looks_tpiu(pump);
    if (framed && st && st->bytes_lost)
        cli_warn("top",
                 "%s: %" PRIu64 " bytes lost; the stream looks "
                 "TPIU-formatted (full syncs FF FF FF 7F, trace ID changes at 16-byte frame "
                 "boundaries): try --tpiu",
                 c->spec, st->bytes_lost);
    if (ss.any_switch)
        return 0;
    char counts[512], comps[32];
    packet_counts(st, counts, sizeof counts);
    comparator_list(ss.comparators_seen, comps, sizeof comps);
    cli_warn("top",
             "%s: no thread switch in the stream (%s; DWT comparators "
             "that matched: %s): check that comparator %u watches the current-thread pointer "
             "with a data value packet on write (--comparator N for another; --setup, "
             "docs/top.md \"Setting up the target\"), that ITM_TCR.DWTENA is set%s",
             c->spec, counts, comps, c->comparator,
             tpiu ? ", and the trace ID (--tpiu=ID)" : " and, for a TPIU-formatted stream, --tpiu");
    return 0;
}

void top_explain_host_clock(const struct top_cli *c)
{
    cli_note("top",
             "%s: no local timestamp in the stream yet (ITM_TCR.TSENA 0?): packets are timed "
             "by the host's clock at reception, not the target's, until one comes",
             c->spec);
}

void top_explain_no_memory(const struct top_cli *c)
{
    if (!c->rtos || c->target)
        return;
    cli_note("top",
             "note: no target memory given: threads are shown by TCB address, "
             "without names or the idle thread; give --mem ADDR:FILE (a RAM image), a crash dump, "
             "--gdb HOST:PORT or -W [HOST:]PORT for names, priorities and entry functions");
}
