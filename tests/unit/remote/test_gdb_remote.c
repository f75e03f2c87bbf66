/* The GDB remote client: its sans-I/O parts against the GDB manual's examples and replies
 * captured from QEMU 7.2's gdbstub, and the whole client plus the live memory layer against an
 * in-process server (spoor's own request handler, gdb_rsp.c, behind a socket) that acts like
 * a stricter or odder server: a small PacketSize, QStartNoAckMode, a refused first packet
 * ('-'), run-length encoded replies, short 'm' replies and memory that ends mid-page. Memory
 * writes ('M') are answered by the test's server itself (spoor's handler, like spoor gdbserver,
 * is read-only and answers them E01): it parses them with sscanf, independently of the client. */
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "spoor/error.h"
#include "spoor/gdb_remote.h"
#include "spoor/gdb_rsp.h"
#include "spoor/memory.h"
#include "spoor/snapshot.h"

#include "loopback_listener.h"
#include "remote/gdb_remote_internal.h"

/* ---- replies ------------------------------------------------------------------------------- */

static void hex_replies(void **state)
{
    (void)state;
    uint8_t b[16];
    assert_int_equal(spoor_gdb_decode_hex_reply("0102fe7F", 8, b, sizeof b), 4);
    assert_int_equal(b[0], 0x01);
    assert_int_equal(b[2], 0xfe);
    assert_int_equal(b[3], 0x7f);
    /* GDB manual, "Overview": "0* " means the same as "0000". */
    assert_int_equal(spoor_gdb_decode_hex_reply("0* ", 3, b, sizeof b), 2);
    assert_int_equal(b[0], 0);
    assert_int_equal(b[1], 0);
    /* "ab*!": a, b, then '!' - 29 = 4 more b: six digits. */
    assert_int_equal(spoor_gdb_decode_hex_reply("ab*!", 4, b, sizeof b), 3);
    assert_memory_equal(b, "\xab\xbb\xbb", 3);
    /* "ab*\"": 5 more b, seven digits: malformed. */
    assert_int_equal(spoor_gdb_decode_hex_reply("ab*\"", 4, b, sizeof b), -1);
    assert_int_equal(spoor_gdb_decode_hex_reply("E14", 3, b, sizeof b), -1);    /* error */
    assert_int_equal(spoor_gdb_decode_hex_reply("E.boom", 6, b, sizeof b), -1); /* error */
    assert_int_equal(spoor_gdb_decode_hex_reply("012", 3, b, sizeof b), -1);    /* odd */
    assert_int_equal(spoor_gdb_decode_hex_reply("xxxx", 4, b, sizeof b), -1);   /* unavailable */
    assert_int_equal(spoor_gdb_decode_hex_reply("*!", 2, b, sizeof b), -1); /* nothing to repeat */
    assert_int_equal(spoor_gdb_decode_hex_reply("0102", 4, b, 1), -1);      /* too long */
    /* An error is "E" and exactly two digits: "E1" and "E1A2" are data. */
    assert_int_equal(spoor_gdb_decode_hex_reply("E1", 2, b, sizeof b), 1);
    assert_int_equal(spoor_gdb_decode_hex_reply("E1A2", 4, b, sizeof b), 2); /* data */
    assert_int_equal(b[0], 0xe1);
}

static void rle_marks(void **state)
{
    (void)state;
    char out[32];
    /* "a*!" with the '*' unescaped on the wire: a then 4 more; a '*' that arrived escaped
     * ("}\x0a") is data. */
    const uint8_t rle[] = {0, 1, 0}, literal[] = {0, 0, 0};
    assert_int_equal(spoor_gdb_expand_rle("a*!", 3, rle, out, sizeof out), 5);
    assert_string_equal(out, "aaaaa");
    assert_int_equal(spoor_gdb_expand_rle("a*!", 3, literal, out, sizeof out), 3);
    assert_string_equal(out, "a*!");
    assert_int_equal(spoor_gdb_expand_rle("a*~", 3, rle, out, 8), -1); /* 98 more: too long */
}

static void write_replies(void **state)
{
    (void)state;
    /* GDB manual, "Packets": 'M addr,length:XX...' answers "OK" or "E NN"; "" = unsupported */
    assert_int_equal(spoor_gdb_parse_write_reply("OK", 2), GDB_WRITE_OK);
    assert_int_equal(spoor_gdb_parse_write_reply("E0e", 3), GDB_WRITE_ERROR);
    assert_int_equal(spoor_gdb_parse_write_reply("E.denied", 8), GDB_WRITE_ERROR);
    assert_int_equal(spoor_gdb_parse_write_reply("", 0), GDB_WRITE_UNSUPPORTED);
    assert_int_equal(spoor_gdb_parse_write_reply("OKAY", 4), GDB_WRITE_MALFORMED);
    assert_int_equal(spoor_gdb_parse_write_reply("O", 1), GDB_WRITE_MALFORMED);
    assert_int_equal(spoor_gdb_parse_write_reply("E1", 2), GDB_WRITE_MALFORMED);
    assert_int_equal(spoor_gdb_parse_write_reply("S05", 3), GDB_WRITE_MALFORMED);
}

static void supported_and_stop(void **state)
{
    (void)state;
    gdb_supported s;
    /* QEMU 7.2's answer. */
    const char *qemu = "PacketSize=1000;qXfer:features:read+;vContSupported+;multiprocess+";
    assert_true(spoor_gdb_parse_supported(qemu, strlen(qemu), &s));
    assert_int_equal(s.packet_size, 4096);
    assert_true(s.xfer_features);
    assert_false(s.no_ack);
    /* OpenOCD's (src/server/gdb_server.c, gdb_query_packet). */
    const char *ocd = "PacketSize=4000;qXfer:memory-map:read-;qXfer:features:read+;"
                      "qXfer:threads:read+;QStartNoAckMode+;vContSupported+";
    assert_true(spoor_gdb_parse_supported(ocd, strlen(ocd), &s));
    assert_int_equal(s.packet_size, 0x4000);
    assert_true(s.no_ack);
    assert_true(spoor_gdb_parse_supported("", 0, &s));
    assert_int_equal(s.packet_size, 0);
    assert_false(spoor_gdb_parse_supported("E01", 3, &s));
    assert_false(spoor_gdb_parse_supported("SSH-2.0-OpenSSH", 15, &s));
    assert_false(spoor_gdb_parse_supported("PacketSize=zz", 13, &s));
    assert_false(spoor_gdb_parse_supported("PacketSize=0", 12, &s));

    int sig = -1;
    assert_int_equal(spoor_gdb_parse_stop_reply("T05thread:p01.01;", 17, &sig), 'T'); /* QEMU */
    assert_int_equal(sig, 5);
    assert_int_equal(spoor_gdb_parse_stop_reply("S0b", 3, &sig), 'S');
    assert_int_equal(sig, 11);
    assert_int_equal(spoor_gdb_parse_stop_reply("W00", 3, &sig), 'W');
    assert_int_equal(spoor_gdb_parse_stop_reply("X09", 3, &sig), 'X');
    assert_int_equal(sig, 9);
    assert_int_equal(spoor_gdb_parse_stop_reply("OK", 2, &sig), 0);
    sig = 7; /* console output: 'O', the signal untouched */
    assert_int_equal(spoor_gdb_parse_stop_reply("O68690a", 7, &sig), 'O');
    assert_int_equal(sig, 7);
    assert_int_equal(spoor_gdb_parse_stop_reply("O6", 2, &sig), 0);
    assert_int_equal(spoor_gdb_parse_stop_reply("O6x", 3, &sig), 0);
    assert_int_equal(spoor_gdb_parse_stop_reply("S5", 2, &sig), 0);
    assert_int_equal(spoor_gdb_parse_stop_reply("T", 1, &sig), 0);
}

/* ---- target descriptions ----------------------------------------------------------------------
 */

/* QEMU 7.2's documents for mps2-an386 (Cortex-M4F), as its gdbstub sent them. */
static const char qemu_target[] =
    "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"
    "<architecture>arm</architecture><xi:include href=\"arm-m-profile.xml\"/>"
    "<xi:include href=\"arm-vfp.xml\"/><xi:include href=\"system-registers.xml\"/></target>";
static const char qemu_mprofile[] =
    "<?xml version=\"1.0\"?>\n<!-- Copyright (C) 2010-2020 Free Software Foundation, Inc. -->\n"
    "<!DOCTYPE feature SYSTEM \"gdb-target.dtd\">\n"
    "<feature name=\"org.gnu.gdb.arm.m-profile\">\n"
    "  <reg name=\"r0\" bitsize=\"32\"/>\n  <reg name=\"r1\" bitsize=\"32\"/>\n"
    "  <reg name=\"r2\" bitsize=\"32\"/>\n  <reg name=\"r3\" bitsize=\"32\"/>\n"
    "  <reg name=\"r4\" bitsize=\"32\"/>\n  <reg name=\"r5\" bitsize=\"32\"/>\n"
    "  <reg name=\"r6\" bitsize=\"32\"/>\n  <reg name=\"r7\" bitsize=\"32\"/>\n"
    "  <reg name=\"r8\" bitsize=\"32\"/>\n  <reg name=\"r9\" bitsize=\"32\"/>\n"
    "  <reg name=\"r10\" bitsize=\"32\"/>\n  <reg name=\"r11\" bitsize=\"32\"/>\n"
    "  <reg name=\"r12\" bitsize=\"32\"/>\n  <reg name=\"sp\" bitsize=\"32\" type=\"data_ptr\"/>\n"
    "  <reg name=\"lr\" bitsize=\"32\"/>\n  <reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>\n"
    "  <reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/>\n</feature>\n";
static const char qemu_vfp_head[] = "<?xml version=\"1.0\"?>\n"
                                    "<feature name=\"org.gnu.gdb.arm.vfp\">\n";
/* QEMU 7.2's 'g' reply at reset of calls-m4f (gdb-multiarch's `info registers` there: sp
 * 0x20002000, lr 0xffffffff, pc 0x258, xpsr 0x41000000). */
static const char qemu_g[] = "00000000000000000000000000000000000000000000000000000000000000000"
                             "00000000000000000000000000000000000000000200020ffffffff580200000"
                             "0000041";

static void tdesc_qemu_m4f(void **state)
{
    (void)state;
    spoor_gdb_reg regs[64];
    unsigned next = 0;
    /* target.xml: no registers, three includes in order. */
    size_t pos = 0;
    gdb_tdesc_item it;
    const char *hrefs[] = {"arm-m-profile.xml", "arm-vfp.xml", "system-registers.xml"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(spoor_gdb_tdesc_next(qemu_target, strlen(qemu_target), &pos, &it),
                         GDB_TDESC_INCLUDE);
        assert_string_equal(it.href, hrefs[i]);
    }
    assert_int_equal(spoor_gdb_tdesc_next(qemu_target, strlen(qemu_target), &pos, &it),
                     GDB_TDESC_END);
    long n = spoor_gdb_parse_tdesc(qemu_mprofile, strlen(qemu_mprofile), regs, 0, 64, &next);
    assert_int_equal(n, 17);
    char vfp[4096];
    size_t len = (size_t)snprintf(vfp, sizeof vfp, "%s", qemu_vfp_head);
    for (int i = 0; i < 16; i++)
        len += (size_t)snprintf(vfp + len, sizeof vfp - len,
                                "  <reg name=\"d%d\" bitsize=\"64\" type=\"float\"/>\n", i);
    len += (size_t)snprintf(vfp + len, sizeof vfp - len,
                            "  <reg name=\"fpscr\" bitsize=\"32\" type=\"int\" "
                            "group=\"float\"/>\n</feature>\n");
    n = spoor_gdb_parse_tdesc(vfp, len, regs, (size_t)n, 64, &next);
    assert_int_equal(n, 34);
    /* xpsr is number 25 (QEMU's regnum attribute), the vfp registers follow from 26; the 'g'
     * reply QEMU sends is 68 bytes: r0-r15 and xpsr, so d0 starts at 68. */
    assert_string_equal(regs[16].name, "xpsr");
    assert_int_equal(regs[16].regnum, 25);
    assert_int_equal(regs[16].offset, 64);
    assert_string_equal(regs[17].name, "d0");
    assert_int_equal(regs[17].regnum, 26);
    assert_int_equal(regs[17].offset, strlen(qemu_g) / 2);
    assert_string_equal(regs[33].name, "fpscr");
    assert_int_equal(regs[33].regnum, 42);
    assert_int_equal(regs[33].offset, 68 + 16 * 8);

    /* The 'g' reply mapped by name. */
    spoor_regs r;
    memset(&r, 0, sizeof r);
    gdb_regs_seen seen = {0};
    for (int i = 0; i < 17; i++) {
        uint8_t b[4];
        assert_int_equal(spoor_gdb_decode_hex_reply(qemu_g + 2 * regs[i].offset, 8, b, 4), 4);
        assert_true(spoor_gdb_reg_store(&r, &seen, regs[i].name, b, 4));
    }
    const uint8_t d1[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40}; /* 1.0f, 2.0f */
    assert_true(spoor_gdb_reg_store(&r, &seen, "d1", d1, 8));
    seen.any_fp = true;
    char missing[64];
    spoor_gdb_regs_finish(&r, &seen, missing, sizeof missing);
    assert_int_equal(r.r[13], 0x20002000);
    assert_int_equal(r.r[14], 0xffffffff);
    assert_int_equal(r.r[15], 0x258);
    assert_int_equal(r.xpsr, 0x41000000);
    assert_int_equal(r.s[2], 0x3f800000);
    assert_int_equal(r.s[3], 0x40000000);
    assert_int_equal(r.have, SPOOR_HAVE_CORE); /* not FP: only d1 was given */
    assert_string_equal(missing, "msp/psp/control, fpscr/s0-s15");
    assert_false(spoor_gdb_reg_store(&r, &seen, "primask", d1, 4));
    assert_false(spoor_gdb_reg_wanted("f0"));
    assert_true(spoor_gdb_reg_wanted("MSP"));
}

static void tdesc_malformed(void **state)
{
    (void)state;
    spoor_gdb_reg regs[8];
    unsigned next = 0;
    const char *bad[] = {
        "<feature><reg name='r0' bitsize='32'/>", /* fine: unclosed <feature> is text */
        "<feature><!-- never ends <reg name='r0' bitsize='32'/>",
        "<feature><reg name='r0'/></feature>",             /* no bitsize */
        "<feature><reg bitsize='32'/></feature>",          /* no name */
        "<feature><reg name='r0' bitsize='0'/></feature>", /* zero bits */
        "<feature><reg name='r0' bitsize='32' regnum='1'/><reg name='r1' bitsize='32' "
        "regnum='1'/></feature>",                          /* a number twice */
        "<feature><reg name='r0 bitsize='32'/></feature>", /* quote */
        "<feature><reg name='r0' bitsize='32'",            /* unterminated tag */
        "<xi:include/>",                                   /* include without href */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        next = 0;
        long n = spoor_gdb_parse_tdesc(bad[i], strlen(bad[i]), regs, 0, 8, &next);
        assert_int_equal(n, i == 0 ? 1 : -1);
    }
    /* The table bound holds. */
    next = 0;
    const char *three = "<reg name='a' bitsize='8'/><reg name='b' bitsize='8'/>"
                        "<reg name='c' bitsize='8'/>";
    assert_int_equal(spoor_gdb_parse_tdesc(three, strlen(three), regs, 0, 2, &next), -1);
    /* A name too long to be one spoor knows still takes its place in 'g'. */
    next = 0;
    const char *longname = "<reg name='a_register_with_a_long_name' bitsize='12'/>"
                           "<reg name='pc' bitsize='32'/>";
    assert_int_equal(spoor_gdb_parse_tdesc(longname, strlen(longname), regs, 0, 8, &next), 2);
    assert_string_equal(regs[0].name, "");
    assert_int_equal(regs[1].offset, 2);
}

/* ---- an in-process server ----------------------------------------------------------------------
 */

#define RAM 0x20000000u
#define RAM_LEN 1000u /* ends in the middle of a 256-byte page */

typedef struct fake_server {
    int listen_fd;
    int port;
    pthread_t thread;
    uint8_t ram[RAM_LEN];
    /* behaviour */
    const char *packet_size; /* "PacketSize=..." in qSupported */
    bool offer_no_ack;
    bool nack_first;      /* answer the first packet with '-' */
    bool stop_on_connect; /* QEMU with a running machine: an unsolicited "T02" at accept */
    /* the n-th 'm' (from 1; 0: none) is taken and answered, but its '+' reaches the client as
     * '-' (line noise): the client sends it again, and that copy is answered too, late (after
     * 200 ms: the client has moved on to its next request by then) */
    int answer_twice_m;
    enum {
        WRITES_REFUSED,
        WRITES_DONE,
        WRITES_UNSUPPORTED
    } writes; /* 'M': E01 (spoor's handler), OK, "" */
    /* counters */
    int m_packets;
    unsigned largest_m;
    int nacks_sent;
    int M_packets;
    unsigned largest_M;
    char first_M[64]; /* the first 'M' packet's start */
} fake_server;

/* An 'M' packet, parsed here (GDB manual: "M addr,length:XX..."), into s->ram. */
static void fake_write(fake_server *s, const char *packet, char *reply, size_t cap)
{
    unsigned addr, len;
    int at = 0;
    s->M_packets++;
    if (!s->first_M[0])
        snprintf(s->first_M, sizeof s->first_M, "%.*s", (int)sizeof s->first_M - 1, packet);
    if (s->writes == WRITES_UNSUPPORTED) {
        reply[0] = 0;
        return;
    }
    if (sscanf(packet, "M%x,%x:%n", &addr, &len, &at) != 2 || !at ||
        strlen(packet + at) != 2 * (size_t)len) {
        snprintf(reply, cap, "E02");
        return;
    }
    if (len > s->largest_M)
        s->largest_M = len;
    if (addr < RAM || addr - RAM > RAM_LEN || len > RAM_LEN - (addr - RAM)) {
        snprintf(reply, cap, "E0e");
        return;
    }
    for (unsigned i = 0; i < len; i++) {
        unsigned b;
        sscanf(packet + at + 2 * i, "%2x", &b);
        s->ram[addr - RAM + i] = (uint8_t)b;
    }
    snprintf(reply, cap, "OK");
}

static bool fake_read(void *ctx, uint32_t addr, void *buf, size_t len)
{
    fake_server *s = ctx;
    if (addr < RAM || addr - RAM > RAM_LEN || len > RAM_LEN - (addr - RAM))
        return false;
    memcpy(buf, s->ram + (addr - RAM), len);
    return true;
}

/* Frames reply, with run-length encoding of runs of 4 or more equal characters. */
static size_t frame_rle(const char *reply, char *out, size_t cap)
{
    char enc[SPOOR_RSP_MAX_PACKET * 2];
    size_t n = 0;
    for (size_t i = 0; reply[i];) {
        size_t run = 1;
        while (reply[i + run] == reply[i] && run < 98)
            run++;
        /* repeat counts 6 and 7 would be '#' and '$' (not allowed): send a shorter run */
        if (run >= 4 && run - 1 + 29 != '#' && run - 1 + 29 != '$' && reply[i] != '*' &&
            reply[i] != '}' && reply[i] != '#' && reply[i] != '$') {
            enc[n++] = reply[i];
            enc[n++] = '*';
            enc[n++] = (char)(run - 1 + 29);
            i += run;
        } else {
            enc[n++] = reply[i++];
        }
    }
    /* spoor_rsp_frame would escape the '*'s: frame by hand (the payload needs no escapes). */
    uint8_t sum = 0;
    size_t o = 0;
    out[o++] = '$';
    for (size_t i = 0; i < n && o + 4 < cap; i++) {
        out[o++] = enc[i];
        sum += (uint8_t)enc[i];
    }
    o += (size_t)snprintf(out + o, cap - o, "#%02x", sum);
    return o;
}

static void *serve(void *arg)
{
    fake_server *s = arg;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    if (s->stop_on_connect && write(fd, "$T02#b6", 7) != 7) {
        close(fd);
        return NULL;
    }
    static spoor_rsp_parser p;
    spoor_rsp_init(&p);
    spoor_rsp_target t = {.signal = 5, .read = fake_read, .ctx = s};
    for (int i = 0; i < 16; i++)
        t.regs.r[i] = 0x11111111u * (uint32_t)(i % 15);
    t.regs.r[13] = RAM + 0x100;
    t.regs.xpsr = 0x01000000;
    bool no_ack = false, first = true, late = false;
    int m_seen = 0;
    char reply[SPOOR_RSP_MAX_PACKET + 1], frame[2 * SPOOR_RSP_MAX_PACKET + 8];
    uint8_t c;
    while (read(fd, &c, 1) == 1) {
        if (spoor_rsp_feed(&p, c) != SPOOR_RSP_PACKET)
            continue;
        if (first && s->nack_first) {
            first = false;
            s->nacks_sent++;
            if (write(fd, "-", 1) != 1)
                break;
            continue;
        }
        first = false;
        bool twice = p.packet[0] == 'm' && ++m_seen == s->answer_twice_m;
        if (late) { /* the copy sent again: answered after the client went on */
            late = false;
            m_seen--;
            usleep(200000);
        }
        late = twice;
        if (!no_ack && write(fd, twice ? "-" : "+", 1) != 1)
            break;
        bool detach;
        if (!strncmp(p.packet, "qSupported", 10))
            snprintf(reply, sizeof reply, "%s;qXfer:features:read+%s", s->packet_size,
                     s->offer_no_ack ? ";QStartNoAckMode+" : "");
        else if (!strcmp(p.packet, "QStartNoAckMode"))
            snprintf(reply, sizeof reply, "OK");
        else if (p.packet[0] == 'M' && s->writes != WRITES_REFUSED)
            fake_write(s, p.packet, reply, sizeof reply);
        else
            spoor_rsp_handle(&t, p.packet, reply, sizeof reply, &detach);
        if (p.packet[0] == 'm') {
            s->m_packets++;
            unsigned a, l;
            if (sscanf(p.packet, "m%x,%x", &a, &l) == 2 && l > s->largest_m)
                s->largest_m = l;
        }
        size_t n = frame_rle(reply, frame, sizeof frame);
        if (write(fd, frame, n) != (ssize_t)n)
            break;
        if (!strcmp(p.packet, "QStartNoAckMode"))
            no_ack = true;
    }
    close(fd);
    return NULL;
}

static void start_server(fake_server *s)
{
    s->listen_fd = listen_loopback(&s->port);
    assert_true(s->listen_fd >= 0);
    for (unsigned i = 0; i < RAM_LEN; i++)
        s->ram[i] = (uint8_t)(i * 7 + (i >> 8));
    memset(s->ram + 300, 0, 64); /* a run the server run-length encodes */
    pthread_create(&s->thread, NULL, serve, s);
}

static void stop_server(fake_server *s)
{
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
}

static spoor_gdb *connect_to(fake_server *s)
{
    char hp[32];
    /* by number: a minimal system (a fresh chroot) may have no /etc/hosts to name localhost */
    snprintf(hp, sizeof hp, "127.0.0.1:%d", s->port);
    spoor_gdb *g = spoor_gdb_connect(hp, 5000);
    if (!g)
        fail_msg("connect: %s", spoor_last_error());
    return g;
}

/* A '+' that reaches the client as '-': it sends the request again, and the server, which took
 * the first copy, answers both, the second late. The late copy is the reply to that request,
 * not to the next one: each read gets its own bytes. */
static void client_request_answered_twice(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=1000", .answer_twice_m = 1};
    start_server(&s);
    spoor_gdb *g = connect_to(&s);
    uint8_t a[16], b[16];
    assert_true(spoor_gdb_read_memory(g, RAM, a, sizeof a));
    assert_memory_equal(a, s.ram, sizeof a);
    assert_true(spoor_gdb_read_memory(g, RAM + 64, b, sizeof b)); /* not a's bytes again */
    assert_memory_equal(b, s.ram + 64, sizeof b);
    assert_true(spoor_gdb_read_memory(g, RAM + 128, b, sizeof b));
    assert_memory_equal(b, s.ram + 128, sizeof b);
    assert_int_equal(s.m_packets, 4); /* the first read's two copies, then one each */
    spoor_gdb_close(g);
    stop_server(&s);
}

static void client_small_packets(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=100", .nack_first = true};
    start_server(&s);
    spoor_gdb *g = connect_to(&s);
    assert_int_equal(s.nacks_sent, 1); /* qSupported was sent again */
    assert_int_equal(spoor_gdb_packet_size(g), 0x100);
    assert_int_equal(spoor_gdb_max_read(g), 0x80);
    spoor_regs r;
    char missing[64];
    assert_true(spoor_gdb_read_registers(g, &r, missing, sizeof missing));
    assert_int_equal(r.r[13], RAM + 0x100);
    assert_int_equal(r.r[5], 0x55555555);
    assert_int_equal(r.xpsr, 0x01000000);
    assert_int_equal(r.have, SPOOR_HAVE_CORE);
    assert_string_equal(missing, "msp/psp/control");

    /* 1000 bytes at 128 per packet: ceil(1000/128) = 8 packets, run-length encoded zeros
     * included. */
    uint8_t buf[RAM_LEN];
    int before = s.m_packets;
    assert_true(spoor_gdb_read_memory(g, RAM, buf, RAM_LEN));
    assert_int_equal(s.m_packets - before, 8);
    assert_memory_equal(buf, s.ram, RAM_LEN);
    assert_true(s.largest_m <= 0x80);

    /* Through the page cache: a 600-byte read is 3 pages = 768 bytes = 6 packets; read again,
     * nothing. */
    spoor_mem *m = spoor_mem_new();
    assert_true(spoor_mem_add_gdb(m, g));
    before = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 16, buf, 600));
    assert_memory_equal(buf, s.ram + 16, 600);
    assert_int_equal(s.m_packets - before, 6);
    before = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 20, buf, 500));
    assert_int_equal(s.m_packets - before, 0);
    spoor_mem_stats st;
    spoor_mem_stats_get(m, &st);
    assert_int_equal(st.round_trips, 6);
    assert_int_equal(st.bytes_wire, 768);
    assert_int_equal(st.cache_misses, 3);
    assert_int_equal(st.cache_hits, 3);
    spoor_mem_invalidate(m);
    before = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 20, buf, 4));
    assert_int_equal(s.m_packets - before, 2); /* one 256-byte page, 128 per packet */
    spoor_mem_free(m);
    spoor_gdb_close(g);
    stop_server(&s);
}

/* A live snapshot with a --mem image on top: the image's bytes are read, not the server's (the
 * live target can answer any address, so it is the last layer), and nothing goes over the wire
 * for them. */
static void snapshot_image_over_live(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=1000", .offer_no_ack = true};
    start_server(&s);
    char path[] = "/tmp/spoor-test-image-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    uint8_t image[64];
    memset(image, 0xA5, sizeof image);
    assert_int_equal(write(fd, image, sizeof image), (ssize_t)sizeof image);
    close(fd);
    char hp[32];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", s.port);
    spoor_raw_memory mem = {.address = RAM + 0x40, .path = path};
    spoor_snapshot_source src = {.gdb = hp, .mems = &mem, .nmems = 1};
    spoor_snapshot *snap = spoor_snapshot_open(&src, NULL);
    if (!snap)
        fail_msg("snapshot: %s", spoor_last_error());
    uint8_t buf[64];
    int before = s.m_packets;
    assert_true(spoor_mem_read(snap->mem, RAM + 0x40, buf, sizeof buf));
    assert_memory_equal(buf, image, sizeof image);
    assert_int_equal(s.m_packets - before, 0);
    /* outside the image: the live target */
    assert_true(spoor_mem_read(snap->mem, RAM + 0x100, buf, 8));
    assert_memory_equal(buf, s.ram + 0x100, 8);
    assert_true(s.m_packets - before > 0);
    spoor_snapshot_close(snap);
    unlink(path);
    stop_server(&s);
}

/* Connecting to QEMU while its machine runs: the gdbstub stops it and sends "T02" before any
 * request; the client takes it as the stop it is and reads qSupported's reply after it. */
static void client_unsolicited_stop(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=1000", .stop_on_connect = true};
    start_server(&s);
    spoor_gdb *g = connect_to(&s);
    assert_int_equal(spoor_gdb_packet_size(g), 0x1000);
    uint8_t buf[8];
    assert_true(spoor_gdb_read_memory(g, RAM, buf, sizeof buf));
    assert_memory_equal(buf, s.ram, sizeof buf);
    spoor_gdb_close(g);
    stop_server(&s);
}

static void client_end_of_ram(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=1000", .offer_no_ack = true};
    start_server(&s);
    spoor_gdb *g = connect_to(&s);
    spoor_mem *m = spoor_mem_new();
    assert_true(spoor_mem_add_gdb(m, g));
    uint8_t buf[64];
    /* The last page (0x20000300..0x200003ff) holds 0x3e8 - 0x300 = 232 readable bytes: the
     * page read fails, the 8 bytes that end RAM are read exactly. */
    assert_true(spoor_mem_read(m, RAM + RAM_LEN - 8, buf, 8));
    assert_memory_equal(buf, s.ram + RAM_LEN - 8, 8);
    /* Four bytes past the end: refused, the message names the first address not read. */
    assert_false(spoor_mem_read(m, RAM + RAM_LEN - 4, buf, 8));
    assert_non_null(strstr(spoor_last_error(), "0x200003e8"));
    /* The neighbour page below is not poisoned: cached whole, then free. */
    assert_true(spoor_mem_read(m, RAM + 0x2f0, buf, 32));
    assert_memory_equal(buf, s.ram + 0x2f0, 32);
    int before = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 0x200, buf, 64));
    assert_int_equal(s.m_packets - before, 0);
    /* Device space is read exactly as asked, never cached. */
    before = s.m_packets;
    assert_false(spoor_mem_read(m, 0x40000000u, buf, 4));
    assert_false(spoor_mem_read(m, 0x40000000u, buf, 4));
    assert_int_equal(s.m_packets - before, 2);
    spoor_mem_free(m);
    spoor_gdb_close(g);
    stop_server(&s);
}

static void client_writes(void **state)
{
    (void)state;
    static fake_server s = {.packet_size = "PacketSize=100", .writes = WRITES_DONE};
    start_server(&s);
    spoor_gdb *g = connect_to(&s);
    /* PacketSize 0x100: 256 - 23 ("$M" 8 digits "," 8 digits ":" "#cs") = 233, 116 bytes */
    assert_int_equal(spoor_gdb_max_write(g), 116);
    const uint8_t word[4] = {0xde, 0xad, 0xbe, 0xef};
    assert_true(spoor_gdb_write_memory(g, RAM + 8, word, 4));
    assert_string_equal(s.first_M, "M20000008,4:deadbeef");
    assert_memory_equal(s.ram + 8, word, 4);
    /* 300 bytes: ceil(300 / 116) = 3 packets, none above 116 bytes */
    uint8_t big[300];
    for (unsigned i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(0x5a ^ i);
    int before = s.M_packets;
    assert_true(spoor_gdb_write_memory(g, RAM + 500, big, sizeof big));
    assert_int_equal(s.M_packets - before, 3);
    assert_int_equal(s.largest_M, 116);
    assert_memory_equal(s.ram + 500, big, sizeof big);
    spoor_gdb_stats gs;
    spoor_gdb_stats_get(g, &gs);
    assert_int_equal(gs.mem_write_packets, 4);
    assert_int_equal(gs.mem_write_bytes, 304);
    /* Past the end of RAM: the server's error names the address of the refused packet. */
    assert_false(spoor_gdb_write_memory(g, RAM + RAM_LEN - 2, word, 4));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_UNAVAILABLE);
    assert_non_null(strstr(spoor_last_error(), "0x200003e6 (4 bytes) cannot be written (E0e)"));

    /* Through the memory view: a cached page takes the written bytes (no 'm' to read them
     * back), and the write is counted. */
    spoor_mem *m = spoor_mem_new();
    assert_true(spoor_mem_add_gdb(m, g));
    uint8_t buf[16];
    assert_true(spoor_mem_read(m, RAM + 0x100, buf, 16));
    const uint8_t other[4] = {1, 2, 3, 4};
    assert_true(spoor_mem_write(m, RAM + 0x104, other, 4));
    assert_memory_equal(s.ram + 0x104, other, 4);
    int reads = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 0x100, buf, 16));
    assert_int_equal(s.m_packets, reads);
    assert_memory_equal(buf + 4, other, 4);
    assert_memory_equal(buf, s.ram + 0x100, 16);
    spoor_mem_stats st;
    spoor_mem_stats_get(m, &st);
    assert_int_equal(st.writes, 1);
    assert_int_equal(st.write_packets, 1);
    assert_int_equal(st.bytes_written, 4);
    /* A refused write drops the cache: the page is read again. */
    assert_false(spoor_mem_write(m, RAM + RAM_LEN - 2, other, 4));
    reads = s.m_packets;
    assert_true(spoor_mem_read(m, RAM + 0x100, buf, 16));
    assert_int_equal(s.m_packets - reads, 2); /* one page, 128 bytes a packet */
    spoor_mem_free(m);

    /* An image in front of the live target would hide the write: refused, nothing sent. */
    m = spoor_mem_new();
    assert_true(spoor_mem_add_bytes(m, RAM + 0x200, big, 16, "regs.bin"));
    assert_true(spoor_mem_add_gdb(m, g));
    before = s.M_packets;
    assert_false(spoor_mem_write(m, RAM + 0x1fe, other, 4));
    assert_string_equal(spoor_last_error(),
                        "cannot write 4 bytes at 0x200001fe: 0x20000200 is held by regs.bin, "
                        "not the live target");
    assert_true(spoor_mem_write(m, RAM + 0x1fc, other, 4)); /* just below it: live */
    assert_int_equal(s.M_packets - before, 1);
    spoor_mem_free(m);
    /* No live layer at all. */
    m = spoor_mem_new();
    assert_true(spoor_mem_add_bytes(m, RAM, big, 16, NULL));
    assert_false(spoor_mem_write(m, RAM, other, 4));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_UNAVAILABLE);
    assert_string_equal(spoor_last_error(), "cannot write 4 bytes at 0x20000000: no live target "
                                            "(dumps, images and the ELF are read-only)");
    spoor_mem_free(m);
    spoor_gdb_close(g);
    stop_server(&s);
}

static void client_write_refused(void **state)
{
    (void)state;
    const uint8_t word[4] = {1, 2, 3, 4};
    /* spoor's own handler (spoor gdbserver serves a dump: read-only) answers 'M' with E01 */
    static fake_server ro = {.packet_size = "PacketSize=1000"};
    start_server(&ro);
    spoor_gdb *g = connect_to(&ro);
    assert_false(spoor_gdb_write_memory(g, RAM, word, 4));
    assert_non_null(strstr(spoor_last_error(), "0x20000000 (4 bytes) cannot be written (E01)"));
    assert_memory_not_equal(ro.ram, word, 4);
    spoor_gdb_close(g);
    stop_server(&ro);
    /* a server without 'M' answers "" */
    static fake_server none = {.packet_size = "PacketSize=1000", .writes = WRITES_UNSUPPORTED};
    start_server(&none);
    g = connect_to(&none);
    assert_false(spoor_gdb_write_memory(g, RAM, word, 4));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_UNSUPPORTED);
    assert_non_null(strstr(spoor_last_error(), "does not write memory"));
    assert_int_equal(none.M_packets, 1);
    spoor_gdb_close(g);
    stop_server(&none);
}

static void client_refused(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t alen = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &alen);
    char hp[32];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", ntohs(a.sin_port));
    close(fd); /* bound, never listened: nothing there */
    assert_null(spoor_gdb_connect(hp, 1000));
    char want[64];
    snprintf(want, sizeof want, "%s: connection refused", hp);
    assert_string_equal(spoor_last_error(), want);
    assert_null(spoor_gdb_connect("nocolon", 1000));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_ARGUMENT);
    assert_null(spoor_gdb_connect("host:99999", 1000));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hex_replies),
        cmocka_unit_test(rle_marks),
        cmocka_unit_test(supported_and_stop),
        cmocka_unit_test(tdesc_qemu_m4f),
        cmocka_unit_test(tdesc_malformed),
        cmocka_unit_test(client_small_packets),
        cmocka_unit_test(client_end_of_ram),
        cmocka_unit_test(snapshot_image_over_live),
        cmocka_unit_test(client_unsolicited_stop),
        cmocka_unit_test(client_request_answered_twice),
        cmocka_unit_test(client_refused),
        cmocka_unit_test(write_replies),
        cmocka_unit_test(client_writes),
        cmocka_unit_test(client_write_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
