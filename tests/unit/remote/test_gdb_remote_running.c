/* The GDB client with a target that runs between reads (spoor_gdb_continue, spoor top -s with
 * --gdb): against a scripted in-process server in ack mode that answers 'c' as the GDB manual's
 * "Stop Reply Packets" and "Interrupts" describe: nothing until the target stops, then a stop
 * reply. Its script says what the target does once continued: runs until interrupted (0x03,
 * then T02, SIGINT's number), stops on its own (T05 at once: a breakpoint), exits (W00, then the
 * connection closes), or never answers the interrupt. Checked: the bytes the client sends ('c'
 * acknowledged, one 0x03 per halt), that reads halt it and get the memory, the counters, and
 * that each way of not halting as asked is a one-line error, not a hang. */
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

#include "loopback_listener.h"

typedef enum target_script {
    RUNS,         /* runs until interrupted */
    RUNS_PRINTS,  /* the same, with console output ('O' packets) before the stop reply */
    STOPS_ITSELF, /* "T05" right after 'c' */
    EXITS,        /* "W00" right after 'c', then the connection closes */
    DEAF,         /* never answers the interrupt */
} target_script;

typedef struct scripted_server {
    target_script script;
    int listen_fd, port;
    pthread_t thread;
    int continues, interrupts, m_packets; /* what the client sent */
    bool running;
} scripted_server;

static bool send_packet(int fd, const char *payload)
{
    char frame[2 * SPOOR_RSP_MAX_PACKET + 8];
    size_t n = spoor_rsp_frame(payload, strlen(payload), frame, sizeof frame);
    return write(fd, frame, n) == (ssize_t)n;
}

/* 'm' from a pattern: byte at address a is a's low byte plus 1 */
static void memory_reply(const char *packet, char *reply, size_t cap)
{
    unsigned a, l;
    if (sscanf(packet, "m%x,%x", &a, &l) != 2 || 2 * l + 1 > cap) {
        snprintf(reply, cap, "E01");
        return;
    }
    for (unsigned i = 0; i < l; i++)
        snprintf(reply + 2 * i, 3, "%02x", (a + i + 1) & 0xFF);
}

static void *serve(void *arg)
{
    scripted_server *s = arg;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    static spoor_rsp_parser p;
    spoor_rsp_init(&p);
    char reply[SPOOR_RSP_MAX_PACKET + 1];
    uint8_t c;
    bool ok = true;
    while (ok && read(fd, &c, 1) == 1) {
        spoor_rsp_event ev = spoor_rsp_feed(&p, c);
        if (ev == SPOOR_RSP_INTERRUPT) {
            s->interrupts++;
            if (s->running && (s->script == RUNS || s->script == RUNS_PRINTS)) {
                s->running = false;
                if (s->script == RUNS_PRINTS) /* "hi\n", then "ok\n" */
                    ok = send_packet(fd, "O68690a") && send_packet(fd, "O6f6b0a");
                ok = ok && send_packet(fd, "T02thread:01;");
            }
            continue;
        }
        if (ev != SPOOR_RSP_PACKET)
            continue;
        ok = write(fd, "+", 1) == 1;
        if (p.packet[0] == 'c') {
            s->continues++;
            s->running = true;
            if (s->script == STOPS_ITSELF) {
                s->running = false;
                ok = send_packet(fd, "T05thread:01;");
            } else if (s->script == EXITS) {
                send_packet(fd, "W00");
                break;
            }
            continue;
        }
        if (s->running) { /* a server does not take packets from a client while it runs */
            ok = send_packet(fd, "E99");
            continue;
        }
        if (!strncmp(p.packet, "qSupported", 10))
            snprintf(reply, sizeof reply, "PacketSize=1000");
        else if (!strcmp(p.packet, "?"))
            snprintf(reply, sizeof reply, "S05");
        else if (p.packet[0] == 'm') {
            s->m_packets++;
            memory_reply(p.packet, reply, sizeof reply);
        } else
            reply[0] = 0; /* not supported */
        ok = ok && send_packet(fd, reply);
    }
    close(fd);
    return NULL;
}

static spoor_gdb *start(scripted_server *s, target_script script, unsigned timeout_ms)
{
    memset(s, 0, sizeof *s);
    s->script = script;
    s->listen_fd = listen_loopback(&s->port);
    assert_true(s->listen_fd >= 0);
    pthread_create(&s->thread, NULL, serve, s);
    char hp[32];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", s->port);
    spoor_gdb *g = spoor_gdb_connect(hp, timeout_ms);
    if (!g)
        fail_msg("connect: %s", spoor_last_error());
    return g;
}

static void stop(scripted_server *s, spoor_gdb *g)
{
    spoor_gdb_close(g);
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
}

static void check_pattern(const uint8_t *b, uint32_t addr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(b[i], (addr + i + 1) & 0xFF);
}

/* continue, read (halts: one 0x03), continue, read again; reads without a continue between
 * them halt nothing; closing leaves the target running */
static void halts_for_each_batch(void **state)
{
    (void)state;
    static scripted_server s;
    spoor_gdb *g = start(&s, RUNS, 5000);
    uint8_t b[64];
    assert_true(spoor_gdb_read_memory(g, 0x20000000, b, 16)); /* halted at connect */
    assert_int_equal(s.interrupts, 0);
    for (int round = 1; round <= 3; round++) {
        assert_true(spoor_gdb_continue(g));
        assert_true(spoor_gdb_running(g));
        assert_true(spoor_gdb_continue(g)); /* already running: no second 'c' */
        assert_true(spoor_gdb_read_memory(g, 0x20000100, b, 64));
        check_pattern(b, 0x20000100, 64);
        assert_false(spoor_gdb_running(g));
        assert_true(spoor_gdb_read_memory(g, 0x20000200, b, 8)); /* same batch */
        check_pattern(b, 0x20000200, 8);
        assert_int_equal(s.interrupts, round);
        assert_int_equal(s.continues, round);
    }
    spoor_gdb_stats st;
    spoor_gdb_stats_get(g, &st);
    assert_int_equal(st.halts, 3);
    assert_int_equal(st.resumes, 3);
    assert_int_equal(st.mem_packets, 7);
    assert_int_equal(s.m_packets, 7);
    stop(&s, g); /* halted by spoor: continued on close */
    assert_int_equal(s.continues, 4);
    assert_true(s.running);
}

/* console output before the stop reply (GDB manual, "Stop Reply Packets": 'O' while the
 * target runs) is skipped, not taken for a broken connection */
static void console_output_before_stop(void **state)
{
    (void)state;
    static scripted_server s;
    spoor_gdb *g = start(&s, RUNS_PRINTS, 5000);
    uint8_t b[16];
    for (int round = 1; round <= 2; round++) {
        assert_true(spoor_gdb_continue(g));
        if (!spoor_gdb_read_memory(g, 0x20000100, b, 16))
            fail_msg("read after console output: %s", spoor_last_error());
        check_pattern(b, 0x20000100, 16);
        assert_int_equal(spoor_gdb_stop_signal(g), 2);
        assert_true(spoor_gdb_alive(g));
    }
    stop(&s, g);
}

/* continued, and given the time to stop or exit by itself: its reply is on its way before the
 * next read */
static spoor_gdb *continue_and_wait(scripted_server *s, target_script script)
{
    spoor_gdb *g = start(s, script, 5000);
    assert_true(spoor_gdb_continue(g));
    usleep(100 * 1000);
    return g;
}

/* a breakpoint while it ran: one error, then it is read as it is and never continued */
static void stops_on_its_own(void **state)
{
    (void)state;
    static scripted_server s;
    spoor_gdb *g = continue_and_wait(&s, STOPS_ITSELF);
    uint8_t b[8];
    assert_false(spoor_gdb_read_memory(g, 0x20000000, b, 8));
    assert_int_equal(spoor_last_status(), SPOOR_ERR_UNAVAILABLE);
    char want[128];
    snprintf(want, sizeof want,
             "127.0.0.1:%d: the target stopped on its own while it ran (T05thread:01;); it "
             "stays halted",
             s.port);
    assert_string_equal(spoor_last_error(), want);
    assert_int_equal(s.interrupts, 0); /* not interrupted: it had stopped */
    assert_int_equal(spoor_gdb_stop_signal(g), 5);
    assert_true(spoor_gdb_read_memory(g, 0x20000000, b, 8));
    check_pattern(b, 0x20000000, 8);
    assert_true(spoor_gdb_continue(g)); /* left halted */
    assert_int_equal(s.continues, 1);
    stop(&s, g);
    assert_int_equal(s.continues, 1);
}

/* the program exited: every later call fails with the one message */
static void exits(void **state)
{
    (void)state;
    static scripted_server s;
    spoor_gdb *g = continue_and_wait(&s, EXITS);
    uint8_t b[8];
    char want[128];
    snprintf(want, sizeof want, "127.0.0.1:%d: the target has exited (W00)", s.port);
    assert_false(spoor_gdb_read_memory(g, 0x20000000, b, 8));
    assert_string_equal(spoor_last_error(), want);
    assert_false(spoor_gdb_read_memory(g, 0x20000000, b, 8));
    assert_string_equal(spoor_last_error(), want);
    assert_false(spoor_gdb_continue(g));
    assert_string_equal(spoor_last_error(), want);
    stop(&s, g);
}

/* a server that does not stop the target: the timeout, not a hang */
static void interrupt_unanswered(void **state)
{
    (void)state;
    static scripted_server s;
    spoor_gdb *g = start(&s, DEAF, 300);
    uint8_t b[8];
    assert_true(spoor_gdb_continue(g));
    assert_false(spoor_gdb_read_memory(g, 0x20000000, b, 8));
    char want[128];
    snprintf(want, sizeof want, "127.0.0.1:%d: no reply within 300 ms", s.port);
    assert_string_equal(spoor_last_error(), want);
    assert_int_equal(s.interrupts, 1);
    stop(&s, g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(halts_for_each_batch), cmocka_unit_test(console_output_before_stop),
        cmocka_unit_test(stops_on_its_own),     cmocka_unit_test(exits),
        cmocka_unit_test(interrupt_unanswered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
