/* The GDB remote protocol session (spoor_rsp_session): what goes back for the bytes GDB sends.
 * Expected bytes from the GDB manual, "Overview" and "Packet Acknowledgment" of the remote
 * protocol: every packet with a good checksum is acknowledged with '+', a bad one with '-';
 * a '-' asks for the last packet again; checksum = the payload's bytes summed modulo 256
 * ("?" 0x3f; "S0b" 0x53+0x30+0x62 = 0xe5; "OK" 0x9a; "D" 0x44). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spoor/gdb_rsp.h"

static bool read_nothing(void *ctx, uint32_t addr, void *buf, size_t len)
{
    (void)ctx, (void)addr, (void)buf, (void)len;
    return false;
}

static const spoor_rsp_target target = {.signal = 11, .read = read_nothing};

/* What the server sends for one batch of received bytes, as cmd_gdbserver moves them: late
 * bytes arrive while the first packet's reply is made (before it goes out). */
typedef struct conn {
    spoor_rsp_session s;
    char sent[1024];
    size_t len;
    bool detached;
} conn;

static void put(conn *c, const spoor_rsp_io *io)
{
    assert_true(c->len + io->out_len < sizeof c->sent);
    memcpy(c->sent + c->len, io->out, io->out_len);
    c->len += io->out_len;
}

static void batch(conn *c, const char *bytes, const char *late)
{
    uint8_t in[256];
    size_t n = strlen(bytes);
    memcpy(in, bytes, n);
    for (size_t i = 0; i < n;) {
        spoor_rsp_io io;
        i += spoor_rsp_session_feed(&c->s, in + i, n - i, &io);
        put(c, &io);
        if (io.event != SPOOR_RSP_PACKET)
            continue;
        spoor_rsp_session_answer(&c->s, &io);
        if (late) {
            memcpy(in + n, late, strlen(late));
            n += strlen(late);
            late = NULL;
        }
        spoor_rsp_session_replied(&c->s, n - i);
        put(c, &io);
        c->detached = io.detach;
    }
}

static void expect(conn *c, const char *bytes)
{
    c->sent[c->len] = 0;
    assert_string_equal(c->sent, bytes);
    c->len = 0;
}

static conn *open_conn(void)
{
    static conn c;
    memset(&c, 0, sizeof c);
    spoor_rsp_session_init(&c.s, &target);
    return &c;
}

static void test_ack_then_reply(void **state)
{
    (void)state;
    conn *c = open_conn();
    batch(c, "+", NULL); /* GDB's first '+' */
    expect(c, "");
    assert_false(c->s.spoken);
    batch(c, "$?#3f", NULL);
    expect(c, "+$S0b#e5");
    assert_true(c->s.spoken);
    batch(c, "+", NULL); /* its ack of the reply: nothing */
    expect(c, "");
    batch(c, "$?", NULL); /* a packet over two receives */
    expect(c, "");
    batch(c, "#3f", NULL);
    expect(c, "+$S0b#e5");
}

static void test_bad_checksum_and_resend(void **state)
{
    (void)state;
    conn *c = open_conn();
    batch(c, "-", NULL); /* nothing sent yet: nothing to send again */
    expect(c, "");
    batch(c, "$?#00", NULL);
    expect(c, "-");
    batch(c, "$?#3f", NULL);
    expect(c, "+$S0b#e5");
    batch(c, "-", NULL); /* a refusal of the reply: it goes out again */
    expect(c, "$S0b#e5");
    batch(c, "--", NULL);
    expect(c, "$S0b#e5$S0b#e5");
}

/* A '-' that came before the reply went out is not about the reply: sent once. */
static void test_stale_nack(void **state)
{
    (void)state;
    conn *c = open_conn();
    batch(c, "$?#3f-", NULL); /* the '-' in the same receive, after the packet */
    expect(c, "+$S0b#e5");
    batch(c, "$?#3f", "-"); /* the '-' came while the reply was made */
    expect(c, "+$S0b#e5");
    batch(c, "-", NULL); /* after the reply: it goes out again */
    expect(c, "$S0b#e5");
    /* two packets in one receive: a '-' between them is stale for the first reply only */
    batch(c, "$?#3f-$?#3f", NULL);
    expect(c, "+$S0b#e5+$S0b#e5");
}

static void test_interrupt_and_detach(void **state)
{
    (void)state;
    conn *c = open_conn();
    batch(c, "\x03", NULL); /* already stopped: the stop again */
    expect(c, "$S0b#e5");
    assert_false(c->s.spoken);
    batch(c, "-", NULL);
    expect(c, "$S0b#e5");
    batch(c, "$D#44", NULL);
    expect(c, "+$OK#9a");
    assert_true(c->detached);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ack_then_reply),
        cmocka_unit_test(test_bad_checksum_and_resend),
        cmocka_unit_test(test_stale_nack),
        cmocka_unit_test(test_interrupt_and_detach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
