/* The trace pump (spoor/trace_pump.h) on the real captures (../shared/testdata/itm) and the
 * ITM fuzz corpus (tests/fuzz/corpus_itm):
 * - the event counts per packet type equal what `spoor itm --stats` printed before the pump
 *   existed (the numbers below were printed by that build, the three copies of the receive
 *   loop in the CLI), fed whole, in odd-sized pieces and through spoor_trace_pump_run();
 * - two of them checked independently of spoor's decoder: the synchronization packets by a
 *   byte scan for their encoding (five 0x00 then 0x80: ARMv7-M ARM D4.2.1), and the data
 *   value packets, errors and last time of the SWO capture by Arm's reference decode
 *   (Blinky+Arm.SWO.csv, OpenCSD);
 * - TPIU: every ID (each with its own decoder), one ID, the deframer's counters;
 * - a reconnection mid-stream: what came before the gap is delivered before RECONNECTED, the
 *   deframer starts afresh (the frame alignment after the gap is found again), and the counts
 *   are those of the two pieces decoded apart; without the reconnection they are not;
 * - the run loop over TCP: a reconnection and a source that fails;
 * - idle, text mode, a consumer that stops the pump, a config out of range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itm_encoder.h"
#include "loopback_listener.h"
#include "spoor/error.h"
#include "spoor/trace_pump.h"

#define DIR SPOOR_SHARED_DIR "/testdata/itm/"
#define SWO DIR "cmsis-ctrace-blinky/Blinky+Arm.SWO.raw"
#define TB DIR "cmsis-ctrace-blinky/Blinky+Arm.TB.raw"
#define RUST DIR "rust-itm/itm.bin"
#define CORPUS SPOOR_SOURCE_DIR "/tests/fuzz/corpus_itm/"
#define NSTREAMS SPOOR_TRACE_PUMP_STREAMS

static size_t read_file(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    assert_true(n < cap);
    return n;
}

/* What a consumer saw. */
struct seen {
    uint64_t packets[NSTREAMS][SPOOR_ITM_TYPE_COUNT];
    uint64_t last_offset[NSTREAMS]; /* of the last packet that is not an error */
    bool out_of_order;
    size_t events, idle, reconnected, errors, ends;
    size_t packets_before_gap; /* packets delivered before the first RECONNECTED */
    size_t after_end;          /* events after END */
    uint8_t text[1 << 16];
    size_t text_len;
    size_t stop_after; /* return false at that many events (0: never) */
};

static struct seen S;

static size_t total(int stream)
{
    size_t n = 0;
    for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
        n += S.packets[stream][k];
    return n;
}

static bool record(void *ctx, const spoor_trace_pump_event *ev)
{
    struct seen *s = ctx;
    s->events++;
    if (s->ends)
        s->after_end++;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET:
        assert_true(ev->stream >= 0 && ev->stream < NSTREAMS);
        s->packets[ev->stream][ev->packet->type]++;
        if (ev->packet->type != SPOOR_ITM_ERROR) {
            if (ev->packet->offset < s->last_offset[ev->stream])
                s->out_of_order = true;
            s->last_offset[ev->stream] = ev->packet->offset;
        }
        if (!s->reconnected)
            s->packets_before_gap++;
        break;
    case SPOOR_TRACE_PUMP_TEXT:
        assert_true(s->text_len + ev->len <= sizeof s->text);
        memcpy(s->text + s->text_len, ev->text, ev->len);
        s->text_len += ev->len;
        break;
    case SPOOR_TRACE_PUMP_IDLE: s->idle++; break;
    case SPOOR_TRACE_PUMP_RECONNECTED: s->reconnected++; break;
    case SPOOR_TRACE_PUMP_ERROR: s->errors++; break;
    case SPOOR_TRACE_PUMP_END: s->ends++; break;
    }
    return !s->stop_after || s->events < s->stop_after;
}

static spoor_trace_pump *new_pump(const spoor_trace_pump_config *cfg)
{
    memset(&S, 0, sizeof S);
    spoor_trace_pump *p = spoor_trace_pump_new(cfg, record, &S);
    assert_non_null(p);
    return p;
}

/* Feeds data in pieces of chunk bytes. */
static void feed(spoor_trace_pump *p, const uint8_t *data, size_t len, size_t chunk)
{
    for (size_t off = 0; off < len; off += chunk)
        spoor_trace_pump_feed(p, data + off, len - off < chunk ? len - off : chunk);
}

/* ---- what spoor itm --stats printed before the pump ---------------------------------------- */

struct expect {
    const char *path;
    uint64_t bytes;
    uint64_t packets[SPOOR_ITM_TYPE_COUNT];
    uint64_t bytes_lost, time_first, time_last;
};

/* `spoor itm --stats FILE` of the build before the pump, for each file */
static const struct expect PLAIN[] = {
    {SWO,
     12288,
     {[SPOOR_ITM_SYNC] = 3,
      [SPOOR_ITM_TS_LOCAL] = 526,
      [SPOOR_ITM_DWT_PC] = 527,
      [SPOOR_ITM_DWT_DATA] = 527,
      [SPOOR_ITM_ERROR] = 3},
     4896,
     0,
     39449474},
    {RUST,
     139,
     {[SPOOR_ITM_SYNC] = 14, [SPOOR_ITM_TS_LOCAL] = 10, [SPOOR_ITM_EXCEPTION] = 8},
     0,
     1627,
     5533374},
    {CORPUS "gts_ext.bin",
     21,
     {[SPOOR_ITM_TS_GLOBAL1] = 1,
      [SPOOR_ITM_TS_GLOBAL2] = 2,
      [SPOOR_ITM_EXTENSION] = 2,
      [SPOOR_ITM_SW] = 1},
     0,
     0,
     0},
    {CORPUS "hw_all.bin",
     28,
     {[SPOOR_ITM_OVERFLOW] = 1,
      [SPOOR_ITM_EVENT_COUNTER] = 1,
      [SPOOR_ITM_EXCEPTION] = 1,
      [SPOOR_ITM_PC_SAMPLE] = 2,
      [SPOOR_ITM_DWT_PC] = 1,
      [SPOOR_ITM_DWT_ADDR] = 1,
      [SPOOR_ITM_DWT_DATA] = 2},
     0,
     0,
     0},
    {CORPUS "sync_in_payload.bin",
     10,
     {[SPOOR_ITM_SYNC] = 1, [SPOOR_ITM_SW] = 1, [SPOOR_ITM_ERROR] = 1},
     2,
     0,
     0},
    {CORPUS "sync_sw_ts.bin",
     15,
     {[SPOOR_ITM_SYNC] = 1, [SPOOR_ITM_TS_LOCAL] = 2, [SPOOR_ITM_SW] = 2},
     0,
     0,
     134},
    {CORPUS "tpiu_frame.bin", 22, {[SPOOR_ITM_ERROR] = 1}, 22, 0, 0},
};

/* The counters of stream s of p, and (when the packets were all delivered) the events seen,
 * against e. */
static void check_stream(const spoor_trace_pump *p, int s, const struct expect *e, bool events)
{
    const spoor_itm_stats *st = spoor_trace_pump_stats(p, s);
    assert_non_null(st);
    assert_int_equal(st->bytes, e->bytes);
    for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++) {
        assert_int_equal(st->packets[k], e->packets[k]);
        if (events)
            assert_int_equal(S.packets[s][k], e->packets[k]);
    }
    assert_int_equal(st->bytes_lost, e->bytes_lost);
    assert_int_equal(st->time_first, e->time_first);
    assert_int_equal(st->time_last, e->time_last);
}

static void test_plain_counts(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    static const size_t chunks[] = {1 << 20, 777, 1};
    for (size_t i = 0; i < sizeof PLAIN / sizeof PLAIN[0]; i++) {
        size_t n = read_file(PLAIN[i].path, buf, sizeof buf);
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            spoor_trace_pump_config cfg;
            spoor_trace_pump_config_init(&cfg);
            spoor_trace_pump *p = new_pump(&cfg);
            feed(p, buf, n, chunks[c]);
            assert_true(spoor_trace_pump_finish(p));
            check_stream(p, 0, &PLAIN[i], true);
            assert_false(S.out_of_order);
            assert_int_equal(S.ends, 1);
            assert_int_equal(S.after_end, 0);
            assert_int_equal(S.reconnected + S.idle + S.errors, 0);
            assert_null(spoor_trace_pump_stats(p, 1));
            assert_null(spoor_trace_pump_tpiu(p));
            spoor_trace_pump_free(p);
        }
    }
}

/* --stats alone: the decoders select no packet type; the counters are the same. */
static void test_counters_only(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    for (size_t i = 0; i < sizeof PLAIN / sizeof PLAIN[0]; i++) {
        size_t n = read_file(PLAIN[i].path, buf, sizeof buf);
        spoor_trace_pump_config cfg;
        spoor_trace_pump_config_init(&cfg);
        cfg.types = 0;
        spoor_trace_pump *p = new_pump(&cfg);
        feed(p, buf, n, 1000);
        spoor_trace_pump_finish(p);
        check_stream(p, 0, &PLAIN[i], false);
        assert_int_equal(total(0), 0);
        assert_int_equal(S.events, 1); /* END */
        spoor_trace_pump_free(p);
    }
}

/* The run loop over a file source gives the same. */
static void test_run_file(void **state)
{
    (void)state;
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    memset(&S, 0, sizeof S);
    spoor_trace_pump *p = spoor_trace_pump_open(SWO, 0, &cfg, record, &S);
    assert_non_null(p);
    assert_int_equal(spoor_trace_pump_run(p), SPOOR_TRACE_PUMP_DONE);
    check_stream(p, 0, &PLAIN[0], true);
    assert_int_equal(S.ends, 1);
    spoor_trace_pump_free(p);

    assert_null(spoor_trace_pump_open(DIR "no-such-capture.raw", 0, &cfg, record, &S));
    assert_non_null(strstr(spoor_last_error(), "no-such-capture.raw"));

    p = new_pump(&cfg); /* sans-I/O: nothing to run */
    assert_int_equal(spoor_trace_pump_run(p), SPOOR_TRACE_PUMP_FAILED);
    spoor_trace_pump_free(p);
}

/* Independent of spoor's decoder: synchronization packets by their encoding, five 0x00 and
 * 0x80 (ARMv7-M ARM D4.2.1; these captures have no longer runs of zeros), and the SWO
 * capture's data value packets, errors and last time by Arm's reference decode. */
static size_t scan_syncs(const uint8_t *b, size_t n)
{
    size_t count = 0;
    for (size_t i = 5; i < n; i++)
        if (b[i] == 0x80 && !b[i - 1] && !b[i - 2] && !b[i - 3] && !b[i - 4] && !b[i - 5])
            count++;
    return count;
}

static void test_independent_counts(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    for (size_t i = 0; i < 2; i++) { /* SWO and rust-itm */
        size_t n = read_file(PLAIN[i].path, buf, sizeof buf);
        spoor_trace_pump_config cfg;
        spoor_trace_pump_config_init(&cfg);
        spoor_trace_pump *p = new_pump(&cfg);
        spoor_trace_pump_feed(p, buf, n);
        spoor_trace_pump_finish(p);
        assert_int_equal(S.packets[0][SPOOR_ITM_SYNC], scan_syncs(buf, n));
        spoor_trace_pump_free(p);
    }
    /* the reference rows: dwt rows with a value (a data value packet), error rows */
    FILE *f = fopen(DIR "cmsis-ctrace-blinky/Blinky+Arm.SWO.csv", "r");
    assert_non_null(f);
    char line[512];
    size_t values = 0, errors = 0;
    uint64_t last = 0;
    while (fgets(line, sizeof line, f)) {
        char *field[5] = {line}; /* cycles,stream,type,source,value,... */
        for (int k = 1; k < 5 && field[k - 1]; k++) {
            char *comma = strchr(field[k - 1], ',');
            field[k] = comma ? comma + 1 : NULL;
            if (comma)
                *comma = '\0';
        }
        if (!field[4])
            continue;
        if (!strcmp(field[2], "dwt") && *field[4] != ',') /* a value */
            values++;
        errors += !strcmp(field[2], "error");
        uint64_t cycles = strtoull(field[0], NULL, 10);
        last = cycles > last ? cycles : last;
    }
    fclose(f);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    spoor_trace_pump *p = new_pump(&cfg);
    size_t n = read_file(SWO, buf, sizeof buf);
    spoor_trace_pump_feed(p, buf, n);
    spoor_trace_pump_finish(p);
    assert_int_equal(S.packets[0][SPOOR_ITM_DWT_DATA], values);
    assert_int_equal(S.packets[0][SPOOR_ITM_ERROR], errors);
    assert_int_equal(spoor_trace_pump_stats(p, 0)->time_last, last);
    spoor_trace_pump_free(p);
}

/* ---- TPIU ---------------------------------------------------------------------------------- */

/* `spoor itm --stats --tpiu Blinky+Arm.TB.raw` before the pump: */
static const struct expect TB1 = {TB,
                                  2093,
                                  {[SPOOR_ITM_SYNC] = 1,
                                   [SPOOR_ITM_TS_LOCAL] = 314,
                                   [SPOOR_ITM_EXCEPTION] = 165,
                                   [SPOOR_ITM_PC_SAMPLE] = 121,
                                   [SPOOR_ITM_DWT_DATA] = 26},
                                  0,
                                  3,
                                  1973372};
static const struct expect TB2 = {
    TB, 1482, {[SPOOR_ITM_TS_LOCAL] = 214, [SPOOR_ITM_EXCEPTION] = 84, [SPOOR_ITM_PC_SAMPLE] = 129},
    0,  9346, 2122669};

static void check_tb_deframer(const spoor_trace_pump *p)
{
    /* tpiu: 4096 bytes, 256 frames, 0 full syncs, 0 half syncs, 252 ID changes, 0 bytes
     * skipped; no full sync in the first 4096 bytes; frames start at offset 0 */
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(p);
    assert_non_null(t);
    assert_int_equal(t->stats.bytes, 4096);
    assert_int_equal(t->stats.frames, 256);
    assert_int_equal(t->stats.full_syncs, 0);
    assert_int_equal(t->stats.id_changes, 252);
    assert_int_equal(t->stats.skipped, 0);
    assert_int_equal(t->how, SPOOR_TPIU_ALIGN_DETECTED);
    assert_int_equal(t->alignment, 0);
}

static void test_tpiu_every_id(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    size_t n = read_file(TB, buf, sizeof buf);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.tpiu = true;
    spoor_trace_pump *p = new_pump(&cfg);
    feed(p, buf, n, 333);
    spoor_trace_pump_finish(p);
    check_tb_deframer(p);
    check_stream(p, 1, &TB1, true);
    check_stream(p, 2, &TB2, true);
    for (int s = 0; s < NSTREAMS; s++)
        if (s != 1 && s != 2) {
            assert_null(spoor_trace_pump_stats(p, s));
            assert_int_equal(total(s), 0);
        }
    assert_false(S.out_of_order);
    spoor_trace_pump_free(p);

    /* the corpus's one frame: IDs 1 and 2, each 6 bytes that decode as an error */
    n = read_file(CORPUS "tpiu_frame.bin", buf, sizeof buf);
    p = new_pump(&cfg);
    spoor_trace_pump_feed(p, buf, n);
    spoor_trace_pump_finish(p);
    const struct expect one = {NULL, 6, {[SPOOR_ITM_ERROR] = 1}, 6, 0, 0};
    check_stream(p, 1, &one, true);
    check_stream(p, 2, &one, true);
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(p);
    assert_int_equal(t->stats.bytes, 22);
    assert_int_equal(t->stats.frames, 1);
    assert_int_equal(t->stats.full_syncs, 1);
    assert_int_equal(t->stats.half_syncs, 1);
    assert_int_equal(t->stats.id_changes, 3);
    spoor_trace_pump_free(p);
}

static void test_tpiu_one_id(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    size_t n = read_file(TB, buf, sizeof buf);
    for (int id = 1; id <= 3; id++) {
        spoor_trace_pump_config cfg;
        spoor_trace_pump_config_init(&cfg);
        cfg.tpiu = true;
        cfg.tpiu_id = id;
        spoor_trace_pump *p = new_pump(&cfg);
        feed(p, buf, n, 1000);
        spoor_trace_pump_finish(p);
        check_tb_deframer(p); /* the deframer sees every ID all the same */
        for (int s = 0; s < NSTREAMS; s++) {
            if (s == id && id < 3)
                check_stream(p, s, id == 1 ? &TB1 : &TB2, true);
            else
                assert_null(spoor_trace_pump_stats(p, s));
            if (s != id)
                assert_int_equal(total(s), 0);
        }
        assert_int_equal(S.ends, 1);
        spoor_trace_pump_free(p);
    }
}

static void test_config_checked(void **state)
{
    (void)state;
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.tpiu = true;
    static const int bad_ids[] = {0, 112, -2};
    for (size_t i = 0; i < 3; i++) {
        cfg.tpiu_id = bad_ids[i];
        assert_null(spoor_trace_pump_new(&cfg, record, &S));
        assert_int_equal(spoor_last_status(), SPOOR_ERR_ARGUMENT);
    }
    cfg.tpiu_id = 111;
    cfg.tpiu_align = 16;
    assert_null(spoor_trace_pump_new(&cfg, record, &S));
    cfg.tpiu_align = 15;
    spoor_trace_pump *p = spoor_trace_pump_new(&cfg, record, &S);
    assert_non_null(p);
    spoor_trace_pump_free(p);
}

/* ---- a reconnection ------------------------------------------------------------------------- */

/* The per-stream counts of data decoded alone (every ID). */
static void counts_alone(const uint8_t *data, size_t len, bool tpiu,
                         uint64_t out[NSTREAMS][SPOOR_ITM_TYPE_COUNT])
{
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.tpiu = tpiu;
    spoor_trace_pump *p = new_pump(&cfg);
    feed(p, data, len, 500);
    spoor_trace_pump_finish(p);
    memcpy(out, S.packets, sizeof S.packets);
    spoor_trace_pump_free(p);
}

/* TB.raw in two halves with bytes lost between them: the second half starts 7 bytes into a
 * frame, so its frames start at offset 9 of it. A deframer that started afresh finds that
 * alignment again, and each stream decodes as the two halves do apart. */
static void test_tpiu_reconnect(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    size_t n = read_file(TB, buf, sizeof buf);
    const size_t cut = 2056, resume = 2071; /* 2056 = 128.5 frames; 2071 = 129 frames + 7 */
    static uint64_t first[NSTREAMS][SPOOR_ITM_TYPE_COUNT], second[NSTREAMS][SPOOR_ITM_TYPE_COUNT];
    counts_alone(buf, cut, true, first);
    counts_alone(buf + resume, n - resume, true, second);

    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.tpiu = true;
    spoor_trace_pump *p = new_pump(&cfg);
    feed(p, buf, cut, 500);
    size_t before = 0; /* packets the halves give before the gap */
    for (int s = 0; s < NSTREAMS; s++)
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            before += first[s][k];
    assert_true(S.packets_before_gap < before); /* some held until the gap */
    assert_true(spoor_trace_pump_reconnected(p));
    assert_int_equal(S.reconnected, 1);
    assert_int_equal(S.packets_before_gap, before); /* all delivered before RECONNECTED */
    const spoor_tpiu_deframer *t = spoor_trace_pump_tpiu(p);
    assert_int_equal(t->stats.bytes, 0); /* started afresh */
    assert_int_equal(t->how, SPOOR_TPIU_ALIGN_UNKNOWN);
    feed(p, buf + resume, n - resume, 500);
    spoor_trace_pump_finish(p);
    assert_int_equal(t->stats.bytes, n - resume);
    assert_int_equal(t->how, SPOOR_TPIU_ALIGN_DETECTED);
    assert_int_equal(t->alignment, 9);
    uint64_t errors = 0;
    for (int s = 0; s < NSTREAMS; s++) {
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            assert_int_equal(S.packets[s][k], first[s][k] + second[s][k]);
        errors += S.packets[s][SPOOR_ITM_ERROR];
    }
    assert_int_equal(S.ends, 1);
    /* the decoders' counters add up across the gap */
    assert_int_equal(spoor_trace_pump_stats(p, 1)->packets[SPOOR_ITM_TS_LOCAL],
                     first[1][SPOOR_ITM_TS_LOCAL] + second[1][SPOOR_ITM_TS_LOCAL]);
    spoor_trace_pump_free(p);

    /* the control: the same bytes without the reconnection keep the first half's alignment,
     * and the second half deframes into garbage */
    p = new_pump(&cfg);
    feed(p, buf, cut, 500);
    feed(p, buf + resume, n - resume, 500);
    spoor_trace_pump_finish(p);
    uint64_t errors_without = 0;
    for (int s = 0; s < NSTREAMS; s++)
        errors_without += S.packets[s][SPOOR_ITM_ERROR];
    assert_true(errors_without > errors);
    spoor_trace_pump_free(p);
}

/* A plain stream: the packet cut short by the gap is an error, the rest as decoded apart. */
static void test_plain_reconnect(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    size_t n = read_file(SWO, buf, sizeof buf);
    const size_t cut = 5000;
    static uint64_t first[NSTREAMS][SPOOR_ITM_TYPE_COUNT], second[NSTREAMS][SPOOR_ITM_TYPE_COUNT];
    counts_alone(buf, cut, false, first);
    counts_alone(buf + cut, n - cut, false, second);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    spoor_trace_pump *p = new_pump(&cfg);
    feed(p, buf, cut, 777);
    spoor_trace_pump_reconnected(p);
    feed(p, buf + cut, n - cut, 777);
    spoor_trace_pump_finish(p);
    for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
        assert_int_equal(S.packets[0][k], first[0][k] + second[0][k]);
    assert_int_equal(spoor_trace_pump_stats(p, 0)->bytes, n);
    assert_int_equal(S.reconnected, 1);
    spoor_trace_pump_free(p);
}

/* The run loop over TCP: a server (a child process) sends the SWO capture in two
 * connections and then goes away. The pump reconnects once (RECONNECTED), then the source
 * fails (no reconnection within 1 s): ERROR, then what the decoder held, then END. */
static void test_run_tcp_reconnect_and_error(void **state)
{
    (void)state;
    static uint8_t buf[1 << 16];
    size_t n = read_file(SWO, buf, sizeof buf);
    int port = 0, srv = listen_loopback(&port);
    assert_true(srv >= 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        const size_t cut = 5000; /* the first connection's bytes */
        for (int part = 0; part < 2; part++) {
            int c = accept(srv, NULL, NULL);
            if (part == 1) /* no third connection: refused once this one ends */
                close(srv);
            const uint8_t *from = part ? buf + cut : buf;
            size_t len = part ? n - cut : cut;
            for (size_t off = 0; c >= 0 && off < len;) {
                ssize_t w = write(c, from + off, len - off);
                if (w <= 0)
                    _exit(1);
                off += (size_t)w;
            }
            close(c);
        }
        _exit(0);
    }
    close(srv); /* the child closes its copy with the second connection */
    char spec[64];
    snprintf(spec, sizeof spec, "tcp:127.0.0.1:%d", port);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    memset(&S, 0, sizeof S);
    spoor_trace_pump *p = spoor_trace_pump_open(spec, 1, &cfg, record, &S);
    assert_non_null(p);
    assert_int_equal(spoor_trace_pump_run(p), SPOOR_TRACE_PUMP_FAILED);
    assert_non_null(strstr(spoor_last_error(), "no reconnection within 1 s"));
    assert_int_equal(S.reconnected, 1);
    assert_int_equal(S.errors, 1);
    assert_int_equal(S.ends, 1);
    assert_int_equal(S.after_end, 0);
    assert_int_equal(spoor_trace_pump_stats(p, 0)->bytes, n);
    /* as the two pieces decoded apart (each connection's bytes come in one write, so no pause
     * releases held packets early) */
    static struct seen got;
    got = S;
    static uint64_t first[NSTREAMS][SPOOR_ITM_TYPE_COUNT], second[NSTREAMS][SPOOR_ITM_TYPE_COUNT];
    counts_alone(buf, 5000, false, first);
    counts_alone(buf + 5000, n - 5000, false, second);
    for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
        assert_int_equal(got.packets[0][k], first[0][k] + second[0][k]);
    spoor_trace_pump_free(p);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- idle, text, stop ---------------------------------------------------------------------- */

/* Software packets with no timestamp wait in the hold queue; a pause releases them, then IDLE. */
static void test_idle_releases(void **state)
{
    (void)state;
    static itm_encoder e;
    e.len = 0;
    for (const char *s = "hello"; *s; s++) {
        enc_byte(&e, 0x01); /* port 0, one byte */
        enc_byte(&e, (uint8_t)*s);
    }
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    spoor_trace_pump *p = new_pump(&cfg);
    spoor_trace_pump_feed(p, e.buf, e.len);
    assert_int_equal(total(0), 0);
    assert_true(spoor_trace_pump_idle(p));
    assert_int_equal(S.packets[0][SPOOR_ITM_SW], 5);
    assert_int_equal(S.idle, 1);
    assert_int_equal(S.events, 6); /* the packets, then IDLE */
    spoor_trace_pump_free(p);
}

/* Text mode: the bytes of the selected ports, as the full decoder's packets carry them. */
static void test_text(void **state)
{
    (void)state;
    static itm_encoder e;
    e.len = 0;
    enc_sync(&e);
    const char *msg = "spoor says hi\n";
    for (size_t i = 0; msg[i]; i++) {
        enc_byte(&e, 0x01); /* port 0 */
        enc_byte(&e, (uint8_t)msg[i]);
        enc_byte(&e, 0x0B); /* port 1, four bytes: not selected */
        for (int k = 0; k < 4; k++)
            enc_byte(&e, 'x');
        if (i % 3 == 0)
            enc_at(&e, e.now + 10);
    }
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.text = true;
    cfg.text_ports[0] = 1u; /* port 0 */
    spoor_trace_pump *p = new_pump(&cfg);
    feed(p, e.buf, e.len, 5);
    spoor_trace_pump_finish(p);
    assert_int_equal(S.text_len, strlen(msg));
    assert_memory_equal(S.text, msg, strlen(msg));
    assert_int_equal(total(0), 0);
    assert_int_equal(spoor_trace_pump_stats(p, 0)->packets[SPOOR_ITM_SW], 2 * strlen(msg));
    spoor_trace_pump_free(p);
}

/* A consumer that says stop: no event after it, every call false, no END. */
static void test_stop(void **state)
{
    (void)state;
    static uint8_t buf[8192];
    size_t n = read_file(TB, buf, sizeof buf);
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    cfg.tpiu = true;
    spoor_trace_pump *p = new_pump(&cfg);
    S.stop_after = 100;
    assert_false(spoor_trace_pump_feed(p, buf, n));
    assert_int_equal(S.events, 100);
    assert_false(spoor_trace_pump_feed(p, buf, n));
    assert_false(spoor_trace_pump_idle(p));
    assert_false(spoor_trace_pump_reconnected(p));
    assert_false(spoor_trace_pump_finish(p));
    assert_int_equal(S.events, 100);
    assert_int_equal(S.ends + S.idle + S.reconnected, 0);
    spoor_trace_pump_free(p);

    memset(&S, 0, sizeof S); /* and through the run loop */
    S.stop_after = 10;
    p = spoor_trace_pump_open(SWO, 0, &(spoor_trace_pump_config){.types = SPOOR_ITM_ALL_TYPES},
                              record, &S);
    assert_non_null(p);
    assert_int_equal(spoor_trace_pump_run(p), SPOOR_TRACE_PUMP_STOPPED);
    assert_int_equal(S.events, 10);
    spoor_trace_pump_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_counts),
        cmocka_unit_test(test_counters_only),
        cmocka_unit_test(test_run_file),
        cmocka_unit_test(test_run_tcp_reconnect_and_error),
        cmocka_unit_test(test_independent_counts),
        cmocka_unit_test(test_tpiu_every_id),
        cmocka_unit_test(test_tpiu_one_id),
        cmocka_unit_test(test_config_checked),
        cmocka_unit_test(test_tpiu_reconnect),
        cmocka_unit_test(test_plain_reconnect),
        cmocka_unit_test(test_idle_releases),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
